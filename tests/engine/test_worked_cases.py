"""The worked cases 1-8 of RULES.md, one test each."""

from __future__ import annotations

import random

import pytest

from referee.engine import (
    DECK_SIZE,
    Abluxxed,
    Choice,
    Draw,
    Drew,
    EndReason,
    GameOver,
    Kind,
    Played,
    Refilled,
    TurnStarted,
    apply,
    deck_from_seed,
    new_game,
    scores,
)

from .helpers import FULL_COUNTS, card_counts, group, make_state, of_type, run

A, B, C = 0, 1, 2


def test_worked_case_1_count_must_match_r8() -> None:
    """A's 5,5,5 is abluxxed by C's 7,7,7; B's 10,10,10,10 is not (count 4 != 3)."""
    s = make_state(hands=["1,1", "2,2", "7,7,7,2"], stacks=[["5,5,5"], ["10,10,10,10"], []], active=C)
    s, events = apply(s, group("7,7,7"))
    assert events == [Played(C, group("7,7,7")), Abluxxed(C, A, group("5,5,5"))]
    assert (s.kind, s.seat, s.victim) == (Kind.TAKE_OR_DECLINE, C, A)
    s, events = run(s, Choice.DECLINE, Choice.RECLAIM)
    assert not of_type(events, Abluxxed)  # B was checked after A and not abluxxed
    assert events[-1] == TurnStarted(A, 2)
    assert s.stacks[B] == (group("10,10,10,10"),)


@pytest.mark.parametrize(
    ("played", "top", "hit"),
    [("X,X", "13,13", True), ("13,X", "13,13", False), ("X,X", "X,X", False)],
    ids=["XX-beats-13,13", "13X-ties-13,13", "XX-ties-XX"],
)
def test_worked_case_2_joker_values_r6(played: str, top: str, hit: bool) -> None:
    """X,X abluxxes 13,13; 13,X does not (equal value); X,X does not abluxx X,X."""
    s = make_state(hands=[played + ",1", "2"], stacks=[[], [top]])
    s, events = apply(s, group(played))
    assert bool(of_type(events, Abluxxed)) is hit
    assert s.kind is (Kind.TAKE_OR_DECLINE if hit else Kind.PLAY)


def test_worked_case_3_jokers_take_the_number_value_r6() -> None:
    """12,12,X (count 3, value 12) abluxxes 6,6,6."""
    s = make_state(hands=["12,12,X,1", "2"], stacks=[[], ["6,6,6"]])
    s, events = apply(s, group("12,12,X"))
    assert events[-1] == Abluxxed(A, B, group("6,6,6"))


def test_worked_case_4_reexposed_group_waits_for_next_turn_r9() -> None:
    """A's stack [5,5 | 9]: B plays 10 and takes the 9; A is not checked again; C's 8,8 then abluxxes A's 5,5."""
    s = make_state(hands=["1,1", "10,3", "8,8,3"], stacks=[["5,5", "9"], [], []], active=B)
    s, events = run(s, group("10"), Choice.TAKE)
    assert of_type(events, Abluxxed) == [Abluxxed(B, A, group("9"))]
    assert s.stacks[A] == (group("5,5"),)
    assert (s.kind, s.seat, s.to_draw) == (Kind.DRAW, A, 1)
    s, events = apply(s, Draw(None))
    assert not of_type(events, Abluxxed)  # A's 5,5 is not checked again this turn
    assert events[-1] == TurnStarted(C, 2)
    s, events = apply(s, group("8,8"))
    assert events[-1] == Abluxxed(C, A, group("5,5"))


def test_worked_case_5_empty_hand_ends_at_once_r7() -> None:
    """A plays their last cards 9,9: the game ends, B keeps 4,4 and A's 9,9 scores."""
    s = make_state(hands=["9,9", "1,2,3"], stacks=[[], ["4,4"]])
    s, events = apply(s, group("9,9"))
    assert s.over and s.end_reason is EndReason.EMPTY_HAND
    assert not of_type(events, Abluxxed)
    assert s.stacks[B] == (group("4,4"),)
    assert scores(s) == (2, 2 - 3)
    assert events == [Played(A, group("9,9")), GameOver(EndReason.EMPTY_HAND, (2, -1))]


def test_worked_case_6_exhaustion_mid_draw_r12() -> None:
    """Pile empty, market of 2, B must draw 3: B draws both, the game ends, C is never checked."""
    s = make_state(hands=["8,8,8,1", "1", "1"], stacks=[[], ["5,5,5"], ["6,6,6"]], market="2,3", pile="", active=A)
    s, _ = run(s, group("8,8,8"), Choice.TAKE)
    assert (s.kind, s.seat, s.to_draw) == (Kind.DRAW, B, 3)
    assert s.legal == (Draw(2), Draw(3))  # no pile to draw from
    s, events = run(s, Draw(2), Draw(3))
    assert s.over and s.end_reason is EndReason.EXHAUSTED
    assert s.hands[B][2] == 1 and s.hands[B][3] == 1  # B keeps what they drew
    assert not of_type(events, Abluxxed)  # C is not checked
    assert s.stacks[C] == (group("6,6,6"),)
    assert isinstance(events[-1], GameOver)


def test_worked_case_7_market_refills_after_the_draw_r10_r11() -> None:
    """B takes 4 market cards: no refill during the draw; after the 4th the market is 6 again before C's check."""
    s = make_state(
        hands=["9,9,9,9,1", "1", "1"],
        stacks=[[], ["5,5,5,5"], ["6,6,6,6"]],
        market="1,2,3,4,7,7",
        pile_top="10,11,12,13",
    )
    s, _ = run(s, group("9,9,9,9"), Choice.TAKE)
    sizes = []
    for card in (1, 2, 3, 4):
        s, events = apply(s, Draw(card))
        assert Drew(B, card, True) in events
        sizes.append(sum(s.market) if s.kind is Kind.DRAW else None)
        if card != 4:
            assert not of_type(events, Refilled)
    assert sizes[:3] == [5, 4, 3]
    # The 4th card: the market (down to 2) refills to 6, then C is checked and abluxxed.
    assert events[1:] == [Refilled((10, 11, 12, 13)), Abluxxed(A, C, group("6,6,6,6"))]
    assert sum(s.market) == 6 and s.market[7] == 2


def test_worked_case_8_cards_total_109_r1() -> None:
    """Hands + stacks + market + pile + discard pile hold the 109 cards at every step of random games."""
    for players in (2, 3, 4, 5):
        for seed in range(10):
            rng = random.Random(seed)
            s = new_game(deck_from_seed(seed), players)
            while not s.over:
                assert card_counts(s) == FULL_COUNTS
                assert sum(card_counts(s)) == DECK_SIZE
                s, _ = apply(s, rng.choice(s.legal))
            assert card_counts(s) == FULL_COUNTS
