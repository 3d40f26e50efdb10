"""The deck helper (R1, R3), bad inputs, and refused actions."""

from __future__ import annotations

import random
import re

import pytest

from referee.engine import (
    DECK_SIZE,
    DRAW_PILE,
    JOKER,
    Abluxxed,
    Choice,
    Declined,
    Discarded,
    Draw,
    Group,
    IllegalAction,
    Kind,
    Played,
    Reclaimed,
    Skipped,
    Taken,
    TurnStarted,
    apply,
    check_deck,
    counts_of,
    deck_from_seed,
    digest,
    full_deck,
    new_game,
    view,
)
from referee.engine.cards import DeckRng

from .helpers import group, make_state, run


def test_r1_deck_from_seed_has_109_cards_with_the_right_counts() -> None:
    for seed in (0, 1, 12345, 2**63):
        deck = deck_from_seed(seed)
        assert len(deck) == DECK_SIZE == 109
        counts = counts_of(deck)
        assert all(counts[v] == 8 for v in range(1, 14)) and counts[JOKER] == 5
        assert check_deck(deck) == deck


def test_deck_from_seed_is_pinned() -> None:
    """Same seed, same deck, on every Python version: a change here breaks every recorded game."""
    assert deck_from_seed(0) == deck_from_seed(0)
    assert deck_from_seed(0)[:16] == (5, 13, 1, 11, 14, 5, 3, 4, 11, 8, 3, 6, 5, 7, 9, 1)
    assert deck_from_seed(0)[-6:] == (6, 5, 11, 12, 1, 2)
    assert deck_from_seed(12345)[:16] == (3, 12, 12, 7, 12, 7, 12, 1, 8, 5, 7, 5, 14, 5, 13, 6)
    assert deck_from_seed(12345)[-6:] == (1, 1, 2, 12, 6, 3)
    assert deck_from_seed(1) != deck_from_seed(0)
    # SplitMix64 reference outputs.
    assert DeckRng(0).next_u64() == 0xE220A8397B1DCDAF
    assert DeckRng(1234567).next_u64() == 6457827717110365317


def test_r3_deal() -> None:
    deck = deck_from_seed(7)
    for players, pile in ((2, 77), (3, 64), (4, 51), (5, 38)):
        s = new_game(deck, players)
        assert s.hands == tuple(counts_of(deck[13 * i : 13 * i + 13]) for i in range(players))
        assert s.market == counts_of(deck[13 * players : 13 * players + 6])
        assert s.pile_size == pile and s.deck[s.pile_pos] == deck[13 * players + 6]
        assert s.discard == (0,) * 15 and s.stacks == ((),) * players
        assert (s.kind, s.active, s.seat, s.turn) == (Kind.PLAY, 0, 0, 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"players": 1}, "players must be 2 to 5, got 1"),
        ({"players": 6}, "players must be 2 to 5, got 6"),
        ({"players": 2.5}, "players must be 2 to 5, got 2.5"),
        ({"players": 3, "start_seat": 3}, "start_seat must be 0 to 2, got 3"),
        ({"players": 3, "start_seat": -1}, "start_seat must be 0 to 2, got -1"),
        ({"deck": full_deck()[:-1]}, "a deck holds 109 cards, got 108"),
        ({"deck": [*full_deck()[:-1], 0]}, "bad card 0 in deck"),
        ({"deck": [*full_deck()[:-1], "X"]}, "bad card 'X' in deck"),
        ({"deck": [*full_deck()[:-1], 1]}, "deck has 9 cards of 1, expected 8"),
        ({"deck": [2, *full_deck()[1:]]}, "deck has 7 cards of 1, expected 8"),
        ({"deck": [1, *full_deck()[:-1]]}, "deck has 9 cards of 1, expected 8"),
    ],
)
def test_bad_new_game_inputs_raise_value_error(kwargs: dict, message: str) -> None:
    args = {"deck": deck_from_seed(0), "players": 4, **kwargs}
    with pytest.raises(ValueError, match=re.escape(message)):
        new_game(args.pop("deck"), args.pop("players"), **args)


def test_bad_seed_and_seat_raise_value_error() -> None:
    for bad in (-1, 2**64, 1.5):
        with pytest.raises(ValueError, match=re.escape(f"deck seed must be an integer from 0 to 2**64-1, got {bad!r}")):
            deck_from_seed(bad)
    with pytest.raises(ValueError, match="seat must be 0 to 3, got 4"):
        view(new_game(deck_from_seed(0), 4), 4)


def refused(state, action, reason: str) -> None:
    """``action`` raises IllegalAction naming ``reason`` and leaves ``state`` exactly as it was."""
    before, before_digest = state._copy(), digest(state)
    with pytest.raises(IllegalAction, match=re.escape(reason)) as info:
        apply(state, action)
    assert isinstance(info.value, ValueError) and str(info.value).startswith("illegal action")
    assert state == before and digest(state) == before_digest


def test_illegal_actions_are_refused_with_a_reason_and_change_nothing() -> None:
    s = make_state(hands=["9,9,12", "1", "1"], stacks=[[], ["2,2"], []], market="3,3,4,5,6,7", pile_top="8")
    refused(s, Group(13, 1, 0), "hand holds 0 card(s) of 13")
    refused(s, Group(9, 0, 0), "a group needs at least one card")
    refused(s, DRAW_PILE, "expected a group to play")
    refused(s, Choice.TAKE, "expected a group to play")
    refused(s, "9", "expected a group to play")
    s, _ = apply(s, group("9,9"))
    refused(s, Choice.RECLAIM, "expected take or decline")
    refused(s, group("1"), "expected take or decline")
    s, _ = apply(s, Choice.DECLINE)
    refused(s, Choice.TAKE, "expected reclaim or discard")
    s, _ = apply(s, Choice.DISCARD)
    refused(s, Draw(9), "the market holds no 9")
    refused(s, Draw(JOKER), "the market holds no X")
    refused(s, Draw(15), "no such card 15")
    refused(s, Choice.SKIP, "expected a market card or the pile")
    s, _ = run(s, Draw(3), Draw(3))
    refused(s, group("12"), "hand holds 0 card(s) of 12")  # seat 1's turn now: seat 0's 12 is not theirs


def test_draw_from_an_empty_pile_and_actions_after_the_end_are_refused() -> None:
    s = make_state(hands=["9,1", "1"], stacks=[[], ["2"]], market="3,4,5,6,7,8", pile="")
    s, _ = run(s, group("9"), Choice.TAKE)
    refused(s, DRAW_PILE, "the pile is empty")
    over, _ = apply(make_state(hands=["9", "1"]), group("9"))
    refused(over, group("1"), "the game is over")
    refused(over, Choice.SKIP, "the game is over")


def test_apply_never_mutates_its_input() -> None:
    rng = random.Random(1)
    s = new_game(deck_from_seed(1), 3)
    while not s.over:
        before, d = s._copy(), digest(s)
        nxt, _ = apply(s, rng.choice(s.legal))
        assert s == before and digest(s) == d and nxt is not s
        s = nxt


def test_near_miss_actions_are_refused_not_swapped_for_the_legal_one() -> None:
    """A tuple, a bool or a float that only compares equal to a legal action is not that action."""
    s = make_state(hands=["5,9,9", "1"], stacks=[[], ["2"]], market="3,3,4,5,6,7", pile_top="8")
    assert Group(5, 1, 0) in s.legal
    refused(s, (5, 1, 0), "expected a group to play as a Group, Draw or Choice, got a tuple")
    refused(s, (5, True, 0), "got a tuple")
    refused(s, Group(5, True, 0), "value, numbers and jokers must be whole numbers >= 0")
    refused(s, Group(5.0, 1, 0), "value, numbers and jokers must be whole numbers >= 0")
    s, _ = run(s, group("9"), Choice.TAKE)  # seat 1 now draws one card
    assert DRAW_PILE in s.legal and Draw(3) in s.legal
    refused(s, (None,), "expected a market card or the pile as a Group, Draw or Choice, got a tuple")
    refused(s, (3,), "got a tuple")
    refused(s, Draw(3.0), "a card is an int 1 to 14 or None (the pile), got 3.0")
    after, _ = apply(s, Draw(3))  # a fresh Draw with an int is the action itself
    assert after.hands[1][3] == 1


def test_events_of_different_types_are_never_equal() -> None:
    """Events compare by type: as tuples Declined(1, 2) == TurnStarted(1, 2), and a wrong event list passed."""
    g = Group(5, 1, 0)
    assert Declined(1, 2) != TurnStarted(1, 2)
    assert Reclaimed(0, g) != Discarded(0, g) and Reclaimed(0, g) != Played(0, g)
    assert Taken(1, 2, g) != Abluxxed(1, 2, g)
    assert Declined(1, 2) == Declined(1, 2) and hash(Declined(1, 2)) == hash(Declined(1, 2))
    assert Declined(1, 2) != (1, 2)
    assert len({Declined(1, 2), TurnStarted(1, 2), Skipped(1), Skipped(1)}) == 3
    s = make_state(hands=["9,9,1", "1"], stacks=[[], ["2,2"]])
    s, events = run(s, group("9,9"), Choice.DECLINE)
    assert events[-1] == Declined(0, 1) and events[-1] != TurnStarted(0, 1)
