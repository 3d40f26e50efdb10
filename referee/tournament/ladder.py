"""A ladder's tables: which entrants meet, as a pure function (docs/ladders.md).

A choice is made whenever a game slot is free, and only from
- the ratings over the results the ladder has seen so far (their number is stored with the choice);
- the idle entrants that may be seated (present, up, and playing fewer games than they may at once), with
  their owners, and the games already chosen for them;
- the free slots (at most that many tables), the config's seed and the choice's number, which break ties.

So every stored choice can be made again from the store (``ladder_run.replay``), whatever the timing of the
games around it.

How a choice is seated (``choose``):
1. Order the idle entrants by priority: new ones first (fewer than ``new_games`` games chosen, fewest first),
   then the unsettled (sigma at or above ``sigma_target``), most uncertain first, then the settled, fewest games
   first (their sigmas no longer steer the games); the seed breaks every tie. When a choice cannot seat everyone,
   this decides who plays.
2. Each entrant in that order that is not seated yet opens a table from its window (``_Field``): the field's mu
   order (the idle entrants and the rated entrants present but busy or down) is cut into windows of
   ``WINDOW * table_size`` places from its first place or its ``table_size``-th, as the seed says each choice,
   and the anchor's opponents are the free entrants nearest in mu to places of its window that no table of this
   choice holds yet (the idle entrants' places first, by priority). So entrants meet those up to a window away
   in mu, whose order is the least certain, and not always the same few. Never two of one owner at a table, nor
   a pair that met ``max_meetings`` times in the last ``meeting_window`` choices (0, the default: no such cap; a
   cap is raised by one, then two, then dropped for a table that cannot be filled under it). An entrant sits at
   one table a choice. Choices stored before the windows were made from blocks of ``table_size`` among the idle
   (``BLOCKS``), and for a day the field held every entrant rated so far, present or not (``WINDOWS``); each
   choice stores its rule, and ``replay`` uses it.
3. Stop at the free slots, at ``tables`` tables (0: no such cap), or at the games budget.

Each table then joins a deal set (``ladder_run.LadderHooks``): the tables of a set share one secret deck and no
owner, so each deal is compared across tables and no entrant or owner receives a deck twice.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .config import LadderSettings
from .schedule import _derive

# the pairing rules, numbered as a choice stores them (a rule once used is kept, so that ``ladder_run.replay``
# makes every stored choice again as it was made): the opponents from the anchor's block of k among the idle
# (choices stored before rules were numbered), or from its window of the field's mu order (``_Field``), the field
# being every entrant rated so far (``WINDOWS``: choices stored on 2026-12-07) or the entrants present
# (``PRESENT``: a superseded or retired version no longer holds a place). ``choose`` itself makes the last two
# alike: its caller passes the field (``others``, ``ladder_run.Book.choose``)
BLOCKS, WINDOWS, PRESENT = 1, 2, 3
RULES = (BLOCKS, WINDOWS, PRESENT)
RULE = PRESENT  # the rule new choices use
WINDOW = 2  # a window of the mu order holds this many tables' places: an anchor's opponents are drawn from it
FIRST_TRIES = 8  # how many first opponents a table tries before the pair cap is relaxed for it


@dataclass(frozen=True)
class Member:
    """An idle entrant at a choice: its rating over the results seen, and the games chosen for it before."""

    name: str
    owner: str
    mu: float
    sigma: float
    games: int  # games chosen for it in the choices before this one
    last: int = -1  # the table it was last seated at (a number the caller gives each table; -1: none yet)


class Meetings:
    """How often each pair met in the last ``window`` choices, kept one choice at a time."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.rounds: deque[list[tuple[str, ...]]] = deque()
        self.count: dict[str, dict[str, int]] = {}  # a -> b -> meetings (both ways round)

    def add_round(self, tables: Iterable[tuple[str, ...]]) -> None:
        tables = list(tables)
        self.rounds.append(tables)
        self._bump(tables, 1)
        if len(self.rounds) > self.window:
            self._bump(self.rounds.popleft(), -1)

    def _bump(self, tables: list[tuple[str, ...]], by: int) -> None:
        for t in tables:
            for a in t:
                mine = self.count.setdefault(a, {})
                for b in t:
                    if b != a:
                        n = mine.get(b, 0) + by
                        if n:
                            mine[b] = n
                        else:
                            del mine[b]


def choose(
    choice: int,
    members: Sequence[Member],
    settings: LadderSettings,
    table_size: int,
    seed: int,
    meetings: Meetings,
    budget_left: int | None = None,
    no_repeat: bool = False,
    others: Sequence[float] = (),
    rule: int = RULE,
) -> list[tuple[str, ...]]:
    """The tables of choice number ``choice``, each with its entrants in seat order (see the module's docstring).
    ``budget_left``: at most this many tables (the free slots, the budget). ``no_repeat``: no table of entrants
    who were all last seated at one table together (while other games play, the ladder waits for them to mix).
    ``others``: the mu of the field's entrants that are not idle (``Book.choose`` says which). ``rule``: one of
    ``RULES``."""
    if rule not in RULES:
        raise ValueError(f"unknown ladder pairing rule {rule}: this abluxx knows {RULES}")
    rng = random.Random(_derive(seed, "ladder", choice))
    jitter = {m.name: rng.random() for m in members}
    new = settings.new_games

    def priority(m: Member) -> tuple:
        if m.games < new:
            return (0, m.games, -m.sigma, jitter[m.name])
        if m.sigma >= settings.sigma_target:
            return (1, 0, -m.sigma, jitter[m.name])
        # settled: fewest games first, not by sigma (TrueSkill keeps the sigma of an entrant whose results are
        # expected, the top and bottom of the field, high), so every settled entrant keeps being matched evenly
        return (2, m.games, 0.0, jitter[m.name])

    order = sorted(members, key=priority)
    rank = {m.name: i for i, m in enumerate(order)}
    want = len(members) // table_size
    if settings.tables:
        want = min(want, settings.tables)
    if budget_left is not None:
        want = min(want, budget_left)
    seating = _Seating(members, jitter)
    places: _Blocks | _Field
    if rule == BLOCKS:
        places = _Blocks(seating, table_size, rng.randrange(table_size))
    else:
        places = _Field(members, others, table_size, table_size * rng.randrange(WINDOW), jitter, rank, rng)
    tables: list[tuple[str, ...]] = []
    for m in order:
        if len(tables) >= want:
            break
        if seating.free(m.name):
            table = seating.table_for(m, places.targets(m), meetings, settings.max_meetings, no_repeat)
            if table is not None:
                places.seat(table)
                rng.shuffle(table)  # seats in a seeded order, so that nobody always holds seat 0's cards
                tables.append(tuple(table))
    return tables


class _Blocks:
    """The ``BLOCKS`` rule: the idle entrants' mu order cut into blocks of k from position ``offset`` on (wrapping
    round); an anchor's targets are the mu of its block-mates."""

    def __init__(self, seating: _Seating, k: int, offset: int) -> None:
        self.seating, self.k, self.offset = seating, k, offset

    def targets(self, anchor: Member) -> list[float]:
        mus, k = self.seating.mus, self.k
        n, a = len(mus), self.seating.index[anchor.name]
        start = a - (a - self.offset) % k
        return [mus[(start + j) % n] for j in range(k) if (start + j) % n != a]

    def seat(self, names: Iterable[str]) -> None:
        pass


class _Field:
    """The field's mu order: the idle entrants and the rest (busy, or absent), cut into **windows** of
    ``WINDOW * k`` places from k places or none, as the seed says (a last part with fewer than k places joins its
    neighbour). An anchor's opponents are taken from the places of its window that no table of this choice
    holds yet (the idle entrants' first, by the choice's priority, then the rest's at random), and the free entrant
    nearest in mu to each place is seated. When the window has too few places left, the nearest places outside it
    make up the number. ``rank``: the choice's priority of each idle entrant; ``rng``: the choice's generator."""

    def __init__(self, members: Sequence[Member], others: Sequence[float], k: int, offset: int,
                 jitter: Mapping[str, float], rank: Mapping[str, int], rng: random.Random) -> None:  # fmt: skip
        order = sorted([(m.mu, 0, jitter[m.name], m.name) for m in members] + [(mu, 1, 0.0, "") for mu in others])
        self.mus = [mu for mu, *_ in order]
        self.place = {name: i for i, (*_, name) in enumerate(order) if name}
        self.name = {i: name for name, i in self.place.items()}
        self.used: set[int] = set()
        self.k, self.rank, self.rng = k, rank, rng
        n, width = len(order), WINDOW * k
        cuts = [0, *range(offset or width, n, width), n]  # offset 0 or k: the first part is never short
        parts = [list(p) for p in itertools.pairwise(cuts)]
        if len(parts) > 1 and parts[-1][1] - parts[-1][0] < k:
            parts[-2:] = [[parts[-2][0], parts[-1][1]]]
        self.window = [w for w, (a, b) in enumerate(parts) for _ in range(a, b)]
        self.parts = parts

    def targets(self, anchor: Member) -> list[float]:
        """The mu of the k - 1 places taken for ``anchor`` (the class's docstring)."""
        at = self.place[anchor.name]
        low, high = self.parts[self.window[at]]
        inside = [i for i in range(low, high) if i != at and i not in self.used]
        idle = sorted((i for i in inside if i in self.name), key=lambda i: self.rank[self.name[i]])
        rest = [i for i in inside if i not in self.name]
        self.rng.shuffle(rest)
        taken = [*idle, *rest][: self.k - 1]
        below, above = low - 1, high  # the window spent: the nearest free places outside it, nearer first
        while len(taken) < self.k - 1 and (below >= 0 or above < len(self.mus)):
            if above >= len(self.mus) or (below >= 0 and at - below <= above - at):
                i, below = below, below - 1
            else:
                i, above = above, above + 1
            if i not in self.used:
                taken.append(i)
        return [self.mus[i] for i in taken]

    def seat(self, names: Iterable[str]) -> None:
        self.used.update(self.place[n] for n in names)


def repeats(lasts: Iterable[int]) -> bool:
    """Whether entrants whose last tables are ``lasts`` (-1: none yet) were all last seated at one table together:
    the table ``choose``'s ``no_repeat`` refuses."""
    seen = set(lasts)
    return len(seen) == 1 and -1 not in seen


class _Seating:
    """The entrants in mu order. The free ones form a doubly linked list (a seated entrant is unlinked), and two
    union-find arrays give the nearest free entrant at or beside any position, so a search for opponents near a
    mu never walks over the seated."""

    def __init__(self, members: Sequence[Member], jitter: Mapping[str, float]) -> None:
        by_mu = sorted(members, key=lambda m: (m.mu, jitter[m.name]))
        self.members = by_mu
        self.mus = [m.mu for m in by_mu]
        self.index = {m.name: i for i, m in enumerate(by_mu)}
        n = len(by_mu)
        self.prev = list(range(-1, n - 1))
        self.next = list(range(1, n + 1))
        self.seated = [False] * n
        self.right = list(range(n + 1))  # right[i]: a step towards the first free position >= i (n: none)
        self.left = list(range(n + 1))  # left[i + 1]: a step towards the last free position <= i (-1: none)

    def free(self, name: str) -> bool:
        return not self.seated[self.index[name]]

    def _take(self, i: int) -> None:
        self.seated[i] = True
        p, q = self.prev[i], self.next[i]
        if p >= 0:
            self.next[p] = q
        if q < len(self.members):
            self.prev[q] = p
        self.right[i] = i + 1
        self.left[i + 1] = i

    def _repeats(self, picked: list[int]) -> bool:
        return repeats(self.members[i].last for i in picked)

    @staticmethod
    def _find(parent: list[int], i: int) -> int:
        root = i
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:
            parent[i], i = root, parent[i]
        return root

    def table_for(
        self, anchor: Member, targets: list[float], meetings: Meetings, cap: int, no_repeat: bool
    ) -> list[str] | None:
        """``anchor`` and, for each of the ``targets`` (mus), the free entrant nearest to it that fits (owners
        apart, pairs under the cap; the cap raised by one, then two, then dropped, when that fails), all then
        taken; None when no table fits."""
        a = self.index[anchor.name]
        limits = (cap, cap + 1, cap + 2, None) if cap else (None,)  # the cap (0: none) relaxed step by step
        for limit in limits:
            picked = self._fill(a, targets, meetings, limit, no_repeat)
            if picked is not None:
                for i in picked:
                    self._take(i)
                return [self.members[i].name for i in picked]
        return None

    def _fill(
        self, a: int, targets: list[float], meetings: Meetings, cap: int | None, no_repeat: bool
    ) -> list[int] | None:
        """The anchor ``a`` and, for each target, the free entrant nearest to it that fits; when the later ones
        cannot be found (or, with ``no_repeat``, the table would be one table's entrants again), the first opponent
        is taken further away, up to ``FIRST_TRIES`` times."""
        tried: list[int] = []
        for _ in range(FIRST_TRIES):  # a table has two seats at least: there is a first target
            first = self._pick(targets[0], [a], meetings, cap, tried)
            if first is None:
                return None
            picked = [a, first]
            for target in targets[1:]:
                i = self._pick(target, picked, meetings, cap)
                if i is None:
                    break
                picked.append(i)
            if len(picked) == len(targets) + 1 and not (no_repeat and self._repeats(picked)):
                return picked
            tried.append(first)
        return None

    def _pick(
        self, target: float, picked: list[int], meetings: Meetings, cap: int | None, skip: Sequence[int] = ()
    ) -> int | None:
        """The free entrant nearest in mu to ``target`` that is not in ``picked``, shares no owner with them and
        met none of them ``cap`` times (None: no cap); None when there is none."""
        n = len(self.members)
        p = bisect.bisect_left(self.mus, target)
        right = self._find(self.right, p)
        left = self._find(self.left, p) - 1
        owners = {self.members[j].owner for j in picked}
        names = [self.members[j].name for j in picked]
        while left >= 0 or right < n:
            go_left = right >= n or (left >= 0 and target - self.mus[left] <= self.mus[right] - target)
            i = left if go_left else right
            if go_left:
                left = self.prev[left]
            else:
                right = self.next[right]
            m = self.members[i]
            if i in picked or i in skip or m.owner in owners:
                continue
            if cap is not None:
                mine = meetings.count.get(m.name)
                if mine and any(mine.get(name, 0) >= cap for name in names):
                    continue
            return i
        return None
