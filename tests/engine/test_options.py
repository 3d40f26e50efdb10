"""The options draw_one and end_on_empty_pile (docs/rules.md, "Options"), with R11 and R12 applying as usual."""

from __future__ import annotations

import pytest

from referee.engine import (
    DRAW_PILE,
    Choice,
    Draw,
    Drew,
    EndReason,
    GameOver,
    IllegalAction,
    Kind,
    Options,
    Refilled,
    Skipped,
    TurnStarted,
    apply,
)

from .helpers import group, make_state, of_type, run

DRAW_ONE = Options(draw_one=True)
END_ON_EMPTY_PILE = Options(end_on_empty_pile=True)


def test_draw_one_offered_when_nobody_was_abluxxed() -> None:
    s = make_state(hands=["9,1", "1"], stacks=[[], ["9"]], market="2,2,3,4,5,6", pile_top="7", options=DRAW_ONE)
    s, events = apply(s, group("9"))
    assert (s.kind, s.seat) == (Kind.DRAW_ONE, 0)
    assert s.legal == (Draw(2), Draw(3), Draw(4), Draw(5), Draw(6), DRAW_PILE, Choice.SKIP)
    assert not of_type(events, TurnStarted)
    drawn, events = apply(s, Draw(3))
    assert events == [Drew(0, 3, True), Refilled((7,)), TurnStarted(1, 2)]  # R11 refill after the draw
    assert drawn.hands[0][3] == 1
    skipped, events = apply(s, Choice.SKIP)
    assert events == [Skipped(0), TurnStarted(1, 2)]
    assert skipped.hands == s.hands and skipped.market == s.market


def test_draw_one_not_offered_after_an_abluxx_even_a_reclaimed_one() -> None:
    s = make_state(hands=["9,1", "1"], stacks=[[], ["8"]], options=DRAW_ONE)
    s, events = run(s, group("9"), Choice.DECLINE, Choice.RECLAIM)
    assert events[-1] == TurnStarted(1, 2) and s.kind is Kind.PLAY


def test_draw_one_is_off_by_default() -> None:
    s = make_state(hands=["9,1", "1"], stacks=[[], ["9"]])
    s, events = apply(s, group("9"))
    assert events[-1] == TurnStarted(1, 2)
    with pytest.raises(IllegalAction):
        apply(make_state(hands=["9,1", "1"]), Choice.SKIP)


def test_draw_one_last_market_card_with_empty_pile_ends_the_game_r12() -> None:
    s = make_state(hands=["9,1", "1"], market="5", pile="", options=DRAW_ONE)
    s, _ = apply(s, group("9"))
    assert s.legal == (Draw(5), Choice.SKIP)
    s, events = apply(s, Draw(5))
    assert s.over and s.end_reason is EndReason.EXHAUSTED
    assert events == [Drew(0, 5, True), GameOver(EndReason.EXHAUSTED, (1 - 2, -1))]


def test_draw_one_no_draw_after_an_empty_hand_r7() -> None:
    s = make_state(hands=["9", "1"], options=DRAW_ONE)
    s, _ = apply(s, group("9"))
    assert s.over and s.end_reason is EndReason.EMPTY_HAND


def test_end_on_empty_pile_ends_mid_draw() -> None:
    """The victim draws the last pile card with 2 still to draw: the game ends, the market still holds cards."""
    layout = {"hands": ["9,9,9,1", "1", "1"], "stacks": [[], ["2,2,2"], ["3,3,3"]], "pile": "10"}
    s = make_state(**layout, options=END_ON_EMPTY_PILE)
    s, events = run(s, group("9,9,9"), Choice.TAKE, DRAW_PILE)
    # Seat 0: 3 in stack, 1 + 3 taken in hand; seat 1: 1 + 1 drawn in hand; seat 2 is never checked.
    assert events[-2:] == [Drew(1, 10, False), GameOver(EndReason.PILE_EMPTY, (3 - 4, -2, 3 - 1))]
    assert s.over and sum(s.market) == 6
    # Without the option the draw goes on from the market.
    s, events = run(make_state(**layout), group("9,9,9"), Choice.TAKE, DRAW_PILE)
    assert not s.over and DRAW_PILE not in s.legal and s.to_draw == 2


def test_end_on_empty_pile_ends_when_a_refill_empties_the_pile() -> None:
    s = make_state(hands=["9,1", "1"], stacks=[[], ["2"]], market="3,4,5,6,7,8", pile="10", options=END_ON_EMPTY_PILE)
    s, events = run(s, group("9"), Choice.TAKE, Draw(3))
    assert events[-2:] == [Refilled((10,)), GameOver(EndReason.PILE_EMPTY, (1 - 2, -2))]
    assert s.over and sum(s.market) == 6


def test_end_on_empty_pile_off_by_default_game_goes_on() -> None:
    s = make_state(hands=["9,1", "1"], stacks=[[], ["2"]], market="3,4,5,6,7,8", pile="10")
    s, events = run(s, group("9"), Choice.TAKE, Draw(3))
    assert events[-2:] == [Refilled((10,)), TurnStarted(1, 2)]
    assert s.pile_size == 0 and not s.over
