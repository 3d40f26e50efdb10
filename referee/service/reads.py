"""Reads whose cost grows with the store, kept off the event loop so that health checks, watchers and games in
flight never wait for them (docs/service.md):

- ``Reader``: one thread with its own SQLite connection (WAL lets it read while the loop commits games);
- ``Boards``: each tournament's standings, built once on the reader thread and then kept up to date by every
  finished game (standings.Tally), so GetStandings and every watcher share one copy whatever their number.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from referee.errors import NoTournament
from referee.store import GameRow, SqliteStore
from referee.tournament.board import dressed, tally_of
from referee.tournament.standings import Standings, Tally

T = TypeVar("T")
# tournaments whose standings stay in memory; each costs about 50 bytes per stored decision (22 MB for 12,000
# games of 40 decisions), mostly the decision times that the median needs
MAX_TALLIES = 8


class Reader:
    """Runs ``fn(store)`` on one thread with its own connection to the data folder's store."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="reads")

    def _store(self) -> SqliteStore:
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = SqliteStore(self.data)
        return store

    async def run(self, fn: Callable[[SqliteStore], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, lambda: fn(self._store()))

    def close(self) -> None:
        def close_store() -> None:
            if (store := getattr(self._local, "store", None)) is not None:
                store.close()

        self._pool.submit(close_store)
        self._pool.shutdown(wait=True)


def _tally(store: SqliteStore, tid: str) -> Tally:
    row = store.tournament(tid)
    if row is None:
        raise NoTournament(tid, "on this server")
    tally = tally_of(store, row)
    tally.standings()  # sorts the decision times here rather than on the loop
    return tally


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

    async def standings(self, tid: str, done: int, shown: Collection[str] | None = None) -> Standings:
        """The standings of ``tid`` as every surface shows them (tournament/board.py), whose store holds ``done``
        finished games (only ``shown``'s rows, if given)."""
        tally = self._tallies.get(tid)
        if tally is not None and len(tally.games) != done:  # another process played games of it: build again
            del self._tallies[tid]
        return self._dressed(tid, (await self._tally(tid)).standings(shown=shown))

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
            return None
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
            tally.add(game)
        elif tid in self._early:
            self._early[tid].append(game)

    async def _tally(self, tid: str) -> Tally:
        if (tally := self._tallies.get(tid)) is not None:
            self._tallies.move_to_end(tid)
            return tally
        return await asyncio.shield(self._start(tid))

    def _start(self, tid: str) -> asyncio.Future[Tally]:
        building = self._building.get(tid)
        if building is None:
            building = self._building[tid] = asyncio.ensure_future(self._build(tid))
            building.add_done_callback(lambda f: f.cancelled() or f.exception())  # a failure nobody awaited is not news
        return building

    async def _build(self, tid: str) -> Tally:
        self._early[tid] = []
        try:
            tally = await self.reader.run(lambda store: _tally(store, tid))
            self.builds += 1
            for game in self._early[tid]:
                tally.add(game)
            self._keep(tid, tally)
            return tally
        finally:
            self._building.pop(tid, None)
            self._early.pop(tid, None)
