"""Running a ladder (docs/ladders.md): tables chosen whenever a game slot and idle entrants are
free, from every result seen so far, each choice stored before any of its games starts, played through
``play_slots`` like a round robin's schedule. There are no rounds: a slow bot delays only its own games.

``Book`` holds what a choice is made from, rebuilt from the store on resume; ``LadderHooks`` feeds ``play_slots``
new tables whenever a slot is free, seats them into deal sets, and keeps absent bots aside (``Presence``);
``replay`` recomputes every stored choice from the store; ``run_ladder`` creates or resumes the ladder and plays
it until its games budget is spent (or forever, until it is stopped).
"""

from __future__ import annotations

import statistics
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TextIO

from referee.log import get_logger
from referee.match.spec import GameResult, GameSpec
from referee.rating import DRAW_PROBABILITY_BEFORE, MU, SIGMA, Rating, Ratings
from referee.store import SqliteStore
from referee.store import ladder as ladder_store
from referee.store.ladder import Choice, LadderEntrant, ResultRow

from . import deals
from .config import LadderSettings, TournamentConfig, WorkerSettings
from .ladder import BLOCKS, RULE, WINDOWS, Meetings, Member, choose, repeats
from .presence import Attendance, Presence
from .progress import Progress
from .runner import (
    GameHooks,
    OnDecision,
    Outcome,
    PlayerFactory,
    check_deal_key,
    finish_tournament,
    play_slots,
    standings_of,
)
from .schedule import Slot, _slot

MAX_REPEAT_WAIT_S = 5.0  # the longest an ended table's entrants wait to mix before they may be seated together again
DEAL_TABLE = 0  # a continuous ladder's slots: table 0, deal = the deal set's number, order = its table in the set
GONE_FAULTS = ("disconnected", "unreachable")  # a seat retired for these mid-game: its bot is gone, so it is down


class Book:
    """What the next choice is made from: every result seen so far (in the order seen; the ratings over them),
    each entrant's scheduled games and games in flight, and the recent meetings. Built the same way from the
    store on a resume as it was kept during the run, and by ``replay``."""

    def __init__(self, config: TournamentConfig) -> None:
        assert config.ladder is not None
        self.settings: LadderSettings = config.ladder
        self.table_size, self.seed = config.table_size, config.seed
        self.ratings = Ratings(())  # of today's draw probability; ``rated_with`` another for a stored choice's
        self.seen = 0  # results fed to the ratings
        self.choices = 0  # choices made; the next one's number
        self.games: Counter[str] = Counter()  # games chosen for each entrant (absent tables included)
        self.busy: Counter[str] = Counter()  # games chosen for each entrant and not finished
        self.meetings = Meetings(self.settings.meeting_window)
        self.scheduled = 0  # slots in the schedule (the budget's count: absent tables leave it)
        self.pending = 0  # slots chosen and not finished
        self.next_deal = 0
        self.last: dict[str, int] = {}  # the table (numbered as recorded) each entrant was last seated at
        self.tables = 0
        self.view: dict[str, Rating] = {}  # the ratings after the last result seen

    @classmethod
    def load(cls, store: SqliteStore, config: TournamentConfig) -> Book:
        book = cls(config)
        tid = config.tournament_id
        slots = store.slots(tid)
        by_no = {s.slot: s for s in slots}
        for r in ladder_store.rounds(store, tid):
            tables = r.tables
            if tables is None:  # a round stored before choices: its tables are its slots
                tables = tuple(by_no[n].seats for n in range(r.first_slot, r.first_slot + r.games) if n in by_no)
            book.record(tables)
        for res in ladder_store.results(store, tid):
            book.add_result(res.seats, res.places)
        for s in store.slots(tid, pending_only=True):
            book.busy.update(s.seats)
            book.pending += 1
        book.scheduled = len(slots)
        book.next_deal = 1 + max((s.deal for s in slots), default=-1)
        return book

    def add_result(self, seats: tuple[str, ...], places: tuple[int, ...]) -> None:
        """A result seen: the ratings take it in at once, so that what a choice reads of them depends on the
        results seen alone, not on when (or how often) choices were asked for (``replay`` asks only at stored
        choices)."""
        for name in seats:
            self.ratings.join(name)
        self.ratings.add(seats, places)
        self.seen += 1
        self.view = self.ratings.all()

    def rated_with(self, draw_probability: float, seen: Sequence[ResultRow]) -> None:
        """The ratings of another draw probability (a stored choice's, made before it was 0.01) over ``seen``, the
        results seen so far, taken in the same way, one by one: what a book of that draw probability would read now
        (only ``replay`` asks: a running ladder keeps no results in memory)."""
        if draw_probability != self.ratings.draw_probability:
            self.ratings, self.view, self.seen = Ratings((), draw_probability=draw_probability), {}, 0
            for res in seen:
                self.add_result(res.seats, res.places)

    def budget_left(self) -> int | None:
        return None if self.settings.games is None else self.settings.games - self.scheduled

    def choose(
        self,
        idle: Sequence[LadderEntrant],
        free: int,
        in_flight: int = 0,
        rule: int = RULE,
        present: Collection[str] | None = None,
    ) -> list[tuple[str, ...]]:
        """At most ``free`` tables of the ``idle`` entrants (in this order: it seeds the ties) for the next choice,
        by pairing ``rule``. With ``in_flight`` (the games in flight, when the ladder waits for entrants to mix; 0
        when it does not), no table seats again the entrants of one table that just ended: they wait for others to
        come free and mix. ``present``: the names of the entrants present (None: every entrant rated so far is);
        the windows' field holds those rated and not idle (under ``WINDOWS``, every one rated)."""
        prior = Rating(MU, SIGMA)  # an entrant with no result seen yet
        members, names = [], {e.name for e in idle}
        field = None if rule == WINDOWS else present  # None: every entrant rated so far holds a place
        others = [r.mu for name, r in self.view.items() if name not in names and (field is None or name in field)]
        for e in idle:
            r = self.view.get(e.name, prior)
            members.append(Member(e.name, e.owner, r.mu, r.sigma, self.games[e.name], self.last.get(e.name, -1)))
        return choose(self.choices, members, self.settings, self.table_size, self.seed, self.meetings, free,
                      no_repeat=in_flight > 0, others=others, rule=rule)  # fmt: skip

    def repeats(self, table: tuple[str, ...]) -> bool:
        """Whether all of ``table`` were last seated at one table together (what ``choose``'s no_repeat avoids)."""
        return repeats(self.last.get(n, -1) for n in table)

    def record(self, tables: Sequence[tuple[str, ...]]) -> None:
        """A choice made: its tables count as games and meetings from the next choice on."""
        self.choices += 1
        for t in tables:
            self.games.update(t)
            self.last.update(dict.fromkeys(t, self.tables))
            self.tables += 1
        self.meetings.add_round(tables)


def replay(store: SqliteStore, config: TournamentConfig) -> list[tuple[int, tuple, tuple]]:
    """Every stored choice recomputed from the store alone: (choice, its stored tables, the tables ``choose``
    gives for the results it saw, its idle entrants and its free slots). A ladder's history checks out when the
    two agree for every choice (rounds stored before choices keep no what-from and are not recomputed)."""
    tid = config.tournament_id
    book = Book(config)
    results = ladder_store.results(store, tid)
    by_name = {e.name: e for e in ladder_store.entrants(store, tid)}
    slots = {s.slot: s for s in store.slots(tid)}
    out = []
    for r in ladder_store.rounds(store, tid):
        if r.tables is None or r.results_seen is None or r.idle is None or r.free is None:
            book.record(tuple(slots[n].seats for n in range(r.first_slot, r.first_slot + r.games) if n in slots))
            continue
        for res in results[book.seen : r.results_seen]:
            book.add_result(res.seats, res.places)
        present = {n for n, e in by_name.items() if e.present(r.round)}
        book.rated_with(DRAW_PROBABILITY_BEFORE if r.draw_probability is None else r.draw_probability,
                        results[: book.seen])  # fmt: skip
        again = book.choose([by_name[n] for n in r.idle], r.free, r.in_flight or 0, r.rule or BLOCKS, present)
        out.append((r.round, r.tables, tuple(again)))
        book.record(r.tables)
    return out


class LadderHooks(GameHooks):
    """``play_slots``' source of games for a ladder: whenever a game slot is free, tables of the idle entrants
    that may be seated, stored before they are handed out. Each table joins the oldest open deal set none of whose
    tables has one of its owners, or opens a new one; a set closes when it is full (``deal_tables``) or when its
    last game ends, and its deck stays secret until then (``SqliteStore.deal_in_play``). ``inner`` (the service's
    hooks) sees every game; ``slots``: the run's concurrency."""

    open_ended = True
    absent_aborts = True

    def __init__(
        self,
        store: SqliteStore,
        config: TournamentConfig,
        book: Book,
        addresses: dict[str, str],
        inner: GameHooks | None = None,
        *,
        slots: int,
        presence: Attendance | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        assert config.ladder is not None
        self.store, self.config, self.book, self.addresses = store, config, book, addresses
        self.settings = config.ladder
        self.tid = config.tournament_id
        self.inner = inner or GameHooks()
        key = None if config.public_deals else store.deal_key(self.tid)
        self.key: deals.DealKey = deals.PublicDeals(config.seed) if key is None else key
        self.log = get_logger(tournament=self.tid)
        self.stopped = False  # True: no more choices (the service's StopTournament); those stored are played
        self.slots = min(slots, self.settings.max_concurrent or slots)
        self.presence: Attendance = presence or Presence()
        self.clock = clock
        self.began, self.started = clock(), 0  # for games_per_hour
        self.open: dict[int, deals.DealSet] = {}
        self.waiting: str | None = None  # why no table can be seated now, while that is so
        self.began_at: dict[int, float] = {}  # slot -> when its game started
        self.lengths: deque[float] = deque(maxlen=32)  # the last games' lengths: how long a wait to mix may be
        self.blocked_at: float | None = None  # since when only tables that repeat an ended one could be seated
        ladder_store.close_deals(store, self.tid)  # a set left open by an earlier run takes no more tables

    def should_continue(self) -> bool:
        return self.inner.should_continue()

    def on_start(self, slot: Slot, spec: GameSpec) -> OnDecision | None:
        self.started += 1
        self.began_at[slot.slot] = self.clock()
        return self.inner.on_start(slot, spec)

    def on_absent(self, slot: Slot, absent: dict[str, str]) -> None:
        ladder_store.drop_absent(self.store, self.tid, slot.slot)
        self.book.scheduled -= 1
        for name, why in absent.items():
            self.presence.absent(name, why)
        self.log.warning("table not played: bots absent at its start", game_id=slot.game_id, absent=absent)
        self.inner.on_absent(slot, absent)

    def on_done(self, slot: Slot, result: GameResult | None) -> None:
        book = self.book
        book.pending -= 1
        book.busy.subtract(slot.seats)
        if (began := self.began_at.pop(slot.slot, None)) is not None:
            self.lengths.append(self.clock() - began)
        if result is not None:
            ladder_store.add_result(self.store, self.tid, ResultRow(book.seen, slot.slot, slot.seats, result.places))
            book.add_result(slot.seats, result.places)
            for name, st in zip(slot.seats, result.seats, strict=True):
                if st.retired and any(st.faults.get(f) for f in GONE_FAULTS):
                    self.presence.absent(name, st.first_fault)
                else:
                    self.presence.played(name)
        ds = self.open.get(slot.deal)
        if ds is not None:
            ds.playing -= 1
            if ds.playing == 0:  # nobody plays it now: no table joins it later, and its deck may be revealed
                del self.open[slot.deal]
                ladder_store.close_deals(self.store, self.tid, slot.deal)
        self.inner.on_done(slot, result)

    def _free(self) -> int:
        """How many tables may start now: free slots, the pacing and the budget allowing."""
        free = self.slots - self.book.pending
        if self.settings.games_per_hour:
            paced = int((self.clock() - self.began) * self.settings.games_per_hour / 3600) + 1
            free = min(free, paced - self.started - self.book.pending)
        left = self.book.budget_left()
        return free if left is None else min(free, left)

    def more_slots(self) -> list[Slot] | None:
        if self.stopped or self.book.budget_left() == 0:
            return None
        if (free := self._free()) <= 0:
            return []
        book = self.book
        present = [e for e in ladder_store.entrants(self.store, self.tid) if e.present(book.choices)]
        for e in present:
            if e.address and e.name not in self.addresses:
                self.addresses[e.name] = e.address  # a bot submitted while the ladder runs
        up = [e for e in present if self.presence.available(e.name)]
        idle = [e for e in up if book.busy[e.name] < e.games_at_once]
        mixing = book.pending > 0 and not self._waited_to_mix()
        names = {e.name for e in present}
        tables = book.choose(idle, free, book.pending if mixing else 0, present=names)
        if not tables and mixing and book.choose(idle, free, 0, present=names):
            self.blocked_at = self.blocked_at or self.clock()  # seatable, but only as an ended table again: wait
            return []
        self.blocked_at = None
        if not tables:
            self.waiting = self._why_waiting(present, up, idle)
            if not self.settings.open and not book.pending and not self._could_seat(present):
                return None  # a file's ladder whose entrants can never fill a table: over
            return []
        self.waiting = None
        for e in present:
            if not self.presence.available(e.name):
                self.presence.missed(e.name)
        return self._store_choice(present, idle, free, tables, book.pending if mixing else 0)

    def _mix_wait(self) -> float:
        """How long an ended table's entrants wait for others to mix with: the median length of the last games
        (another game is then likely to have ended), at most MAX_REPEAT_WAIT_S; 1 s before any game ended."""
        return min(MAX_REPEAT_WAIT_S, statistics.median(self.lengths)) if self.lengths else 1.0

    def _waited_to_mix(self) -> bool:
        return self.blocked_at is not None and self.clock() - self.blocked_at >= self._mix_wait()

    def wake_in(self) -> float | None:
        """When to ask again without a game ending: once the wait to mix is over, or the pace allows a game."""
        now, waits = self.clock(), []
        if self.blocked_at is not None:
            waits.append(max(0.0, self.blocked_at + self._mix_wait() - now))
        if rate := self.settings.games_per_hour:
            waits.append(max(0.0, self.began + (int((now - self.began) * rate / 3600) + 1) * 3600 / rate - now))
        return min(waits) if waits else None

    def _could_seat(self, entrants: list[LadderEntrant]) -> bool:
        return len({e.owner for e in entrants}) >= self.config.table_size

    def _why_waiting(self, present: list[LadderEntrant], up: list[LadderEntrant], idle: list[LadderEntrant]) -> str:
        k = self.config.table_size
        owners = len({e.owner for e in idle})
        down = len(present) - len(up)
        return (f"{len(idle)} idle entrants of {owners} owners ({len(present)} entrants, {down} down); a table of "
                f"{k} needs {k} idle entrants of {k} owners")  # fmt: skip

    def _store_choice(
        self,
        present: list[LadderEntrant],
        idle: list[LadderEntrant],
        free: int,
        tables: list[tuple[str, ...]],
        in_flight: int,
    ) -> list[Slot]:
        book = self.book
        owners = {e.name: e.owner for e in present}
        per_set = self.settings.deal_tables or max(1, len(set(owners.values())) // self.config.table_size)
        slots: list[Slot] = []
        opened: list[tuple[int, int]] = []
        closed: list[int] = []
        first = ladder_store.next_slot(self.store, self.tid)
        for t in tables:
            ds = self._deal_set({owners[n] for n in t}, opened)
            slots.append(_slot(self.tid, first + len(slots), DEAL_TABLE, ds.deal, ds.tables, ds.deck_seed, t))
            ds.tables += 1
            ds.playing += 1
            ds.owners |= {owners[n] for n in t}
            if ds.tables >= per_set:
                closed.append(ds.deal)
                del self.open[ds.deal]
        choice = Choice(book.choices, slots, book.seen, tuple(e.name for e in idle), free, tuple(tables),
                        tuple(opened), tuple(closed), in_flight, RULE, book.ratings.draw_probability)  # fmt: skip
        ladder_store.add_choice(self.store, self.tid, choice)
        book.record(tables)
        book.scheduled += len(slots)
        book.pending += len(slots)
        for t in tables:
            book.busy.update(t)
        self.log.info("ladder tables chosen", choice=choice.number, tables=len(slots), idle=len(idle),
                      present=len(present), results_seen=book.seen)  # fmt: skip
        return slots

    def _deal_set(self, owners: set[str], opened: list[tuple[int, int]]) -> deals.DealSet:
        """The oldest open deal set with none of ``owners`` at its tables, or a new one (added to ``opened``)."""
        for ds in self.open.values():  # in the order they opened
            if ds.owners.isdisjoint(owners):
                return ds
        book = self.book
        ds = deals.DealSet(book.next_deal, deals.deck_seed(self.key, self.tid, DEAL_TABLE, book.next_deal), set())
        book.next_deal += 1
        self.open[ds.deal] = ds
        opened.append((ds.deal, ds.deck_seed))
        return ds


def file_entrants(config: TournamentConfig) -> list[LadderEntrant]:
    """The entrants a ladder's file lists, all present from its first choice."""
    assert config.ladder is not None
    at_once = config.ladder.games_at_once
    return [LadderEntrant(e.name, e.owner or e.name, e.name, address=e.address, policy=e.policy, command=e.command,
                          games_at_once=at_once) for e in config.entrants]  # fmt: skip


@dataclass
class Opened:
    """A ladder created or found in the store, with its book."""

    book: Book
    resumed: bool


def open_ladder(store: SqliteStore, config: TournamentConfig, source: str) -> Opened:
    """Create the ladder ``config`` names (with a fresh secret deal key, unless public), or find it; its file's
    entrants are recorded as present from its first choice either way."""
    tid = config.tournament_id
    row = store.tournament(tid)
    if row is None:
        store.create_tournament(config, [], source, None if config.public_deals else deals.new_key())
    check_deal_key(store, config)
    ladder_store.join(store, tid, file_entrants(config))
    return Opened(Book.load(store, config), row is not None and row.done > 0)


def spent(store: SqliteStore, config: TournamentConfig) -> bool:
    """Whether the ladder's games budget is scheduled and every game of it played."""
    assert config.ladder is not None
    row = store.tournament(config.tournament_id)
    budget = config.ladder.games
    return row is not None and budget is not None and row.games >= budget and row.done == row.games


async def run_ladder(
    config: TournamentConfig,
    store: SqliteStore,
    player: PlayerFactory,
    *,
    source: str = "",
    concurrency: int | None = None,
    progress: bool = True,
    workers: WorkerSettings | None = None,
    hooks: GameHooks | None = None,
    games_log: TextIO | None = None,
) -> Outcome:
    """Create (or resume) the ladder ``config`` names and play it until its games budget is spent, or, without
    one, until it is stopped (Ctrl-C; rerun the file to resume). Same entrants, workers and time control as
    ``run_tournament``."""
    from .play import open_games

    assert config.ladder is not None
    tid = config.tournament_id
    opened = open_ladder(store, config, source)
    played, crashes = 0, []
    row = store.tournament(tid)
    assert row is not None
    if row.finished_at is None and not spent(store, config):
        async with open_games(workers or config.workers, config, store, player) as (play, addresses, scheduled):
            c = concurrency or config.concurrency
            ladder_hooks = LadderHooks(store, scheduled, opened.book, addresses, hooks, slots=c)
            budget = config.ladder.games
            bar = Progress(budget, row.done, enabled=progress, games_log=games_log) if budget else None
            played, _ = await play_slots(store, scheduled, play, addresses, c, bar, ladder_hooks)
        crashes = list(getattr(addresses, "crashes", []))  # as run_tournament: told once the fleet has closed
    if spent(store, config):
        final, json_path, csv_path = finish_tournament(store, tid)
    else:
        from .runner import write_standings

        final = standings_of(store, tid)
        json_path, csv_path = write_standings(store, final)
    return Outcome(tid, final, played, opened.resumed, json_path, csv_path, crashes)
