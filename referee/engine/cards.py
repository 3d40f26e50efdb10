"""Cards, the deck (R1) and the seeded deal helper.

A card is an int: 1..13 for the numbers and ``JOKER`` (14) for a joker. 14 is also the value a group of jokers
alone takes (R6), so a joker-only group and a joker card share one code. Hands, the market and the discard pile
are counts per card code: a tuple of 15 ints whose index 0 is always 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

JOKER = 14
NUMBERS = range(1, 14)
CARD_CODES = range(1, 15)
COPIES_PER_NUMBER = 8
JOKERS_IN_DECK = 5
DECK_SIZE = 13 * COPIES_PER_NUMBER + JOKERS_IN_DECK  # 109 (R1)
HAND_SIZE = 13  # R3
MARKET_SIZE = 6  # R3, R11
MIN_PLAYERS, MAX_PLAYERS = 2, 5  # R2
EMPTY_COUNTS = (0,) * 15

_MASK64 = (1 << 64) - 1


def card_name(card: int) -> str:
    """``X`` for a joker, else the number."""
    return "X" if card == JOKER else str(card)


def full_deck() -> list[int]:
    """The 109 cards in a fixed order: eight of each number, then the jokers."""
    return [v for v in NUMBERS for _ in range(COPIES_PER_NUMBER)] + [JOKER] * JOKERS_IN_DECK


class DeckRng:
    """SplitMix64: a small generator owned by the engine.

    Python's ``random`` does not promise the same ``shuffle`` across versions; this does, because every step is
    written here in 64-bit integer arithmetic.
    """

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK64

    def next_u64(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK64
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform int in [0, n), by rejection so that no value is favoured."""
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n


def deck_from_seed(seed: int) -> tuple[int, ...]:
    """A shuffled deck order (Fisher-Yates) that depends only on ``seed``."""
    if not isinstance(seed, int) or not 0 <= seed <= _MASK64:
        raise ValueError(f"deck seed must be an integer from 0 to 2**64-1, got {seed!r}")
    deck = full_deck()
    rng = DeckRng(seed)
    for i in range(len(deck) - 1, 0, -1):
        j = rng.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def check_deck(deck: Iterable[int]) -> tuple[int, ...]:
    """The deck as a tuple, or ValueError naming what is wrong with it."""
    deck = tuple(deck)
    if len(deck) != DECK_SIZE:
        raise ValueError(f"a deck holds {DECK_SIZE} cards, got {len(deck)}")
    counts = [0] * 15
    for card in deck:
        if not isinstance(card, int) or not 1 <= card <= JOKER:
            raise ValueError(f"bad card {card!r} in deck: cards are 1..13 and 14 for a joker")
        counts[card] += 1
    for v in NUMBERS:
        if counts[v] != COPIES_PER_NUMBER:
            raise ValueError(f"deck has {counts[v]} cards of {v}, expected {COPIES_PER_NUMBER}")
    if counts[JOKER] != JOKERS_IN_DECK:
        raise ValueError(f"deck has {counts[JOKER]} jokers, expected {JOKERS_IN_DECK}")
    return deck


def counts_of(cards: Iterable[int]) -> tuple[int, ...]:
    """Counts per card code of an iterable of cards."""
    counts = [0] * 15
    for card in cards:
        counts[card] += 1
    return tuple(counts)


def cards_of(counts: Sequence[int]) -> list[int]:
    """The cards of a counts tuple, in ascending order (jokers last)."""
    return [v for v in CARD_CODES for _ in range(counts[v])]
