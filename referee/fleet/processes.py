"""The ``processes`` backend: one local worker process (worker.py) per worker, speaking framed pickles over its
pipes with the coordinator that started it and that it trusts."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from pathlib import Path

from referee.errors import SeatsAbsent
from referee.log import json_lines
from referee.match.spec import GameResult, GameSpec

from .bots import STOP_GRACE_S, Crash, launch
from .errors import EntrantError, FleetError, WorkerError, WorkerLost
from .frames import frame, read_frame
from .lineup import Lineup

WORKER_START_TIMEOUT_S = 120.0  # a worker starts its command bots (each up to START_TIMEOUT_S) and asks Hello
WORKER_STOP_S = STOP_GRACE_S + 10.0  # a worker stops its bots (STOP_GRACE_S), then it is killed


class ProcessWorker:
    """One local worker process (``python -m referee.fleet.worker``), its pipes and its games in flight."""

    def __init__(self, name: str, proc: asyncio.subprocess.Process) -> None:
        self.name = name
        self.proc = proc
        self.load = 0
        self.pid = proc.pid
        self._next = 0
        self._games: dict[int, tuple[asyncio.Future[tuple[GameResult, bytes]], Callable[[bytes], None] | None]] = {}
        self._reader: asyncio.Task[None] | None = None
        self.crashes: list[Crash] = []  # its command bots' crashes, sent as it closes

    @classmethod
    async def start(cls, lineup: Lineup, log_dir: Path, prefix: str) -> ProcessWorker:
        """The worker, once it has started its command bots and every entrant answered Hello: EntrantError when one
        cannot, WorkerError when the worker dies (or hangs) first."""
        # The launcher gives the worker SIGKILL when the coordinator dies (bots.launch); its own session keeps a
        # Ctrl-C at the terminal for the coordinator, which stops its workers itself.
        argv = launch((sys.executable, "-m", "referee.fleet.worker"))
        proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, start_new_session=True)  # fmt: skip
        worker = cls(prefix, proc)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(frame(("init", lineup, str(log_dir), prefix, json_lines())))
            try:
                async with asyncio.timeout(WORKER_START_TIMEOUT_S):
                    ready = await read_frame(proc.stdout)
            except TimeoutError:
                raise WorkerError(f"worker {prefix} was not ready within {WORKER_START_TIMEOUT_S:.0f} s") from None
            if ready is None:
                raise WorkerError(f"worker {prefix} exited at start (code {await proc.wait()})")
            if ready[1] is not None:
                raise EntrantError(f"worker {prefix}: {ready[1]}")
        except BaseException:
            await worker.close()
            raise
        worker._reader = asyncio.create_task(worker._read())
        return worker

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        lost = ""
        try:
            while (message := await read_frame(self.proc.stdout)) is not None:
                kind, rid = message[0], message[1]
                if kind == "crashes":
                    self.crashes = message[2]
                    continue
                if rid not in self._games:
                    continue
                future, on_decision = self._games[rid]
                if kind == "decision":
                    if on_decision is not None:
                        on_decision(message[2])
                elif kind == "done":
                    future.set_result((message[2], message[3]))
                elif kind == "absent":
                    future.set_exception(SeatsAbsent(message[2]))
                else:  # "failed": the game raised in the worker (a referee failure, as inline)
                    future.set_exception(FleetError(f"failed in worker {self.name}: {message[2]}"))
        except Exception as e:  # a frame that cannot be read: the stream is lost, and with it the worker
            lost = f"sent a frame that could not be read ({type(e).__name__}) and was killed"
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        finally:
            code = await self.proc.wait()
            why = lost or f"ended with code {code}"
            for future, _ in self._games.values():
                if not future.done():
                    future.set_exception(WorkerLost(f"worker {self.name} (pid {self.pid}) {why}"))

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
