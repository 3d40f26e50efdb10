"""What a tournament plays, and in what order: a pure function of its configuration and its deal key.

The config's seed fixes the tables and seat orders; the decks come from the tournament's secret deal key
(deals.py), or from the seed when the config says ``public_deals = true``.

Round robin at one table size. Every set of ``table_size`` entrants is a table, or, when ``tables`` asks for fewer
than there are sets, a balanced sample of tables. Each table plays ``deals`` deals; each deal is a duplicate set:
the same deck replayed once for each rotation of the seats (or each seat order), so every entrant holds every
seat's cards once. Slots are ordered deal by deal, so after each round of deals everyone has played equally often.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from dataclasses import dataclass

from .config import TournamentConfig
from .deals import PublicDeals, deck_seed


@dataclass(frozen=True)
class Slot:
    """One game of the schedule."""

    slot: int  # position in the schedule; ratings apply results in this order
    game_id: str
    table: int  # which table (set of entrants)
    deal: int  # which deal of that table
    order: int  # which seat order of the duplicate set
    deck_seed: int  # the deck is deck_from_seed(deck_seed); shared by the whole duplicate set; secret (deals.py)
    seats: tuple[str, ...]  # entrant names by seat
    start_seat: int = 0

    @property
    def duplicate_set(self) -> tuple[int, int]:
        return (self.table, self.deal)


def _derive(seed: int, *parts: object) -> int:
    """A 63-bit seed derived from the tournament seed, stable across Python versions and platforms."""
    text = "/".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


MAX_GAMES = 200_000  # the largest schedule the referee builds, from a file or over the API


def size(n: int, k: int, tables: int, deals: int, mode: str) -> int:
    """How many games the schedule of ``n`` entrants at tables of ``k`` would have, without building it."""
    return table_count(n, k, tables) * deals * len(seat_orders(k, mode))


def table_count(n: int, k: int, tables: int) -> int:
    """How many tables: every set, or the requested sample rounded up so every entrant plays equally often."""
    every = math.comb(n, k)
    if tables == 0 or tables >= every:
        return every
    step = n // math.gcd(n, k)  # tables * k must be a multiple of n
    return min(every, -(-tables // step) * step)


def tables_for(names: tuple[str, ...], k: int, tables: int, seed: int) -> list[tuple[str, ...]]:
    """The tables (sets of entrants), in play order."""
    n = len(names)
    if table_count(n, k, tables) == math.comb(n, k):
        sets = [tuple(names[i] for i in c) for c in itertools.combinations(range(n), k)]
        random.Random(_derive(seed, "tables")).shuffle(sets)
        return sets
    return _balanced_sample(names, k, table_count(n, k, tables), seed)


def _balanced_sample(names: tuple[str, ...], k: int, count: int, seed: int) -> list[tuple[str, ...]]:
    """Greedy: each table takes the entrants who have played least (so appearances never differ by more than
    one), and among those, the ones who have met the table's members least; seeded ties, no table twice while
    a new one is possible."""
    rng = random.Random(_derive(seed, "sample"))
    n = len(names)
    plays = [0] * n
    met = [[0] * n for _ in range(n)]
    seen: set[frozenset[int]] = set()
    out: list[tuple[str, ...]] = []
    for _ in range(count):
        best: tuple | None = None
        for _attempt in range(48):  # a few seeded greedy tries; keep the one that meets least and is new
            table: list[int] = []
            jitter = [rng.random() for _ in range(n)]
            while len(table) < k:
                pool = [i for i in range(n) if i not in table]
                least = min(plays[i] for i in pool)
                cands = [i for i in pool if plays[i] == least]
                table.append(min(cands, key=lambda i: (sum(met[i][j] for j in table), jitter[i])))
            key = frozenset(table)
            cost = (key in seen, sum(met[a][b] ** 2 for a, b in itertools.combinations(table, 2)))
            if best is None or cost < best[0]:
                best = (cost, table)
        table = best[1]
        seen.add(frozenset(table))
        for a, b in itertools.combinations(table, 2):
            met[a][b] += 1
            met[b][a] += 1
        for i in table:
            plays[i] += 1
        out.append(tuple(names[i] for i in sorted(table)))
    return out


def seat_orders(k: int, mode: str) -> list[tuple[int, ...]]:
    """The seat orders of one duplicate set: order[seat] is the index of the table member in that seat."""
    if mode == "all":
        return list(itertools.permutations(range(k)))
    return [tuple((seat + r) % k for seat in range(k)) for r in range(k)]


def build(config: TournamentConfig, key: bytes | None) -> list[Slot]:
    """The whole schedule. The same config gives the same games in the same order; with the same deal ``key``
    (the tournament's, from the store), the same decks. ``key`` is None only when the config has public deals."""
    if key is None and not config.public_deals:
        raise ValueError(f"tournament {config.tournament_id} needs its deal key (or public_deals = true)")
    deal_key = PublicDeals(config.seed) if config.public_deals else key
    assert deal_key is not None
    names = tuple(e.name for e in config.entrants)
    k = config.table_size
    tables = tables_for(names, k, config.tables, config.seed)
    # each table's members in a seeded order, so rotations do not always put the same pair side by side
    members = []
    for t, table in enumerate(tables):
        m = list(table)
        random.Random(_derive(config.seed, "members", t)).shuffle(m)
        members.append(tuple(m))
    orders = seat_orders(k, config.seat_orders)
    tid = config.tournament_id
    slots: list[Slot] = []
    for deal in range(config.deals):
        for t, m in enumerate(members):
            seed = deck_seed(deal_key, tid, t, deal)
            for o, order in enumerate(orders):
                slots.append(
                    Slot(
                        slot=len(slots),
                        game_id=f"{tid}-t{t}-d{deal}-o{o}",
                        table=t,
                        deal=deal,
                        order=o,
                        deck_seed=seed,
                        seats=tuple(m[i] for i in order),
                    )
                )
    return slots
