"""Running a ladder (docs/tournaments.md, "Ladders"): rounds chosen as results come in, each stored before any
of its games starts, played through ``play_slots`` like a round robin's schedule.

``Book`` holds what a round is chosen from, rebuilt from the store on resume; ``LadderHooks`` feeds
``play_slots`` a new round whenever the results it needs (through round k - LAG) are in; ``run_ladder`` creates or
resumes the ladder and plays it until its games budget is spent (or forever, until it is stopped).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TextIO

from referee.log import get_logger
from referee.match.spec import GameResult, GameSpec
from referee.rating import Ratings
from referee.store import SqliteStore
from referee.store import ladder as ladder_store
from referee.store.ladder import LadderEntrant

from . import deals
from .config import LadderSettings, TournamentConfig, WorkerSettings
from .ladder import LAG, Meetings, Member, choose, round_slots
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
from .schedule import Slot


class Book:
    """What the next round is chosen from: the rounds chosen so far, their results, the ratings over the results
    through the lagged round (applied in schedule order), each entrant's scheduled games and the recent
    meetings. Built the same way from the store on a resume as it was kept during the run."""

    def __init__(self, config: TournamentConfig) -> None:
        assert config.ladder is not None
        self.settings: LadderSettings = config.ladder
        self.table_size, self.seed = config.table_size, config.seed
        self.ratings = Ratings(())
        self.rated = 0  # rounds 0 .. rated - 1 are in the ratings
        self.rounds: list[list[Slot]] = []
        self.results: dict[int, tuple[tuple[str, ...], tuple[int, ...]]] = {}  # slot -> (seats, places)
        self.games: Counter[str] = Counter()
        self.meetings = Meetings(self.settings.meeting_window)
        self.scheduled = 0

    @classmethod
    def load(cls, store: SqliteStore, config: TournamentConfig) -> Book:
        book = cls(config)
        tid = config.tournament_id
        slots = store.slots(tid)
        for r in ladder_store.rounds(store, tid):
            book.add_round(slots[r.first_slot : r.first_slot + r.games])
        for g in store.games(tid):
            book.add_result(g.slot, g.names, g.places)
        return book

    def add_round(self, slots: list[Slot]) -> None:
        self.rounds.append(slots)
        self.scheduled += len(slots)
        for s in slots:
            self.games.update(s.seats)
        self.meetings.add_round(s.seats for s in slots)

    def add_result(self, slot: int, seats: tuple[str, ...], places: tuple[int, ...]) -> None:
        self.results[slot] = (seats, places)

    def ready(self, round_no: int) -> bool:
        """Whether every game of the rounds through ``round_no - LAG`` has its result."""
        return all(
            all(s.slot in self.results for s in self.rounds[r]) for r in range(self.rated, round_no - LAG + 1)
        )

    def budget_left(self) -> int | None:
        return None if self.settings.games is None else self.settings.games - self.scheduled

    def choose(self, present: list[LadderEntrant]) -> list[tuple[str, ...]]:
        """The tables of the next round, for the entrants ``present`` at its start."""
        round_no = len(self.rounds)
        while self.rated <= round_no - LAG:
            for s in self.rounds[self.rated]:
                for name in s.seats:
                    self.ratings.join(name)
                self.ratings.add(*self.results.pop(s.slot))
            self.rated += 1
        members = []
        for e in present:
            self.ratings.join(e.name)
            r = self.ratings.get(e.name)
            members.append(Member(e.name, e.owner, r.mu, r.sigma, self.games[e.name]))
        return choose(round_no, members, self.settings, self.table_size, self.seed, self.meetings, self.budget_left())


class LadderHooks(GameHooks):
    """``play_slots``' source of games for a ladder: a new round whenever its lagged results are in, stored
    before it is handed out. ``inner`` (the service's hooks) sees every game; ``open_entry``: with too few
    entrants, wait for submissions instead of ending."""

    open_ended = True

    def __init__(
        self,
        store: SqliteStore,
        config: TournamentConfig,
        book: Book,
        addresses: dict[str, str],
        inner: GameHooks | None = None,
    ) -> None:
        self.store, self.config, self.book, self.addresses = store, config, book, addresses
        self.tid = config.tournament_id
        self.inner = inner or GameHooks()
        key = None if config.public_deals else store.deal_key(self.tid)
        self.key: deals.DealKey = deals.PublicDeals(config.seed) if key is None else key
        self.log = get_logger(tournament=self.tid)
        self.stopped = False  # True: no more rounds (the service's StopTournament); those stored are played

    def should_continue(self) -> bool:
        return self.inner.should_continue()

    def on_start(self, slot: Slot, spec: GameSpec) -> OnDecision | None:
        return self.inner.on_start(slot, spec)

    def on_done(self, slot: Slot, result: GameResult | None) -> None:
        if result is not None:
            self.book.add_result(slot.slot, slot.seats, result.places)
        self.inner.on_done(slot, result)

    def more_slots(self) -> list[Slot] | None:
        if self.stopped:
            return None
        out: list[Slot] = []
        book = self.book
        while (left := book.budget_left()) is None or left > 0:
            round_no = len(book.rounds)
            if not book.ready(round_no):
                return out
            present = [e for e in ladder_store.entrants(self.store, self.tid) if e.present(round_no)]
            for e in present:
                if e.address and e.name not in self.addresses:
                    self.addresses[e.name] = e.address  # a bot submitted while the ladder runs
            tables = book.choose(present)
            if not tables:  # too few entrants (of different owners) to seat a table
                return out if out or (self.config.ladder and self.config.ladder.open) else None
            owners = {e.name: e.owner for e in present}
            slots = round_slots(self.tid, round_no, tables, owners, self.key, book.scheduled)
            ladder_store.add_round(self.store, self.tid, round_no, slots)
            book.add_round(slots)
            self.log.info("ladder round chosen", round=round_no, tables=len(slots), present=len(present))
            out.extend(slots)
        return out or None


def file_entrants(config: TournamentConfig) -> list[LadderEntrant]:
    """The entrants a ladder's file lists, all present from round 0."""
    return [
        LadderEntrant(e.name, e.owner or e.name, e.name, address=e.address, policy=e.policy, command=e.command)
        for e in config.entrants
    ]


@dataclass
class Opened:
    """A ladder created or found in the store, with its book."""

    book: Book
    resumed: bool


def open_ladder(store: SqliteStore, config: TournamentConfig, source: str) -> Opened:
    """Create the ladder ``config`` names (with a fresh secret deal key, unless public), or find it; its file's
    entrants are recorded as present from round 0 either way."""
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
            ladder_hooks = LadderHooks(store, scheduled, opened.book, addresses, hooks)
            budget = config.ladder.games
            bar = Progress(budget, row.done, enabled=progress, games_log=games_log) if budget else None
            c = concurrency or config.concurrency
            played, _ = await play_slots(store, scheduled, play, addresses, c, bar, ladder_hooks)
        crashes = list(getattr(addresses, "crashes", []))  # as run_tournament: told once the fleet has closed
    if spent(store, config):
        final, json_path, csv_path = finish_tournament(store, tid)
    else:
        from .runner import write_standings

        final = standings_of(store, tid)
        json_path, csv_path = write_standings(store, final)
    return Outcome(tid, final, played, opened.resumed, json_path, csv_path, crashes)
