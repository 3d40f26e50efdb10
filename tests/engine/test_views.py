"""R17: each seat sees exactly what it may see; nothing hidden leaks through views or events."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine import (
    Drew,
    Kind,
    State,
    apply,
    cards_of,
    counts_of,
    deck_from_seed,
    digest,
    event_for,
    legal_plays,
    new_game,
    public_view,
    scores,
    view,
)

from .helpers import FULL_COUNTS, card_counts


def random_state(seed: int, players: int, fraction: float) -> State:
    """A state part-way (``fraction`` of the game's decisions) through a random game."""
    rng = random.Random(seed)
    history = [new_game(deck_from_seed(seed), players, start_seat=seed % players)]
    while not history[-1].over:
        history.append(apply(history[-1], rng.choice(history[-1].legal))[0])
    return history[int(fraction * (len(history) - 1))]


def shuffle_hidden(s: State, seat: int | None, rng: random.Random) -> State:
    """``s`` with the cards ``seat`` cannot see dealt anew: the other hands (same sizes) and the pile order.

    For ``seat`` None (a spectator) every hand is hidden.
    """
    others = [i for i in range(s.players) if i != seat]
    hidden = [c for i in others for c in cards_of(s.hands[i])] + list(s.deck[s.pile_pos :])
    rng.shuffle(hidden)
    hands = list(s.hands)
    pos = 0
    for i in others:
        size = sum(s.hands[i])
        hands[i] = counts_of(hidden[pos : pos + size])
        pos += size
    t = s._copy()
    t.hands = tuple(hands)
    t.deck = s.deck[: s.pile_pos] + tuple(hidden[pos:])
    if t.kind is Kind.PLAY:
        t.legal = legal_plays(t.hands[t.seat])
    assert card_counts(t) == FULL_COUNTS
    return t


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 5), fraction=st.floats(0, 1))
def test_r17_views_do_not_depend_on_hidden_cards(seed: int, players: int, fraction: float) -> None:
    s = random_state(seed, players, fraction)
    rng = random.Random(seed)
    for seat in [*range(players), None]:
        for _ in range(2):
            t = shuffle_hidden(s, seat, rng)
            assert view(t, seat) == view(s, seat)
            if not t.over:  # the shuffled state is a real position: play goes on
                apply(t, rng.choice(t.legal))


def test_r17_hidden_cards_do_change_the_state() -> None:
    """The shuffles above really change what the seat cannot see (the view test is not vacuous)."""
    rng = random.Random(0)
    changed = 0
    for seed in range(20):
        s = random_state(seed, 4, 0.5)
        changed += digest(shuffle_hidden(s, 0, rng)) != digest(s)
        changed += shuffle_hidden(s, None, rng).hands != s.hands
    assert changed >= 38


def test_r17_a_seat_sees_its_own_hand_the_public_parts_and_legal_only_when_deciding() -> None:
    s = random_state(11, 4, 0.4)
    for seat in range(4):
        v = view(s, seat)
        assert v.hand == s.hands[seat]
        assert v.hand_sizes == tuple(s.hand_size(i) for i in range(4))
        assert (v.stacks, v.market, v.discard, v.pile_size) == (s.stacks, s.market, s.discard, s.pile_size)
        assert v.scores == scores(s) and v.deciding == s.seat
        assert v.legal == (s.legal if seat == s.seat else ())
    p = public_view(s)
    assert p.hand is None and p.legal == () and p.seat is None
    # Swapping one of seat 0's cards with a different pile card changes seat 0's view, and no one else's.
    t = s._copy()
    mine = cards_of(s.hands[0])
    i = next(i for i in range(s.pile_pos, len(s.deck)) if s.deck[i] != mine[0])
    t.hands = (counts_of([s.deck[i], *mine[1:]]), *s.hands[1:])
    t.deck = (*s.deck[:i], mine[0], *s.deck[i + 1 :])
    if t.kind is Kind.PLAY and t.seat == 0:
        t.legal = legal_plays(t.hands[0])
    assert card_counts(t) == FULL_COUNTS
    assert view(t, 0) != view(s, 0)
    assert all(view(t, seat) == view(s, seat) for seat in (1, 2, 3, None))


def test_r17_event_for_hides_pile_draws_from_other_seats() -> None:
    seen_pile = seen_market = 0
    for seed in range(15):
        rng = random.Random(seed)
        s = new_game(deck_from_seed(seed), 3)
        while not s.over:
            s, events = apply(s, rng.choice(s.legal))
            for e in events:
                for seat in (0, 1, 2, None):
                    shown = event_for(e, seat)
                    if type(e) is Drew and not e.from_market and seat != e.seat:
                        assert shown == Drew(e.seat, None, False)
                        seen_pile += 1
                    else:
                        assert shown == e  # the drawer, market draws and every other event: unchanged
                        seen_market += type(e) is Drew
    assert seen_pile and seen_market
