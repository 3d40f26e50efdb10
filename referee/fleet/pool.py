"""Where games are played (docs/scale.md): ``open_games`` gives a caller the one play function of its backend.

- ``inline``: the caller's own event loop plays every game (the match runner, as always);
- ``processes``: N local worker processes (processes.py, running worker.py), each an asyncio loop with the match
  runner;
- ``ray``: N Ray actors (ray_worker.py), async actors with one event loop each, on a local Ray or a cluster.

Whatever the backend, the caller (the coordinator: the process holding the store) keeps its schedule, its lock,
its transactions and its ratings: the fleet only plays the games it is given. A worker is sent a game's spec (its
deck seed, never a deal key), starts its own command bots, dials the address bots, and sends back the GameResult,
the record's bytes and, when the caller wants them, each decision as it is made; the pool writes the record file
where the caller reads it, so a cluster needs no shared disk. A worker that dies loses only its games in flight:
their bots saw their deals, so each such game raises GameLost and its caller deals it again with a fresh deck; a
new worker takes the dead one's place, and one that dies while starting is started again, up to
MAX_START_RETRIES times in a row.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from referee.errors import GameLost
from referee.log import get_logger
from referee.match.dialin import is_dialin
from referee.match.spec import GameResult, GameSpec
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records.paths import RECORDS, record_in
from referee.records.private import open_private
from referee.records.recordfile import MAGIC

from .bots import Addresses, Crash, fresh_bots, ready
from .errors import EntrantError, FleetError, WorkerError, WorkerLost
from .lineup import Lineup
from .play import OnDecision, PlayerFactory, PlayFn, match_player
from .processes import ProcessWorker
from .settings import WorkerSettings

MAX_START_RETRIES = 3  # a worker that dies while it starts is started again this often in a row, then the run stops
START_RETRY_S = 1.0  # the wait before the first such retry; each next one waits as much again more


class _Worker(Protocol):
    name: str
    load: int  # games in flight on it
    crashes: list[Crash]  # its command bots' processes that ended mid-run, known once it has closed

    async def play(self, spec: GameSpec, on_decision: Callable[[bytes], None] | None) -> tuple[GameResult, bytes]:
        """The game's result and record bytes; WorkerLost when the worker dies first."""

    async def close(self) -> None: ...


@dataclass
class Games:
    """What ``open_games`` gives its caller. ``play(spec, on_decision=None)`` plays one game on the backend and
    returns its result once its record is written and synced into the records folder; ``addresses`` are the
    entrants' addresses as the caller knows them; ``lineup`` is the lineup to seat games with (on workers it has no
    ``fresh_process``: each worker starts a game's fresh bots itself); ``seats(names)`` gives the addresses to seat
    one game's entrants with, starting its fresh bots for it alone when this process must."""

    backend: PlayFn
    addresses: dict[str, str]
    lineup: Lineup
    log_dir: Path

    async def play(
        self, spec: GameSpec, on_decision: OnDecision | None = None, record: str | None = None
    ) -> GameResult:
        """Play one game on the backend (a player that takes neither option is never given one)."""
        options = {k: v for k, v in (("on_decision", on_decision), ("record", record)) if v is not None}
        return await self.backend(spec, **options)

    def seats(self, names: tuple[str, ...]) -> AbstractAsyncContextManager[dict[str, str]]:
        return fresh_bots(self.lineup, names, self.addresses, self.log_dir, self.lineup.run_id)


@contextlib.asynccontextmanager
async def open_games(
    settings: WorkerSettings,
    lineup: Lineup,
    data: Path,
    player: PlayerFactory = match_player,
    *,
    retry_s: float | None = None,
    keep_trying: Callable[[], bool] = lambda: True,
) -> AsyncIterator[Games]:
    """Play ``lineup``'s games on ``settings``' backend, their records going to ``<data>/records`` and the command
    bots' logs to ``<data>/logs``.

    Inline, the command bots start here and ``player(records)`` plays. With workers, each worker starts its own
    command bots and checks every entrant (EntrantError, once, when one cannot be reached), and the caller only
    knows the address bots' addresses. ``retry_s`` and ``keep_trying``: as ``bots.ready``."""
    logs = data / "logs"
    if settings.backend == "inline":
        async with (
            ready(lineup, logs, retry_s=retry_s, keep_trying=keep_trying) as addresses,
            player(data / RECORDS) as play,
        ):
            yield Games(play, addresses, lineup, logs)
        return
    pool = WorkerPool(settings, lineup, data, retry_s=retry_s, keep_trying=keep_trying)
    addresses = Addresses(lineup.addresses())
    addresses.crashes = pool.crashes  # filled as the workers close: the run's summary reads it after this
    async with pool, contextlib.AsyncExitStack() as stack:
        # The workers start a fresh_process bot for each game themselves: the caller starts none.
        play = _dialin_here(pool.play, lambda: stack.enter_async_context(player(data / RECORDS)))
        yield Games(play, addresses, replace(lineup, fresh_process=False), logs)


def _dialin_here(elsewhere: PlayFn, here: Callable[[], Awaitable[PlayFn]]) -> PlayFn:
    """A game with a dial-in seat is played in this process, where its bot's connection ends (match/dialin.py), by
    the inline player ``here()`` opens at the first such game; every other game where ``elsewhere`` plays it."""
    opened: list[PlayFn] = []
    opening = asyncio.Lock()

    async def play(spec: GameSpec, **options: object) -> GameResult:
        if not any(is_dialin(e.address) for e in spec.entrants):
            return await elsewhere(spec, **options)
        async with opening:
            if not opened:
                opened.append(await here())
        return await opened[0](spec, **options)

    play.elsewhere = elsewhere  # type: ignore[attr-defined]  # where the others play (scripts/bench_workers.py)
    return play


def write_record(path: Path, record: bytes) -> None:
    """A record a worker sent, written and synced before the caller commits the game (owner-only, as the match
    runner writes one: until every game on its deal is over it holds a deck still to be played)."""
    if not record.startswith(MAGIC):
        raise FleetError(f"a worker sent {path.stem} a record that is not one ({record[:8]!r})")
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    try:
        view = memoryview(record)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


class WorkerPool:
    """N workers of one backend, started together (an async context manager), and ``play``, which sends each
    game to the least loaded live worker and replays it elsewhere when that worker dies."""

    def __init__(
        self,
        settings: WorkerSettings,
        lineup: Lineup,
        data: Path,
        *,
        retry_s: float | None = None,
        keep_trying: Callable[[], bool] = lambda: True,
    ) -> None:
        self.settings = settings
        self.lineup = lineup
        self.data = data
        self.records = data / RECORDS
        self.retry_s = retry_s
        self.keep_trying = keep_trying
        self.slots: list[asyncio.Task[_Worker]] = []
        self.lost = 0  # workers lost so far
        self.crashes: list[Crash] = []  # the command bots' crashes each worker told as it closed
        self.log = get_logger(tournament=lineup.run_id, backend=settings.backend)
        self._ray = False  # joined Ray (disconnect on close)

    async def __aenter__(self) -> WorkerPool:
        if self.settings.backend == "ray":
            from . import ray_worker

            # seconds, once per process: off the loop, where a service's other tournaments and calls go on
            await asyncio.to_thread(ray_worker.connect, self.settings)
            self._ray = True
        self.slots = [asyncio.ensure_future(self._start(i)) for i in range(self.settings.count)]
        try:
            await asyncio.gather(*self.slots)
        except BaseException:
            await self.close()
            raise
        self.log.info("workers ready", workers=self.settings.count)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        for t in self.slots:
            t.cancel()
        started = [t.result() for t in self.slots if t.done() and not t.cancelled() and t.exception() is None]
        await asyncio.gather(*(w.close() for w in started), return_exceptions=True)
        await asyncio.gather(*self.slots, return_exceptions=True)
        self.crashes.extend(c for w in started for c in w.crashes)
        if self._ray:
            from . import ray_worker

            await asyncio.to_thread(ray_worker.disconnect)
            self._ray = False

    async def _start(self, index: int) -> _Worker:
        """Worker ``index``, started; one that dies while it starts is started again (MAX_START_RETRIES)."""
        prefix = f"{self.lineup.run_id}-w{index}"
        died = 0
        while True:
            try:
                if self.settings.backend == "ray":
                    from . import ray_worker

                    return await ray_worker.start(self.lineup, self.data / "logs", prefix)
                return await ProcessWorker.start(self.lineup, self.data / "logs", prefix)
            except EntrantError as e:
                # as inline: without retry_s at once; the service waits for its bots to come back
                if self.retry_s is None or not self.keep_trying():
                    raise
                self.log.warning("entrants unreachable from a worker; retrying", error=str(e), retry_s=self.retry_s)
                await asyncio.sleep(self.retry_s)
            except WorkerError as e:
                died += 1
                if died > MAX_START_RETRIES:
                    raise
                self.log.warning("worker died while starting; starting it again", worker=prefix, attempt=died,
                                 error=str(e))  # fmt: skip
                await asyncio.sleep(START_RETRY_S * died)

    async def _worker(self) -> tuple[int, _Worker]:
        """The live worker with the fewest games in flight (waiting for one while every slot is restarting)."""
        while True:
            ready = [(i, t.result()) for i, t in enumerate(self.slots) if t.done() and not t.cancelled()
                     and t.exception() is None]  # fmt: skip
            if ready:
                return min(ready, key=lambda iw: iw[1].load)
            await asyncio.wait(self.slots, return_when=asyncio.FIRST_COMPLETED)
            for t in self.slots:
                if t.done() and not t.cancelled() and t.exception() is not None:
                    raise WorkerError(f"a worker could not be started again: {t.exception()}")

    async def play(
        self, spec: GameSpec, on_decision: OnDecision | None = None, record: str | None = None
    ) -> GameResult:
        """Play ``spec`` on a worker, write its record into the records folder (as ``record``, default its game id),
        and return its result. A worker
        lost mid-game is replaced and the game raises GameLost: its bots saw its deal, which is then void (the
        caller deals it again with a fresh deck: a tournament's runner.play_slots, a duel's next pair), never
        played again."""
        relay = None if on_decision is None else (lambda d: on_decision(rec_pb.DecisionRecord.FromString(d)))
        index, worker = await self._worker()
        try:
            result, data = await worker.play(spec, relay)
        except WorkerLost as e:
            slot = self.slots[index]
            if slot.done() and not slot.cancelled() and slot.exception() is None and slot.result() is worker:
                self.lost += 1
                self.log.warning("worker lost; its games in flight are void and their deals dealt again",
                                 worker=worker.name, games_in_flight=worker.load + 1, error=str(e))  # fmt: skip
                self.slots[index] = asyncio.ensure_future(self._start(index))
                with contextlib.suppress(Exception):
                    await worker.close()
                self.crashes.extend(worker.crashes)
            raise GameLost(f"game {spec.game_id} lost its worker: {e}") from None
        path = record_in(self.records, record or spec.game_id)
        await asyncio.to_thread(write_record, path, data)
        result.record_path = path
        return result
