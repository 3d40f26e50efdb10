"""Helpers that build honest engine positions for the tests.

``make_state`` lays out a position at the start of a turn: every one of the 109 cards is placed somewhere (cards
the test does not name go to the pile, or to the discard pile when the pile is given exactly), and the state's
deck is arranged so that the pile is ``deck[pile_pos:]``, as in a dealt game. The rules then run on it unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from referee.engine import (
    DECK_SIZE,
    JOKER,
    Action,
    Event,
    Group,
    Options,
    State,
    apply,
    cards_of,
    check_deck,
    counts_of,
    full_deck,
    legal_plays,
    new_game,
)

FULL_COUNTS = counts_of(full_deck())


def cards(text: str) -> list[int]:
    """Cards in the rules' notation: ``"5,5,X"`` -> ``[5, 5, 14]``; ``""`` -> ``[]``."""
    return [JOKER if c.strip().upper() == "X" else int(c) for c in text.split(",") if c.strip()]


def group(text: str) -> Group:
    """A group in the rules' notation: ``"12,12,X"`` -> ``Group(12, 2, 1)``; ``"X,X"`` -> ``Group(14, 0, 2)``."""
    cs = cards(text)
    numbers = [c for c in cs if c != JOKER]
    if len(set(numbers)) > 1:
        raise ValueError(f"not one value: {text}")
    return Group(numbers[0] if numbers else JOKER, len(numbers), len(cs) - len(numbers))


def group_cards(g: Group) -> list[int]:
    return [g.value] * g.numbers + [JOKER] * g.jokers


def make_state(
    hands: Sequence[str],
    stacks: Sequence[Sequence[str]] | None = None,
    market: str | None = None,
    pile_top: str = "",
    *,
    pile: str | None = None,
    discard: str = "",
    active: int = 0,
    options: Options | None = None,
) -> State:
    """A state where seat ``active`` is about to play (R5).

    ``hands`` and ``market`` are card lists, ``stacks`` lists each seat's groups bottom to top. The pile is
    ``pile_top`` (top first) followed by the unnamed cards in a fixed shuffled order; or exactly ``pile`` (top
    first), in which case the unnamed cards are put on the discard pile. ``market=None`` takes 6 unnamed cards.
    """
    players = len(hands)
    stacks = stacks if stacks is not None else [[] for _ in hands]
    hand_cards = [cards(h) for h in hands]
    stack_groups = [tuple(group(g) for g in st) for st in stacks]
    named = [c for h in hand_cards for c in h] + [c for st in stack_groups for g in st for c in group_cards(g)]
    named += cards(discard) + cards(pile_top if pile is None else pile)
    if market is not None:
        named += cards(market)
    left = list(FULL_COUNTS)
    for c in named:
        left[c] -= 1
        if left[c] < 0:
            raise ValueError(f"too many cards of {c} named: the deck has {FULL_COUNTS[c]}")
    leftovers = cards_of(left)
    random.Random(0).shuffle(leftovers)
    market_cards = cards(market) if market is not None else [leftovers.pop() for _ in range(6)]
    if pile is None:
        pile_cards = cards(pile_top) + leftovers
        discard_cards = cards(discard)
    else:
        pile_cards = cards(pile)
        discard_cards = cards(discard) + leftovers
    if pile_cards and len(market_cards) != 6:
        raise ValueError("the market holds 6 cards while the pile has any (R11)")
    if not hand_cards[active]:
        raise ValueError("the active player must hold cards")
    dealt = [c for h in hand_cards for c in h]
    dealt += [c for st in stack_groups for g in st for c in group_cards(g)] + market_cards + discard_cards
    deck = check_deck(dealt + pile_cards)
    s = new_game(deck, players, options, start_seat=active)._copy()
    s.hands = tuple(counts_of(h) for h in hand_cards)
    s.stacks = stack_groups
    s.market = counts_of(market_cards)
    s.discard = counts_of(discard_cards)
    s.pile_pos = DECK_SIZE - len(pile_cards)
    s.legal = legal_plays(s.hands[active])
    assert card_counts(s) == FULL_COUNTS
    return s


def run(state: State, *actions: Action) -> tuple[State, list[Event]]:
    """Apply ``actions`` in order; the final state and every event."""
    events: list[Event] = []
    for a in actions:
        state, evs = apply(state, a)
        events.extend(evs)
    return state, events


def card_counts(s: State) -> tuple[int, ...]:
    """Counts per card code over hands, stacks, market, pile and discard pile (R1, worked case 8)."""
    total = [sum(col) for col in zip(*s.hands, s.market, s.discard, strict=True)]
    for stack in s.stacks:
        for g in stack:
            total[g.value] += g.numbers
            total[JOKER] += g.jokers
    pile = s.deck[s.pile_pos :]
    for c in range(1, 15):
        total[c] += pile.count(c)
    return tuple(total)


def stack_size(s: State, seat: int) -> int:
    return sum(g.count for g in s.stacks[seat])


def of_type(events: Iterable[Event], kind: type) -> list:
    return [e for e in events if type(e) is kind]
