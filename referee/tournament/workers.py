"""Where a tournament's games are played (docs/scale.md): the worker backends under ``play_slots``.

- ``inline``: the coordinator's own event loop plays every game (the match runner, as always);
- ``processes``: N local worker processes (worker.py), each an asyncio loop with the match runner;
- ``ray``: N Ray actors (ray_worker.py), async actors with one event loop each, on a local Ray or a cluster.

Whatever the backend, the coordinator (the process holding the store) keeps the schedule, the tournament lock,
the one transaction per finished game and the ratings in schedule order: ``open_games`` only gives ``play_slots``
its ``play`` function. A worker is sent a game's spec (its deck seed, never the tournament's deal key), starts
its own command entrants, dials the address entrants, and sends back the GameResult, the record's bytes and,
when a spectator wants them, each decision as it is made; the coordinator writes the record file, so a cluster
needs no shared disk. A worker that dies loses only its games in flight: their bots saw their deals, so each such
game is void and its duplicate set is dealt again with a fresh deck (redeal.py), on the other workers and the new
one that takes the dead one's place.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from referee.errors import BadInput, GameLost, Unavailable
from referee.log import get_logger, json_lines
from referee.match.spec import GameResult, GameSpec
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records.paths import RECORDS, record_in
from referee.records.private import open_private
from referee.records.recordfile import MAGIC
from referee.store import SqliteStore

from . import entrants as entrants_mod
from .config import BACKENDS, MAX_WORKERS, TournamentConfig, WorkerSettings, default_workers
from .runner import OnDecision, PlayerFactory, PlayFn, TournamentError
from .worker import frame, read_frame

WORKER_START_TIMEOUT_S = 120.0  # a worker starts its command entrants (each up to START_TIMEOUT_S) and asks Hello
WORKER_STOP_S = entrants_mod.STOP_GRACE_S + 10.0  # a worker stops its bots (STOP_GRACE_S), then it is killed
RAY_CONNECT_TIMEOUT_S = 5.0  # how long to wait for a --ray-address to accept a connection
RAY_INSTALL = 'pip install -e ".[ray]" (from a checkout) or pip install "abluxxen-referee[ray]"'


class WorkerError(TournamentError, status=Unavailable.status, exit_code=2):  # 2: a resume would not help
    """The workers cannot be had: its Ray cluster cannot be reached, or a worker died at start."""


class WorkerLost(Exception):
    """A worker died (its process was killed, its Ray actor or node died) with this game in flight."""


class _Worker(Protocol):
    name: str
    load: int  # games in flight on it

    async def play(self, spec: GameSpec, on_decision: Callable[[bytes], None] | None) -> tuple[GameResult, bytes]:
        """The game's result and record bytes; WorkerLost when the worker dies first."""

    async def close(self) -> None: ...


def settings_from(
    base: WorkerSettings, count: int | None = None, backend: str | None = None, ray_address: str | None = None
) -> WorkerSettings:
    """``base`` (a config's ``[workers]``) with the command line's ``--workers``, ``--backend`` and
    ``--ray-address`` over it; BadInput names a bad one (or says how to install Ray). ``--workers N`` alone
    means local processes, and ``--ray-address`` alone the Ray backend."""
    if count is not None and not 1 <= count <= MAX_WORKERS:
        raise BadInput(f"--workers must be 1 to {MAX_WORKERS}, got {count}")
    if backend is not None and backend not in BACKENDS:
        raise BadInput(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend is None:
        backend = "ray" if ray_address else "processes" if count is not None and base.backend == "inline" else None
    chosen = backend or base.backend
    address = ray_address or (base.ray_address if chosen == "ray" else None)
    if ray_address and chosen != "ray":
        raise BadInput(f"--ray-address is for --backend ray, not {chosen}")
    if chosen == "inline":
        return WorkerSettings()
    if count is None:
        count = base.count if base.backend == chosen else default_workers()
    if chosen == "ray" and (problem := ray_missing()):
        raise BadInput(problem)
    return WorkerSettings(chosen, count, address)


def ray_missing() -> str | None:
    """Why ``--backend ray`` cannot run here (Ray is not installed), or None."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return f"the ray backend needs Ray, which is not installed: {RAY_INSTALL}"
    return None


@contextlib.asynccontextmanager
async def open_games(
    settings: WorkerSettings,
    config: TournamentConfig,
    store: SqliteStore,
    player: PlayerFactory,
    *,
    retry_s: float | None = None,
    keep_trying: Callable[[], bool] = lambda: True,
) -> AsyncIterator[tuple[PlayFn, dict[str, str], TournamentConfig]]:
    """What ``play_slots`` needs to play ``config``'s games on ``settings``' backend: the play function, the
    entrants' addresses as the coordinator knows them, and the config it should schedule with.

    Inline, the command entrants start here and ``player(records)`` plays (as before there were workers).
    With workers, each worker starts its own command entrants and checks every entrant (EntrantError, once,
    when one cannot be reached), and the coordinator only knows the address entrants' addresses."""
    logs = store.data / "logs"
    if settings.backend == "inline":
        async with (
            entrants_mod.ready(config, logs, retry_s=retry_s, keep_trying=keep_trying) as addresses,
            player(store.records) as play,
        ):
            yield play, addresses, config
        return
    pool = WorkerPool(settings, config, store.data, retry_s=retry_s, keep_trying=keep_trying)
    async with pool:
        addresses = {e.name: e.address for e in config.entrants if e.address}
        # The workers start a fresh_process entrant for each game themselves: the coordinator starts none.
        yield pool.play, addresses, replace(config, fresh_process=False)


def write_record(path: Path, record: bytes) -> None:
    """A record a worker sent, written and synced before the game is committed (owner-only, as the match runner
    writes one: until every game on its deal is over it holds a deck still to be played)."""
    if not record.startswith(MAGIC):
        raise TournamentError(f"a worker sent {path.stem} a record that is not one ({record[:8]!r})")
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
        config: TournamentConfig,
        data: Path,
        *,
        retry_s: float | None = None,
        keep_trying: Callable[[], bool] = lambda: True,
    ) -> None:
        self.settings = settings
        self.config = config
        self.data = data
        self.records = data / RECORDS
        self.retry_s = retry_s
        self.keep_trying = keep_trying
        self.slots: list[asyncio.Task[_Worker]] = []
        self.lost = 0  # workers lost so far
        self.log = get_logger(tournament=config.tournament_id, backend=settings.backend)
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
        if self._ray:
            from . import ray_worker

            await asyncio.to_thread(ray_worker.disconnect)
            self._ray = False

    async def _start(self, index: int) -> _Worker:
        prefix = f"{self.config.tournament_id}-w{index}"
        while True:
            try:
                if self.settings.backend == "ray":
                    from . import ray_worker

                    return await ray_worker.start(self.config, self.data / "logs", prefix)
                return await _ProcessWorker.start(self.config, self.data / "logs", prefix)
            except entrants_mod.EntrantError as e:
                # as inline: without retry_s at once; the service waits for its bots to come back
                if self.retry_s is None or not self.keep_trying():
                    raise
                self.log.warning("entrants unreachable from a worker; retrying", error=str(e), retry_s=self.retry_s)
                await asyncio.sleep(self.retry_s)

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

    async def play(self, spec: GameSpec, on_decision: OnDecision | None = None) -> GameResult:
        """Play ``spec`` on a worker, write its record into the records folder, and return its result. A worker
        lost mid-game is replaced and the game raises GameLost: its bots saw its deal, which is then void
        (runner.play_slots deals its set again with a fresh deck), never played again."""
        relay = None if on_decision is None else (lambda d: on_decision(rec_pb.DecisionRecord.FromString(d)))
        index, worker = await self._worker()
        try:
            result, record = await worker.play(spec, relay)
        except WorkerLost as e:
            slot = self.slots[index]
            if slot.done() and not slot.cancelled() and slot.exception() is None and slot.result() is worker:
                self.lost += 1
                self.log.warning("worker lost; its games in flight are void and their deals dealt again",
                                 worker=worker.name, games_in_flight=worker.load + 1, error=str(e))  # fmt: skip
                self.slots[index] = asyncio.ensure_future(self._start(index))
                with contextlib.suppress(Exception):
                    await worker.close()
            raise GameLost(f"game {spec.game_id} lost its worker: {e}") from None
        path = record_in(self.records, spec.game_id)
        await asyncio.to_thread(write_record, path, record)
        result.record_path = path
        return result


# --- local worker processes -------------------------------------------------------------------------------------


class _ProcessWorker:
    """One local worker process (``python -m referee.tournament.worker``), its pipes and its games in flight."""

    def __init__(self, name: str, proc: asyncio.subprocess.Process) -> None:
        self.name = name
        self.proc = proc
        self.load = 0
        self.pid = proc.pid
        self._next = 0
        self._games: dict[int, tuple[asyncio.Future[tuple[GameResult, bytes]], Callable[[bytes], None] | None]] = {}
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, config: TournamentConfig, log_dir: Path, prefix: str) -> _ProcessWorker:
        # The launcher gives the worker SIGKILL when the coordinator dies (entrants._launch); its own session keeps
        # a Ctrl-C at the terminal for the coordinator, which stops its workers itself.
        argv = entrants_mod._launch((sys.executable, "-m", "referee.tournament.worker"))
        proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, start_new_session=True)  # fmt: skip
        worker = cls(prefix, proc)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(frame(("init", config.to_json(), str(log_dir), prefix, json_lines())))
            async with asyncio.timeout(WORKER_START_TIMEOUT_S):
                ready = await read_frame(proc.stdout)
            if ready is None:
                raise WorkerError(f"worker {prefix} exited at start (code {await proc.wait()})")
            if ready[1] is not None:
                raise entrants_mod.EntrantError(f"worker {prefix}: {ready[1]}")
        except BaseException:
            await worker.close()
            raise
        worker._reader = asyncio.create_task(worker._read())
        return worker

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while (message := await read_frame(self.proc.stdout)) is not None:
                kind, rid = message[0], message[1]
                if rid not in self._games:
                    continue
                future, on_decision = self._games[rid]
                if kind == "decision":
                    if on_decision is not None:
                        on_decision(message[2])
                elif kind == "done":
                    future.set_result((message[2], message[3]))
                else:  # "failed": the game raised in the worker (a referee failure, as inline)
                    future.set_exception(TournamentError(f"failed in worker {self.name}: {message[2]}"))
        finally:
            code = await self.proc.wait()
            for future, _ in self._games.values():
                if not future.done():
                    future.set_exception(WorkerLost(f"worker {self.name} (pid {self.pid}) ended with code {code}"))

    async def play(self, spec: GameSpec, on_decision: Callable[[bytes], None] | None) -> tuple[GameResult, bytes]:
        if self._reader is None or self._reader.done():
            raise WorkerLost(f"worker {self.name} (pid {self.pid}) is gone")
        rid = self._next = self._next + 1
        future: asyncio.Future[tuple[GameResult, bytes]] = asyncio.get_running_loop().create_future()
        self._games[rid] = (future, on_decision)
        self.load += 1
        try:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(frame(("play", rid, spec, on_decision is not None)))
            except (ConnectionError, RuntimeError) as e:
                raise WorkerLost(f"worker {self.name} (pid {self.pid}) is gone: {e}") from None
            return await future
        finally:
            self.load -= 1
            del self._games[rid]

    async def close(self) -> None:
        """Close the worker's input: it abandons its games, stops its bots and exits; killed if it does not."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            async with asyncio.timeout(WORKER_STOP_S):
                await self.proc.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)


def check_ray_address(address: str) -> None:
    """WorkerError unless something accepts connections at ``address`` (``host:port`` or ``ray://host:port``)
    within RAY_CONNECT_TIMEOUT_S: ray.init would otherwise wait a long time before it says so."""
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise WorkerError(f"--ray-address {address!r}: expected host:port or ray://host:port")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=RAY_CONNECT_TIMEOUT_S):
            pass
    except OSError as e:
        raise WorkerError(f"cannot reach the Ray cluster at {address}: {e.strerror or e}") from None
