"""Rules R5-R16, each with tests that fail if the rule is implemented wrongly."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.engine import (
    DRAW_PILE,
    JOKER,
    Abluxxed,
    Choice,
    Declined,
    Discarded,
    Draw,
    Drew,
    EndReason,
    GameOver,
    Group,
    IllegalAction,
    Kind,
    Played,
    Reclaimed,
    Refilled,
    Taken,
    TurnStarted,
    apply,
    counts_of,
    deck_from_seed,
    legal_plays,
    match_scores,
    new_game,
    placings,
    round_start_seat,
    scores,
)

from .helpers import cards, group, make_state, of_type, run, stack_size


def abluxxes(played: str, top: str) -> bool:
    """Whether seat 0 playing ``played`` abluxxes seat 1 whose top group is ``top`` (2 players)."""
    s = make_state(hands=[played + ",1", "2"], stacks=[[], [top]])
    s, events = apply(s, group(played))
    return bool(of_type(events, Abluxxed))


# R5 -----------------------------------------------------------------------------------------------------------


def test_r5_play_is_mandatory_no_pass() -> None:
    s = new_game(deck_from_seed(3), 4)
    assert s.kind is Kind.PLAY and s.legal
    assert all(isinstance(a, Group) for a in s.legal)
    for not_a_play in (Choice.SKIP, Choice.DECLINE, DRAW_PILE):
        with pytest.raises(IllegalAction, match="expected a group to play"):
            apply(s, not_a_play)


def test_r5_legal_plays_in_canonical_order() -> None:
    """Each value with 1..k number cards and 0..j jokers, by value; then jokers alone."""
    hand = counts_of(cards("9,5,X,5"))
    assert legal_plays(hand) == (
        Group(5, 1, 0), Group(5, 1, 1), Group(5, 2, 0), Group(5, 2, 1),
        Group(9, 1, 0), Group(9, 1, 1),
        Group(JOKER, 0, 1),
    )  # fmt: skip


hands = st.tuples(st.just(0), *[st.integers(0, 8)] * 13, st.integers(0, 5)).filter(any)


@given(hand=hands)
def test_r5_legal_plays_are_exactly_the_legal_groups(hand: tuple[int, ...]) -> None:
    """(a) one value k>=1 times plus any jokers, or (b) 1-5 jokers alone; nothing else, no duplicates."""
    expected = {Group(v, n, j) for v in range(1, 14) for n in range(1, hand[v] + 1) for j in range(hand[JOKER] + 1)}
    expected |= {Group(JOKER, 0, j) for j in range(1, min(hand[JOKER], 5) + 1)}
    plays = legal_plays(hand)
    assert len(plays) == len(set(plays)) and set(plays) == expected


def test_r5_jokers_alone_form_a_group() -> None:
    s = make_state(hands=["X,X,X,X,X,4", "1"])
    assert [g for g in s.legal if g.value == JOKER] == [Group(JOKER, 0, j) for j in range(1, 6)]
    s, events = apply(s, Group(JOKER, 0, 5))
    assert s.stacks[0] == (Group(JOKER, 0, 5),) and s.hands[0][JOKER] == 0
    assert str(events[0].group) == "X,X,X,X,X"


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (Group(9, 1, 0), "hand holds 0 card(s) of 9"),
        (Group(5, 3, 0), "hand holds 2 card(s) of 5"),
        (Group(5, 1, 2), "hand holds 1 joker(s)"),
        (Group(5, 0, 1), "at least one number card"),  # a joker cannot carry a value alone
        (Group(JOKER, 1, 0), "jokers alone"),
        (Group(5, 0, 0), "at least one card"),
        (Group(0, 1, 0), "value 1 to 13"),
    ],
)
def test_r5_groups_the_hand_cannot_make_are_refused(bad: Group, reason: str) -> None:
    s = make_state(hands=["5,5,X,2", "1"])
    with pytest.raises(IllegalAction, match=re.escape(reason)):
        apply(s, bad)


# R6 -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("played", "top", "hit"),
    [
        ("5,X,X", "4,4,4", True),  # jokers count towards the size and take the value 5
        ("5,X,X", "6,6,6", False),  # ... and never raise it
        ("5,X", "4", False),  # count 2 != 1
        ("X", "13", True),  # jokers alone are worth 14
        ("X,X,X", "13,13,X", True),
        ("13,X", "12,X", True),
        ("2,X", "X,X", False),
    ],
)
def test_r6_count_and_value(played: str, top: str, hit: bool) -> None:
    assert abluxxes(played, top) is hit


# R7 -----------------------------------------------------------------------------------------------------------


def test_r7_empty_hand_ends_before_any_check_and_the_group_scores() -> None:
    """The last play would abluxx two players; the game ends instead and the laid group counts."""
    s = make_state(hands=["12,X,X", "1", "1"], stacks=[["3"], ["4,4,4"], ["5,5,5"]])
    s, events = apply(s, group("12,X,X"))
    assert events == [Played(0, group("12,X,X")), GameOver(EndReason.EMPTY_HAND, (4, 2, 2))]
    assert s.kind is None and s.seat == -1 and s.legal == ()
    assert s.stacks[0][-1] == group("12,X,X")


# R8 -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("played", "top"), [("7", "7"), ("13,X", "13,13"), ("X,X", "X,X"), ("4,4,X", "4,4,4")])
def test_r8_equal_values_never_abluxx(played: str, top: str) -> None:
    assert not abluxxes(played, top)


def test_r8_lower_value_never_abluxxes() -> None:
    assert not abluxxes("6,6", "7,7")


def test_r8_checks_opponents_in_seat_order_from_the_next_seat() -> None:
    """Active seat 2 of 4: seats 3, 0, 1 are checked in that order; the active player's own stack is not."""
    s = make_state(hands=["1", "1", "9,9,1", "1"], stacks=[["4"], ["5"], ["2"], ["3"]], active=2)
    s, events = apply(s, group("9"))
    victims = []
    while s.kind is not Kind.PLAY:
        victims.append(s.victim)
        s, evs = run(s, Choice.DECLINE, Choice.RECLAIM)
        events += evs
    assert victims == [3, 0, 1]
    assert [e.victim for e in of_type(events, Abluxxed)] == [3, 0, 1]
    assert s.stacks[2] == (group("2"), group("9"))
    assert events[-1] == TurnStarted(3, 2)


def test_r8_empty_stacks_are_skipped() -> None:
    s = make_state(hands=["9,1", "1", "1"], stacks=[[], [], ["3"]])
    s, events = apply(s, group("9"))
    assert events[-1] == Abluxxed(0, 2, group("3"))


def test_r8_abluxxing_is_not_optional() -> None:
    s = make_state(hands=["9,1", "1"], stacks=[[], ["3"]])
    s, _ = apply(s, group("9"))
    assert s.legal == (Choice.TAKE, Choice.DECLINE)
    for wrong in (Choice.SKIP, DRAW_PILE, group("1")):
        with pytest.raises(IllegalAction, match="expected take or decline"):
            apply(s, wrong)


def test_r8_several_victims_each_resolved_with_a_refill_between() -> None:
    """Seat 0's 9 hits seats 1 and 2; seat 1 draws and the market refills before seat 2 is checked."""
    s = make_state(
        hands=["9,9,1", "1", "1", "1"],
        stacks=[[], ["4"], ["8"], ["9"]],
        market="2,2,3,3,4,4",
        pile_top="13,12,11",
    )
    s, events = run(s, group("9"), Choice.TAKE, Draw(2))
    assert events == [
        Played(0, group("9")),
        Abluxxed(0, 1, group("4")),
        Taken(0, 1, group("4")),
        Drew(1, 2, True),
        Refilled((13,)),
        Abluxxed(0, 2, group("8")),
    ]
    assert s.market == counts_of(cards("2,3,3,4,4,13"))
    s, events = run(s, Choice.TAKE, Draw(13))  # seat 2 can take the card the refill turned up
    assert events[-2:] == [Refilled((12,)), TurnStarted(1, 2)]  # seat 3's 9 ties: not abluxxed
    assert s.hands[0][4] == 1 and s.hands[0][8] == 1 and s.hands[2][13] == 1


# R9 -----------------------------------------------------------------------------------------------------------


def test_r9_take_moves_the_group_to_the_active_hand_and_the_victim_draws() -> None:
    s = make_state(hands=["9,9,9,1", "1"], stacks=[[], ["2", "4,4,X"]], pile_top="6,7,8")
    before = s.hands[0]
    s, events = run(s, group("9,9,9"), Choice.TAKE)
    assert events[-1] == Taken(0, 1, group("4,4,X"))
    assert s.stacks[1] == (group("2"),)
    assert s.hands[0][4] == before[4] + 2 and s.hands[0][JOKER] == before[JOKER] + 1
    assert (s.kind, s.seat, s.to_draw) == (Kind.DRAW, 1, 3)
    s, events = run(s, DRAW_PILE, DRAW_PILE, DRAW_PILE)
    assert [e.card for e in of_type(events, Drew)] == [6, 7, 8]
    assert s.hand_size(1) == 4 and s.kind is Kind.PLAY


def test_r9_decline_lets_the_victim_reclaim_without_drawing() -> None:
    s = make_state(hands=["9,9,1", "1"], stacks=[[], ["3", "4,4"]])
    s, _ = run(s, group("9,9"), Choice.DECLINE)
    assert (s.kind, s.seat, s.legal) == (Kind.RECLAIM_OR_DISCARD, 1, (Choice.RECLAIM, Choice.DISCARD))
    before = s
    s, events = apply(s, Choice.RECLAIM)
    assert events == [Reclaimed(1, group("4,4")), TurnStarted(1, 2)]
    assert s.hands[1][4] == 2 and s.hand_size(1) == 3
    assert s.stacks[1] == (group("3"),)
    assert (s.market, s.pile_pos, s.discard) == (before.market, before.pile_pos, before.discard)  # no draw


def test_r9_decline_then_discard_the_victim_draws() -> None:
    s = make_state(hands=["9,9,1", "1"], stacks=[[], ["4,X"]], pile_top="5,6")
    s, events = run(s, group("9,9"), Choice.DECLINE, Choice.DISCARD)
    assert events[-2:] == [Declined(0, 1), Discarded(1, group("4,X"))]
    assert s.discard[4] == 1 and s.discard[JOKER] == 1
    assert s.stacks[1] == () and s.hands[0][4] == 0
    assert (s.kind, s.seat, s.to_draw) == (Kind.DRAW, 1, 2)
    s, _ = run(s, DRAW_PILE, DRAW_PILE)
    assert s.hands[1][5] == 1 and s.hands[1][6] == 1 and s.kind is Kind.PLAY


def test_r9_reexposed_group_is_not_rechecked_this_turn_but_is_abluxxable_next_turn() -> None:
    """Seat 0 of 4 plays 10 and takes seat 2's 9, exposing seat 2's 5 (count 1, 5 < 10). The check goes on to
    seat 3 and never back to seat 2; on the next turn (seat 1) a 6 abluxxes the re-exposed 5.
    """
    s = make_state(hands=["10,1", "6,1", "1", "1"], stacks=[[], [], ["5", "9"], ["3"]])
    s, events = run(s, group("10"), Choice.TAKE, DRAW_PILE, Choice.DECLINE, Choice.RECLAIM)
    assert [e.victim for e in of_type(events, Abluxxed)] == [2, 3]
    assert s.stacks[2] == (group("5"),)
    assert events[-1] == TurnStarted(1, 2)
    s, events = apply(s, group("6"))
    assert events[-1] == Abluxxed(1, 2, group("5"))


# R10 ----------------------------------------------------------------------------------------------------------


def test_r10_each_card_from_any_market_value_or_the_pile_top() -> None:
    s = make_state(hands=["9,9,1", "1"], stacks=[[], ["2,2"]], market="12,3,X,3,1,7", pile_top="11,10")
    s, _ = run(s, group("9,9"), Choice.TAKE)
    assert s.legal == (Draw(1), Draw(3), Draw(7), Draw(12), Draw(JOKER), DRAW_PILE)
    s, events = apply(s, Draw(JOKER))
    assert events == [Drew(1, JOKER, True)]
    assert s.legal == (Draw(1), Draw(3), Draw(7), Draw(12), DRAW_PILE)  # the market was not refilled
    with pytest.raises(IllegalAction, match="the market holds no X"):
        apply(s, Draw(JOKER))
    s, events = apply(s, DRAW_PILE)
    assert events[0] == Drew(1, 11, False)  # the top of the pile
    assert events[1] == Refilled((10,))


# R11 ----------------------------------------------------------------------------------------------------------


def test_r11_refill_from_a_short_pile_fills_what_it_can() -> None:
    """The pile holds 2 cards and the market is 3 short: it refills to 5 and the game goes on (R12)."""
    s = make_state(hands=["9,9,9,1", "1", "1"], stacks=[[], ["2,2,2"], []], market="1,3,4,5,6,7", pile="10,11")
    s, events = run(s, group("9,9,9"), Choice.TAKE, Draw(3), Draw(4), Draw(5))
    assert events[-2:] == [Refilled((10, 11)), TurnStarted(1, 2)]
    assert sum(s.market) == 5 and s.pile_size == 0 and not s.over


def test_r11_no_refill_while_the_market_is_full() -> None:
    s = make_state(hands=["9,1", "1"], stacks=[[], ["2"]])
    s, events = run(s, group("9"), Choice.TAKE, DRAW_PILE)
    assert not of_type(events, Refilled) and sum(s.market) == 6


# R12 ----------------------------------------------------------------------------------------------------------


def test_r12_empty_pile_alone_does_not_end_the_game() -> None:
    s = make_state(hands=["9,1", "1,1"], stacks=[[], ["2"]], market="3,4,5,6,7,8", pile="")
    s, events = run(s, group("9"), Choice.TAKE, Draw(3))
    assert not s.over and events[-1] == TurnStarted(1, 2)
    assert s.legal and sum(s.market) == 5


def test_r12_ends_when_the_last_pile_card_goes_with_the_market_already_empty() -> None:
    """7 to draw, market 6 and pile 1: after the 6 market cards the pile's last card ends the game."""
    s = make_state(
        hands=["9,9,9,9,9,9,9,1", "1", "1"],
        stacks=[[], ["2,2,2,2,2,2,2"], ["3,3,3,3,3,3,3"]],
        market="4,4,5,5,6,6",
        pile="7",
    )
    s, _ = run(s, group("9,9,9,9,9,9,9"), Choice.TAKE, Draw(4), Draw(4), Draw(5), Draw(5), Draw(6), Draw(6))
    assert not s.over and s.legal == (DRAW_PILE,)
    s, events = apply(s, DRAW_PILE)
    assert events == [Drew(1, 7, False), GameOver(EndReason.EXHAUSTED, scores(s))]
    assert s.stacks[2] == (group("3,3,3,3,3,3,3"),)  # seat 2 never checked


# R13 ----------------------------------------------------------------------------------------------------------


def test_r13_turns_pass_clockwise_from_the_start_seat() -> None:
    rng = random.Random(5)
    s = new_game(deck_from_seed(5), 3, start_seat=2)
    assert (s.active, s.seat, s.turn) == (2, 2, 1)
    started = []
    while not s.over and len(started) < 7:
        s, events = apply(s, rng.choice(s.legal))
        started += [(e.seat, e.turn) for e in of_type(events, TurnStarted)]
    assert started == [(0, 2), (1, 3), (2, 4), (0, 5), (1, 6), (2, 7), (0, 8)]


def test_r13_next_turn_only_after_the_last_opponent_is_resolved() -> None:
    s = make_state(hands=["9,1", "1", "1"], stacks=[[], ["2"], ["3"]])
    s, _ = run(s, group("9"), Choice.DECLINE, Choice.RECLAIM)
    assert (s.kind, s.active, s.victim) == (Kind.TAKE_OR_DECLINE, 0, 2)
    s, events = run(s, Choice.DECLINE, Choice.RECLAIM)
    assert events[-1] == TurnStarted(1, 2) and s.active == 1 and s.seat == 1


# R14 ----------------------------------------------------------------------------------------------------------


def test_r14_score_is_stack_cards_minus_hand_cards_whatever_the_values() -> None:
    s = make_state(hands=["13,13,X", "1", "2,2"], stacks=[["1", "1,1"], ["X,X,X,X"], []])
    assert scores(s) == (3 - 3, 4 - 1, 0 - 2)
    s, events = apply(s, group("13,13,X"))
    assert s.over and events[-1] == GameOver(EndReason.EMPTY_HAND, (6, 3, -2))
    assert scores(s) == tuple(stack_size(s, i) - s.hand_size(i) for i in range(3))


# R15 ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("final", "hand_sizes", "retired", "places"),
    [
        ((5, 3, 1), (0, 0, 0), (), (1, 2, 3)),  # higher score places higher
        ((3, 3, 1), (2, 1, 0), (), (2, 1, 3)),  # equal scores: fewer cards in hand first
        ((2, 2, 2, -1), (1, 1, 3, 0), (), (1, 1, 3, 4)),  # still equal: shared place, then the next is skipped
        ((4, 4), (2, 2), (), (1, 1)),
        ((9, 1, 1), (0, 5, 5), (0,), (3, 1, 1)),  # a retired seat places below every other seat
    ],
)
def test_r15_placings(final, hand_sizes, retired, places) -> None:
    assert placings(final, hand_sizes, retired) == places


@given(st.lists(st.tuples(st.integers(-13, 13), st.integers(0, 20)), min_size=2, max_size=5))
def test_r15_place_is_one_plus_the_seats_strictly_better(rows: list[tuple[int, int]]) -> None:
    final = [r[0] for r in rows]
    sizes = [r[1] for r in rows]
    places = placings(final, sizes)
    for i in range(len(rows)):
        better = sum(final[j] > final[i] or (final[j] == final[i] and sizes[j] < sizes[i]) for j in range(len(rows)))
        assert places[i] == 1 + better


# R16 ----------------------------------------------------------------------------------------------------------


def test_r16_rounds_move_the_start_seat_and_sum_scores() -> None:
    assert [round_start_seat(1, r, 3) for r in range(4)] == [1, 2, 0, 1]
    assert match_scores([(3, -2, 1), (-1, 4, 0)]) == (2, 2, 1)
    with pytest.raises(ValueError):
        match_scores([(1, 2), (1, 2, 3)])
