"""How big a schedule is, without building it: the counts the config check and the schedule share (``size`` is
the formula docs/tournaments.md gives), kept apart from both so neither imports the other."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence

MAX_GAMES = 200_000  # the largest schedule the referee builds, from a file or over the API


def size(n: int, k: int, tables: int, deals: int, mode: str, owners: Sequence[str] | None = None) -> int:
    """How many games the schedule of ``n`` entrants at tables of ``k`` would have, without building it.
    ``owners`` (one per entrant) matter across tables only, where a table never seats two of one owner."""
    return table_count(n, k, tables, owners if mode == "across" else None) * deals * len(seat_orders(k, mode))


def possible_tables(n: int, k: int, owners: Sequence[str] | None = None) -> int:
    """How many different tables of ``k`` there are among ``n`` entrants: every set, or with ``owners`` every set of
    ``k`` different owners (the elementary symmetric polynomial of the owners' entrant counts)."""
    if owners is None:
        return math.comb(n, k)
    ways = [1] + [0] * k  # ways[j]: sets of j entrants of j different owners, among the owners counted so far
    for count in Counter(owners).values():
        for j in range(k, 0, -1):
            ways[j] += ways[j - 1] * count
    return ways[k]


def table_count(n: int, k: int, tables: int, owners: Sequence[str] | None = None) -> int:
    """How many tables: every set, or the requested sample rounded up so every entrant plays equally often."""
    every = possible_tables(n, k, owners)
    if tables == 0 or tables >= every:
        return every
    step = n // math.gcd(n, k)  # tables * k must be a multiple of n
    return min(every, -(-tables // step) * step)


def seat_orders(k: int, mode: str) -> list[tuple[int, ...]]:
    """The seat orders of one duplicate set at one table: order[seat] is the index of the table member in that
    seat ("across" plays each deal once per table)."""
    if mode == "all":
        return list(itertools.permutations(range(k)))
    if mode == "across":
        return [tuple(range(k))]
    return [tuple((seat + r) % k for seat in range(k)) for r in range(k)]
