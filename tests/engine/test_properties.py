"""Properties of random games with random legal choices: 2-5 players, each option (R1, R5-R15)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.engine import (
    DRAW_PILE,
    JOKER,
    Choice,
    Draw,
    Drew,
    EndReason,
    GameOver,
    Group,
    IllegalAction,
    Kind,
    Options,
    Refilled,
    State,
    TurnStarted,
    apply,
    deck_from_seed,
    digest,
    legal_plays,
    new_game,
    placings,
    scores,
)

from .helpers import FULL_COUNTS, card_counts, stack_size

OPTIONS = {
    "none": Options(),
    "draw_one": Options(draw_one=True),
    "end_on_empty_pile": Options(end_on_empty_pile=True),
}
GAMES_PER_CASE = 150  # x 4 player counts x 3 options
MAX_STEPS = 3000  # random games take about 50-300 decisions
PROBE_EVERY = 8  # try an illegal action at one step in this many


def illegal_actions(s: State, rng: random.Random) -> list[object]:
    """Some actions that are not legal in ``s``: plays the hand can't make, absent market cards, wrong kinds."""
    if s.kind is None:
        return [DRAW_PILE, Choice.TAKE, Group(1, 1, 0)]
    hand = s.hands[s.seat]
    v = rng.randrange(1, 14)
    out: list[object] = [Group(v, hand[v] + 1, 0), Group(v, 0, 0), Group(JOKER, 0, hand[JOKER] + 1), "play"]
    out += [Draw(c) for c in range(1, 15) if not s.market[c]]
    if s.pile_size == 0:
        out.append(DRAW_PILE)
    if s.kind is Kind.PLAY:
        out += [Choice.SKIP, Choice.TAKE, DRAW_PILE, Draw(rng.randrange(1, 15))]
    elif s.kind in (Kind.TAKE_OR_DECLINE, Kind.RECLAIM_OR_DISCARD):
        out += [Choice.SKIP, DRAW_PILE, *legal_plays(hand)[:2]]
        out += [Choice.RECLAIM] if s.kind is Kind.TAKE_OR_DECLINE else [Choice.TAKE, Choice.DECLINE]
    else:
        out += [Choice.DECLINE, Choice.TAKE, *legal_plays(hand)[:2]]
        if s.kind is Kind.DRAW:
            out.append(Choice.SKIP)
    return [a for a in out if a not in s.legal]


def check_decision(s: State) -> None:
    """Who decides and what they may do, for each kind of decision."""
    if s.kind is None:
        assert s.legal == () and s.seat == -1 and s.end_reason is not None
        return
    assert s.legal and len(set(s.legal)) == len(s.legal) and s.end_reason is None
    market_draws = [Draw(c) for c in range(1, 15) if s.market[c]] + ([DRAW_PILE] if s.pile_size else [])
    if s.kind is Kind.PLAY:
        assert s.seat == s.active and s.legal == legal_plays(s.hands[s.seat])  # R5
    elif s.kind is Kind.TAKE_OR_DECLINE:
        assert s.seat == s.active != s.victim and s.legal == (Choice.TAKE, Choice.DECLINE)  # R9
    elif s.kind is Kind.RECLAIM_OR_DISCARD:
        assert s.seat == s.victim != s.active and s.legal == (Choice.RECLAIM, Choice.DISCARD)  # R9
    elif s.kind is Kind.DRAW:
        assert s.seat == s.victim != s.active and s.to_draw > 0 and list(s.legal) == market_draws  # R10
    else:
        assert s.options.draw_one and s.seat == s.active and list(s.legal) == [*market_draws, Choice.SKIP]
    # R11: between draws the market holds 6 cards unless the pile ran short.
    if s.kind is not Kind.DRAW:
        assert sum(s.market) == 6 or s.pile_size == 0


def play_random_game(players: int, options: Options, seed: int) -> State:
    rng = random.Random(seed)
    s = new_game(deck_from_seed(seed), players, options, start_seat=seed % players)
    for step in range(MAX_STEPS):
        assert card_counts(s) == FULL_COUNTS  # R1: all 109 cards accounted for
        check_decision(s)
        if step % PROBE_EVERY == 0:
            bad = rng.choice(illegal_actions(s, rng))
            before = digest(s)
            with pytest.raises(IllegalAction, match=r"^illegal action .+: \w"):
                apply(s, bad)
            assert digest(s) == before
        if s.over:
            return s
        snapshot = s._copy()
        active = s.active
        nxt, events = apply(s, rng.choice(s.legal))
        assert s == snapshot  # the input state is untouched
        for i, e in enumerate(events):
            if type(e) is Refilled:  # R11: a refill follows a draw, and only then
                assert i > 0 and type(events[i - 1]) is Drew and e.cards
            elif type(e) is TurnStarted:  # R13
                assert (e.seat, e.turn) == ((active + 1) % players, s.turn + 1)
        assert (type(events[-1]) is GameOver) is nxt.over
        s = nxt
    raise AssertionError(f"game did not end in {MAX_STEPS} steps")


def check_result(s: State, options: Options) -> None:
    final = scores(s)
    assert final == tuple(stack_size(s, i) - s.hand_size(i) for i in range(s.players))  # R14
    if s.end_reason is EndReason.EMPTY_HAND:  # R7
        assert s.hand_size(s.active) == 0
    elif s.end_reason is EndReason.EXHAUSTED:  # R12
        assert s.pile_size == 0 and not any(s.market)
    else:
        assert options.end_on_empty_pile and s.pile_size == 0
    sizes = [s.hand_size(i) for i in range(s.players)]
    places = placings(final, sizes)  # R15
    for i in range(s.players):
        better = [j for j in range(s.players) if (final[j], -sizes[j]) > (final[i], -sizes[i])]
        assert places[i] == 1 + len(better)


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("players", [2, 3, 4, 5])
@settings(max_examples=GAMES_PER_CASE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_follow_the_rules(players: int, option: str, seed: int) -> None:
    """Every game ends; no legal action raises; illegal ones are refused; cards, scores and places add up."""
    s = play_random_game(players, OPTIONS[option], seed)
    check_result(s, OPTIONS[option])
