"""Reads whose cost grows with the store, kept off the event loop so that health checks, watchers and games in
flight never wait for them (docs/service.md):

- ``Reader``: one thread with its own SQLite connection (WAL lets it read while the loop commits games);
- ``Boards``: each tournament's standings, built once on the reader thread and then kept up to date by every
  finished game (standings.Tally), so GetStandings and every watcher share one copy whatever their number. The
  ratings come from the fit kept in the store (store/ratings.py) when it covers the stored games; each finished
  game is folded in by a local update and kept, and the whole fit is made again on a thread of its own once the
  games since the last reach ``REFIT_SHARE`` of them (docs/ratings.md).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from referee.errors import NoTournament
from referee.rating import REFIT_SHARE, Ratings, rate, restored, state
from referee.store import GameRow, SqliteStore
from referee.store import ratings as kept_fits
from referee.store import standings as kept_boards
from referee.tournament.board import dressed, planned
from referee.tournament.runner import entrant_names
from referee.tournament.standings import Standings, Tally

T = TypeVar("T")
# tournaments whose standings stay in memory; each costs about 50 bytes per stored decision (22 MB for 12,000
# games of 40 decisions), mostly the decision times that the median needs
MAX_TALLIES = 8
# up to this many games a tournament's ratings are fitted in full on the event loop as each game comes (a few
# milliseconds); beyond, on the refit thread, and the standings between are local updates (docs/ratings.md)
INLINE_FIT_GAMES = 300
# a board's standings are kept in the store (for a restart to show at once) at most this often, and this long after
# the change that needs keeping (docs/ratings.md); a stopping service keeps them at once. A big board waits
# KEEP_COST_RATIO times as long as its last keeping took, so that keeping takes at most a tenth of the reader's time
KEEP_EVERY_S = 2.0
KEEP_COST_RATIO = 10


class Reader:
    """Runs ``fn(store)`` on one thread with its own connection to the data folder's store."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="reads")
        self.closed = False
        self.stopping = threading.Event()  # set by close: a long build on the thread gives up (ReaderStopped)

    def _store(self) -> SqliteStore:
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = SqliteStore(self.data)
        return store

    async def run(self, fn: Callable[[SqliteStore], T]) -> T:
        return await self.start(fn)

    def start(self, fn: Callable[[SqliteStore], T]) -> asyncio.Future[T]:
        """Queues ``fn(store)`` on the reader's thread now (jobs run in the order they were queued)."""
        return asyncio.get_running_loop().run_in_executor(self._pool, lambda: fn(self._store()))

    def submit(self, fn: Callable[[SqliteStore], object]) -> None:
        """Runs ``fn(store)`` on the reader's thread, in turn, without waiting for it (a write nobody awaits);
        nothing once the reader is closed."""
        if not self.closed:
            self._pool.submit(lambda: fn(self._store()))

    def close(self) -> None:
        """Waits for what is queued (the stopping service's kept standings among it); a tally build under way gives
        up at its next game, so a stop never waits for a board of 100,000 games to be counted."""
        self.closed = True
        self.stopping.set()

        def close_store() -> None:
            if (store := getattr(self._local, "store", None)) is not None:
                store.close()

        self._pool.submit(close_store)
        self._pool.shutdown(wait=True)


class ReaderStopped(Exception):
    """The reader was closed while a build ran on its thread: the build is dropped (the next start does it)."""


def _tally(store: SqliteStore, tid: str, stopping: threading.Event) -> Tally:
    row = store.tournament(tid)
    if row is None:
        raise NoTournament(tid, "on this server")
    tally = Tally(tid, entrant_names(store, row), planned(row), converge=False)
    for g in store.games(tid):
        if stopping.is_set():
            raise ReaderStopped(tid)
        tally.count(g)
    tally.load(_fit(store, tid, tally))
    tally.standings()  # sorts the decision times here rather than on the loop
    return tally


def _kept(store: SqliteStore, tid: str) -> dict[str, Standings]:
    """The kept standings of ``tid`` that count exactly its stored games, by board (``kept_boards.shown_key``)."""
    out = {}
    for shown, body in kept_boards.load(store, tid).items():
        try:
            out[shown] = Standings.from_kept(body)
        except (KeyError, TypeError, ValueError):  # written by other code: build this board from the games
            continue
    return out


def _saver(
    tid: str, key: str, mark: kept_fits.Mark, standings: Standings, took: dict[str, float]
) -> Callable[[SqliteStore], None]:
    """A job for the reader's thread that keeps ``standings`` (made into JSON there, off the event loop), and
    notes in ``took`` the seconds it took."""

    def save(store: SqliteStore) -> None:
        start = time.monotonic()
        kept_boards.save(store, tid, key, mark, standings.kept())
        took[tid] = time.monotonic() - start

    return save


def _fit(store: SqliteStore, tid: str, tally: Tally) -> Ratings:
    """The tally's ratings: the fit kept in the store when it covers exactly the stored games, else every game
    rated again (and that fit kept)."""
    kept = kept_fits.load(store, tid)
    if kept is not None:
        ratings = restored(kept.state, kept.games)
        for n in tally.names:
            ratings.join(n)
        return ratings
    ratings = _rated(tally.names, list(tally.games.values()))
    kept_fits.save(store, tid, state(ratings), kept_fits.mark_of(tally.games))
    return ratings


def _rated(names: list[str], games: list[GameRow]) -> Ratings:
    """A full fit of ``games``, kept up to date by local updates from then on (its owner refits it)."""
    ratings = rate(names, ((g.names, g.places) for g in games))
    ratings.refit_share = None
    return ratings


class Boards:
    """The standings of each tournament that someone read or watched. A tally is built once per tournament (one
    build at a time, shared by every caller who asks meanwhile); ``add`` then keeps it current."""

    def __init__(self, reader: Reader, store: SqliteStore) -> None:
        self.reader = reader
        self.store = store  # the loop's: each board's marks and health are read fresh (tournament/board.py)
        self._tallies: OrderedDict[str, Tally] = OrderedDict()  # least recently used first
        self._building: dict[str, asyncio.Future[Tally]] = {}
        self._early: dict[str, list[GameRow]] = {}  # games finished while their tally was being built
        self.builds = 0  # tallies built from the store (each costs every stored game of its tournament)
        self.refits = 0  # full fits made again as games came
        self._marks: dict[str, kept_fits.Mark] = {}  # what each tally's ratings cover, as the store marks it
        self._refitting: dict[str, asyncio.Future[None]] = {}
        self._fitter = ThreadPoolExecutor(1, thread_name_prefix="refit")
        # each tournament's kept standings while its tally is built (read before the build, on the same thread)
        self._kept: dict[str, asyncio.Future[dict[str, Standings]]] = {}
        self._boards_shown: dict[str, dict[str, Collection[str] | None]] = {}  # the boards read, to keep
        self._keeping: set[str] = set()  # tournaments whose standings are due to be kept
        self._keep_took: dict[str, float] = {}  # seconds the last keeping of each took (written by the reader)

    async def standings(self, tid: str, done: int, shown: Collection[str] | None = None) -> Standings:
        """The standings of ``tid`` as every surface shows them (tournament/board.py), whose store holds ``done``
        finished games (only ``shown``'s rows, if given)."""
        tally = self._tallies.get(tid)
        if tally is not None and len(tally.games) != done:  # another process played games of it: build again
            del self._tallies[tid]
        if tid not in self._tallies and (kept := await self._kept_board(tid, shown)) is not None:
            return self._dressed(tid, kept)
        standings = (await self._tally(tid)).standings(shown=shown)
        self._boards_shown.setdefault(tid, {})[kept_boards.shown_key(shown)] = shown
        return self._dressed(tid, standings)

    async def _kept_board(self, tid: str, shown: Collection[str] | None) -> Standings | None:
        """While ``tid``'s tally is built, the standings kept in the store (if they count its stored games)."""
        self._start(tid)
        if (loading := self._kept.get(tid)) is None:
            return None
        return (await asyncio.shield(loading)).get(kept_boards.shown_key(shown))

    def _dressed(self, tid: str, standings: Standings) -> Standings:
        row = self.store.tournament(tid)
        return standings if row is None else dressed(standings, self.store, row)

    def _keep(self, tid: str, tally: Tally) -> None:
        """Keep ``tally`` as the most recently used; beyond MAX_TALLIES forget the cheapest to build again (the
        fewest stored games; the least recently used of those), so that reads of small tournaments, however many,
        never push out a big one whose rebuild costs seconds."""
        self._tallies[tid] = tally
        self._tallies.move_to_end(tid)
        while len(self._tallies) > MAX_TALLIES:
            order = {t: i for i, t in enumerate(self._tallies)}
            cheapest = min(self._tallies, key=lambda t: (len(self._tallies[t].games), order[t]))
            del self._tallies[cheapest]

    def ready(self, tid: str) -> Standings | None:
        """The standings of ``tid`` if its tally is built, else None (and its build is started)."""
        tally = self._tallies.get(tid)
        if tally is None:
            self._start(tid)
            loading = self._kept.get(tid)
            done = loading is not None and loading.done() and loading.exception() is None
            kept = loading.result().get("") if loading is not None and done else None
            return None if kept is None else self._dressed(tid, kept)
        return self._dressed(tid, tally.standings())

    def history(self, tid: str) -> dict[str, list[tuple[int, float]]]:
        """Each entrant's rating history (standings.History) in ``tid``'s built tally; empty if it is not built."""
        tally = self._tallies.get(tid)
        return tally.history.lines if tally is not None else {}

    def forget(self, tid: str) -> None:
        """``tid``'s stored games changed other than by finishing (void deals left them): build it again."""
        self._tallies.pop(tid, None)

    def add(self, tid: str, game: GameRow) -> None:
        """A game of ``tid`` finished and is stored."""
        if (tally := self._tallies.get(tid)) is not None:
            if not set(game.names) <= set(tally.names):  # a ladder's new entrant: build it again when asked
                del self._tallies[tid]
                return
            self._rate(tid, tally, game)
        elif tid in self._early:
            self._early[tid].append(game)

    def _rate(self, tid: str, tally: Tally, game: GameRow) -> None:
        """Folds ``game`` into ``tally`` and keeps its seats' new ratings in the store; starts a full fit again
        once the games since the last reach REFIT_SHARE of them."""
        if game.slot in tally.games:
            return
        tally.add(game)
        self._keep_later(tid)
        games, slots, squares = self._marks[tid]
        mark = self._marks[tid] = (games + 1, slots + game.slot, squares + game.slot**2)
        seats = state(tally.rated, game.names)
        self.reader.submit(lambda store: kept_fits.save(store, tid, seats, mark, whole=False))
        ratings = tally.rated
        if tid in self._refitting or not ratings.games or ratings.local < REFIT_SHARE * ratings.games:
            return
        if ratings.games <= INLINE_FIT_GAMES:  # milliseconds: here, so that every standings sent is a full fit
            tally.rerate(_rated(tally.names, list(tally.games.values())))
            fitted = state(tally.rated)
            self.reader.submit(lambda store: kept_fits.save(store, tid, fitted, mark))
        else:
            self._refitting[tid] = asyncio.ensure_future(self._refit(tid, tally))

    async def _refit(self, tid: str, tally: Tally) -> None:
        """Rates ``tally``'s games again on the refit thread, then adds the games that came meanwhile."""
        try:
            games = list(tally.games.values())
            loop = asyncio.get_running_loop()
            ratings = await loop.run_in_executor(self._fitter, _rated, tally.names, games)
            if self._tallies.get(tid) is not tally:
                return
            known = {g.slot for g in games}
            for g in tally.games.values():
                if g.slot not in known:
                    ratings.add(g.names, g.places)
            tally.rerate(ratings)
            self.refits += 1
            fitted, mark = state(ratings), self._marks[tid]
            self.reader.submit(lambda store: kept_fits.save(store, tid, fitted, mark))
        finally:
            self._refitting.pop(tid, None)

    async def _tally(self, tid: str) -> Tally:
        if (tally := self._tallies.get(tid)) is not None:
            self._tallies.move_to_end(tid)
            return tally
        return await asyncio.shield(self._start(tid))

    def _start(self, tid: str) -> asyncio.Future[Tally]:
        building = self._building.get(tid)
        if building is None:
            self._kept[tid] = self.reader.start(lambda store: _kept(store, tid))  # queued first: read first
            building = self._building[tid] = asyncio.ensure_future(self._build(tid))
            building.add_done_callback(lambda f: f.cancelled() or f.exception())  # a failure nobody awaited is not news
        return building

    async def _build(self, tid: str) -> Tally:
        self._early[tid] = []
        try:
            tally = await self.reader.run(lambda store: _tally(store, tid, self.reader.stopping))
            self.builds += 1
            self._marks[tid] = kept_fits.mark_of(tally.games)
            for game in self._early[tid]:
                self._rate(tid, tally, game)
            self._keep(tid, tally)
            self._keep_later(tid)
            return tally
        finally:
            self._building.pop(tid, None)
            self._early.pop(tid, None)
            self._kept.pop(tid, None)

    def _keep_later(self, tid: str) -> None:
        """Keeps ``tid``'s boards in the store KEEP_EVERY_S from now, or KEEP_COST_RATIO times what keeping them last
        took if longer (once, however many games come meanwhile)."""
        if tid not in self._keeping:
            self._keeping.add(tid)
            wait = max(KEEP_EVERY_S, KEEP_COST_RATIO * self._keep_took.get(tid, 0.0))
            asyncio.get_running_loop().call_later(wait, self._keep_now, tid)

    def _keep_now(self, tid: str) -> None:
        """Keeps the standings of every board of ``tid`` read since its tally was built (and its whole board), as
        of now, in the store; the reader's thread writes them."""
        self._keeping.discard(tid)
        if (tally := self._tallies.get(tid)) is None:
            return
        mark = self._marks[tid]
        for key, shown in {"": None, **self._boards_shown.get(tid, {})}.items():
            self.reader.submit(_saver(tid, key, mark, tally.standings(shown=shown), self._keep_took))

    def keep_all(self) -> None:
        """Keeps every board due to be kept now (a service that stops)."""
        for tid in list(self._keeping):
            self._keep_now(tid)
