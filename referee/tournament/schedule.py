"""What a tournament plays, and in what order: a pure function of its configuration and its deal key.

The config's seed fixes the tables and seat orders; the decks come from the tournament's secret deal key
(deals.py), or from the seed when the config says ``public_deals = true``.

Round robin at one table size. Every set of ``table_size`` entrants is a table, or, when ``tables`` asks for fewer
than there are sets, a balanced sample of tables. Each table plays ``deals`` deals, in one of two duplicate schemes:

- ``across`` (the default with more entrants than seats), as in duplicate bridge: the tables are grouped into
  sections of tables that share no entrant and no owner, and every table of a section plays the section's deals.
  Each seat's cards of a deal are held by one entrant per table of the section, and no entrant or owner ever
  receives the same deck twice.
- ``rotations`` / ``all``: each deal of a table is replayed once for each rotation of the seats (or each seat
  order), so every entrant holds every seat's cards once; this trusts the bots to forget the deck between games.

Either way a duplicate set, the games that share one deck, is ``(table, deal)`` of a slot: in ``across`` mode
``table`` numbers the section and ``order`` the table within it. Slots are ordered deal by deal, so after each
round of deals everyone has played about equally often.
"""

from __future__ import annotations

import hashlib
import itertools
import random

from referee.store import Slot as Slot  # the schedule's row; the store keeps it

from .config import TournamentConfig
from .counts import MAX_GAMES as MAX_GAMES  # the cap the config checks; callers read it here too
from .counts import possible_tables, seat_orders, table_count
from .counts import size as size
from .deals import DealKey, PublicDeals, deck_seed


def _derive(seed: int, *parts: object) -> int:
    """A 63-bit seed derived from the tournament seed, stable across Python versions and platforms."""
    text = "/".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


SEARCH_BUDGET = 200  # tables a lone table's search for a partner expands, at most (it bounds the time)
GROUPINGS = 8  # across tables: the deals cycle through this many groupings of the tables into sections, at most


def tables_for(
    names: tuple[str, ...], k: int, tables: int, seed: int, owners: dict[str, str] | None = None
) -> list[tuple[str, ...]]:
    """The tables (sets of entrants), in play order. With ``owners`` (duplicate across tables), no table seats two
    entrants of one owner, whose author would see both hands; and a sample draws its tables two by two, the
    second sharing no owner with the first, so that they can share their deals."""
    n = len(names)
    own = [owners[name] for name in names] if owners else None
    if table_count(n, k, tables, own) == possible_tables(n, k, own):
        sets = [
            tuple(names[i] for i in c)
            for c in itertools.combinations(range(n), k)
            if own is None or len({own[i] for i in c}) == k
        ]
        random.Random(_derive(seed, "tables")).shuffle(sets)
        return sets
    return _balanced_sample(names, k, table_count(n, k, tables, own), seed, owners)


def _balanced_sample(
    names: tuple[str, ...], k: int, count: int, seed: int, owners: dict[str, str] | None = None
) -> list[tuple[str, ...]]:
    """Greedy: each table takes the entrants who have played least (so appearances never differ by more than
    one), and among those, the ones who have met the table's members least; seeded ties, no table twice while
    a new one is possible. With ``owners``, an odd-numbered table is drawn, while enough are left, from the
    entrants who share no owner with the table before it."""
    rng = random.Random(_derive(seed, "sample"))
    n = len(names)
    plays = [0] * n
    met = [[0] * n for _ in range(n)]
    seen: set[frozenset[int]] = set()
    out: list[tuple[str, ...]] = []
    for t in range(count):
        free = list(range(n))
        if owners and t % 2:
            taken = {owners[name] for name in out[-1]}
            apart = [i for i in free if owners[names[i]] not in taken]
            free = apart if len(apart) >= k else free
        best: tuple[tuple[bool, int], list[int]] | None = None  # (cost, table)
        for _attempt in range(48):  # a few seeded greedy tries; keep the one that meets least and is new
            table: list[int] = []
            jitter = [rng.random() for _ in range(n)]
            while len(table) < k:
                held = {owners[names[i]] for i in table} if owners else set()
                pool = [i for i in free if i not in table and (not owners or owners[names[i]] not in held)]
                if not pool:  # the table before took too many owners: draw from everyone
                    pool = [i for i in range(n) if i not in table and (not owners or owners[names[i]] not in held)]
                least = min(plays[i] for i in pool)
                cands = [i for i in pool if plays[i] == least]
                table.append(min(cands, key=lambda i: (sum(met[i][j] for j in table), jitter[i])))
            key = frozenset(table)
            cost = (key in seen, sum(met[a][b] ** 2 for a, b in itertools.combinations(table, 2)))
            if best is None or cost < best[0]:
                best = (cost, table)
        assert best is not None  # the first try always sets it
        table = best[1]
        seen.add(frozenset(table))
        for a, b in itertools.combinations(table, 2):
            met[a][b] += 1
            met[b][a] += 1
        for i in table:
            plays[i] += 1
        out.append(tuple(names[i] for i in sorted(table)))
    return out


def sections(tables: list[tuple[str, ...]], owners: dict[str, str], tries: int = 8) -> list[list[int]]:
    """Groups the tables (by index) into sections whose tables share no owner, so that one deck can go to every
    table of a section. When a table is left alone, up to ``tries`` orders of the tables are tried (the given one,
    then fixed shuffles) and the first with the fewest lone tables is kept."""
    best: list[list[int]] | None = None
    for attempt in range(tries):
        order = list(range(len(tables)))
        if attempt:
            random.Random(attempt).shuffle(order)
        found = [[order[i] for i in s] for s in _sections([tables[i] for i in order], owners)]
        if best is None or _lone(found) < _lone(best):
            best = found
        if not _lone(best):
            break
    return best or []


def _lone(groups: list[list[int]]) -> int:
    return sum(len(s) == 1 for s in groups)


def _sections(tables: list[tuple[str, ...]], owners: dict[str, str]) -> list[list[int]]:
    """One try of ``sections``, in the given order of the tables.

    First fit in table order: each table joins the first section it can (at most as many tables as fit side by
    side). Then each table left alone joins a section it shares no owner with, or else looks for a partner along
    an alternating path, as in a matching: it pairs with a table U that it shares no owner with; U's old partner
    V then pairs with another table, and so on, until the path ends at another lone table or at a table taken from
    a section of three or more. A table stays alone only when the search (breadth first, at most SEARCH_BUDGET
    tables) finds no such path; its deals then have no other table to be compared with. That is always the case
    when the tables cannot all be paired, e.g. an odd number of tables and fewer than three tables' worth of
    entrants, or owners who each hold a seat at most tables."""
    bit = {owner: 1 << i for i, owner in enumerate(sorted(set(owners.values())))}
    owned = [sum({bit[owners[name]] for name in t}) for t in tables]  # each table's owners as a bit set
    cap = max(1, len(bit) // len(tables[0])) if tables else 1
    home: list[list[int]] = []  # home[i]: the section of table i (the same list object for all its tables)

    def apart(i: int, group: list[int]) -> bool:
        return not any(owned[i] & owned[j] for j in group)

    out: list[list[int]] = []
    for i in range(len(tables)):
        section = next((s for s in out if len(s) < cap and apart(i, s)), None)
        if section is None:
            out.append(section := [])
        section.append(i)
        home.append(section)

    def move(i: int, to: list[int]) -> None:
        home[i].remove(i)
        to.append(i)
        home[i] = to

    for lone in range(len(tables)):
        if len(home[lone]) != 1:
            continue
        if (host := next((s for s in out if len(s) >= 2 and apart(lone, s)), None)) is not None:
            move(lone, host)
            continue
        # breadth first along alternating paths: lone - u1 (v1) - u2 (v2) - ... - end
        came: dict[int, int] = {lone: -1}  # table -> the table it was reached from
        frontier, end, budget = [lone], None, SEARCH_BUDGET
        while frontier and end is None and budget > 0:
            nxt = []
            for x in frontier:
                budget -= 1
                for y in range(len(tables)):
                    if y in came or owned[x] & owned[y]:
                        continue
                    came[y] = x
                    if len(home[y]) != 2:  # another lone table, or one a big section can spare
                        end = y
                        break
                    (v,) = (j for j in home[y] if j != y)
                    if v not in came:
                        came[v] = y
                        nxt.append(v)
                if end is not None:
                    break
            frontier = nxt
        if end is None:
            continue
        # flip the path: end pairs with the table it was reached from, and so on back to the lone table
        y = end
        while y != lone:
            x = came[y]
            pair = [x, y]
            for t in pair:
                home[t].remove(t)
            out.append(pair)
            for t in pair:
                home[t] = pair
            y = came[x] if x != lone else lone
    return [s for s in out if s]


def build(config: TournamentConfig, key: bytes | None) -> list[Slot]:
    """The whole schedule. The same config gives the same games in the same order; with the same deal ``key``
    (the tournament's, from the store), the same decks. ``key`` is None only when the config has public deals."""
    if key is None and not config.public_deals:
        raise ValueError(f"tournament {config.tournament_id} needs its deal key (or public_deals = true)")
    deal_key = PublicDeals(config.seed) if config.public_deals else key
    assert deal_key is not None
    names = tuple(e.name for e in config.entrants)
    k = config.table_size
    owners = {e.name: e.owner or e.name for e in config.entrants}
    across = config.seat_orders == "across"
    tables = tables_for(names, k, config.tables, config.seed, owners if across else None)
    # each table's members in a seeded order, so rotations do not always put the same pair side by side
    members = []
    for t, table in enumerate(tables):
        m = list(table)
        random.Random(_derive(config.seed, "members", t)).shuffle(m)
        members.append(tuple(m))
    if across:
        return _across(config, members, owners, deal_key)
    orders = seat_orders(k, config.seat_orders)
    tid = config.tournament_id
    slots: list[Slot] = []
    for deal in range(config.deals):
        for t, at in enumerate(members):
            seed = deck_seed(deal_key, tid, t, deal)
            # every seat order already plays every neighbour; rotations turn the table's circle deal by deal
            at_table = at if config.seat_orders == "all" else circle(at, config.seed, t, deal)
            for o, order in enumerate(orders):
                slots.append(_slot(tid, len(slots), t, deal, o, seed, tuple(at_table[i] for i in order)))
    return slots


def game_id(tid: str, table: int, deal: int, order: int, attempt: int = 0) -> str:
    """The id of a game: its duplicate set and place in it, and, once its deal was dealt again, the attempt."""
    return f"{tid}-t{table}-d{deal}-o{order}" + (f"-a{attempt}" if attempt else "")


def circle(members: tuple[str, ...], seed: int, table: int, turn: int) -> tuple[str, ...]:
    """The table's members in the circle of seats of its ``turn``-th round of rotations: each of the (k - 1)!
    circles (who sits after whom) in turn, from a seeded one. A table that kept one circle for the whole tournament
    kept each member's neighbours, and in Abluxxen the seat after a player is not the seat before it: two identical
    bots at a table of 3 differ by where they sit, for the whole tournament, which no rating's uncertainty counts
    (the "separated" mark then marked two identical bots 0.105 of the time for 5%;
    docs/notes/2026-12-06-stats-round-four.md). At 2 seats there is one circle."""
    first, rest = members[0], members[1:]
    circles = list(itertools.permutations(rest))
    start = random.Random(_derive(seed, "circle", table)).randrange(len(circles))
    return (first, *circles[(start + turn) % len(circles)])


def _slot(tid: str, n: int, table: int, deal: int, order: int, seed: int, seats: tuple[str, ...]) -> Slot:
    """The ``n``-th game of the schedule, with the game id that names its duplicate set and place in it."""
    return Slot(n, game_id(tid, table, deal, order), table, deal, order, seed, seats)


def _across(
    config: TournamentConfig, members: list[tuple[str, ...]], owners: dict[str, str], deal_key: DealKey
) -> list[Slot]:
    """Duplicate across tables: each deal, the tables are grouped into sections, and every table of a section
    plays the section's deck. The grouping changes from deal to deal (the deals cycle through up to GROUPINGS of
    them, each from its own seeded order of the tables), so a table is compared with other tables each time and
    no pairing of strong and weak opponents sticks for the whole tournament. At deal d a table seats its members
    rotated by d, so over ``table_size`` deals each member holds every seat once, around the circle ``circle``
    gives those deals (a new one each ``table_size`` deals)."""
    k = config.table_size
    groupings = []
    for g in range(min(config.deals, GROUPINGS)):
        order = list(range(len(members)))
        random.Random(_derive(config.seed, "sections", g)).shuffle(order)
        groupings.append([[order[i] for i in s] for s in sections([members[i] for i in order], owners)])
    tid = config.tournament_id
    slots: list[Slot] = []
    for deal in range(config.deals):
        for sec, group in enumerate(groupings[deal % len(groupings)]):
            seed = deck_seed(deal_key, tid, sec, deal)  # the deck of the section's deal, at every table of it
            for o, t in enumerate(group):
                m = circle(members[t], config.seed, t, deal // k)
                slots.append(_slot(tid, len(slots), sec, deal, o, seed, tuple(m[(s + deal) % k] for s in range(k))))
    return slots
