"""A worker: plays the games a coordinator sends it, in its own asyncio loop, and returns each game's
result and record bytes (docs/scale.md). The coordinator keeps the store, the schedule, the ratings and the
tournament lock; a worker holds no secret but the deck seeds of the games it is sent (never the deal key).

A worker starts its own command bots (the same start check, logs and stopping rules as one process: bots.ready),
dials the address bots itself, and runs the built-in policies inside.

``GameWorker`` is the part every backend shares; ``main`` runs one as a local worker process, speaking framed
pickles over its stdin and stdout (frames.py) with the coordinator (processes.ProcessWorker), which started it and
trusts it. The Ray backend runs a GameWorker inside an async actor (ray_worker.GameActor).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from referee.errors import SeatsAbsent
from referee.event_loop import run as run_games
from referee.gc_policy import tune_gc
from referee.log import configure, get_logger
from referee.match import ChannelPool, play_game
from referee.match.spec import EntrantRef, GameResult, GameSpec

from .bots import Addresses, Crash, fresh_bots, ready
from .errors import EntrantError
from .frames import frame, read_frame
from .lineup import Lineup


@contextlib.contextmanager
def _scratch_record(game_id: str) -> Any:
    """A path the match runner writes a game's record to, and a function that reads the bytes back. On Linux it
    is an anonymous memory file (memfd) that vanishes with the process, so a killed worker leaves no record of a
    deal behind on disk; elsewhere a private temporary folder."""
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        fd = os.memfd_create(f"abluxx-{game_id}")
        try:

            def read() -> bytes:
                size = os.fstat(fd).st_size
                return os.pread(fd, size, 0)

            yield Path(f"/proc/self/fd/{fd}"), read
        finally:
            os.close(fd)
        return
    with tempfile.TemporaryDirectory(prefix="abluxx-worker-") as folder:
        path = Path(folder) / "game.abluxx"
        yield path, path.read_bytes


class GameWorker:
    """Plays games for a coordinator: ``open`` starts the command entrants and checks every entrant answers Hello
    (EntrantError says why one cannot, once for the worker, not once per game); ``play`` plays one game."""

    def __init__(self, lineup: Lineup, log_dir: Path, prefix: str) -> None:
        self.lineup = lineup
        self.log_dir = log_dir
        self.prefix = prefix  # command entrants log to <log_dir>/<prefix>-<name>.log
        self.addresses: dict[str, str] = {}
        self.pool = ChannelPool()  # one channel per bot address, as in one process
        self._stack = contextlib.AsyncExitStack()

    async def open(self) -> None:
        try:
            self._stack.push_async_callback(self.pool.close)
            self.addresses = await self._stack.enter_async_context(ready(self.lineup, self.log_dir, prefix=self.prefix))
        except BaseException:
            await self._stack.aclose()
            raise

    async def close(self) -> None:
        await self._stack.aclose()

    def crashes(self) -> list[Crash]:
        """Its command bots' processes that ended mid-run, each marked as this worker's copy (for the run's summary,
        which the coordinator prints)."""
        found = self.addresses.crashes if isinstance(self.addresses, Addresses) else []
        return [replace(c, where=self.prefix) for c in found]

    async def play(
        self, spec: GameSpec, on_decision: Callable[[bytes], None] | None = None
    ) -> tuple[GameResult, bytes]:
        """Play ``spec`` (its command seats come from this worker) and return its result and record bytes;
        ``on_decision`` gets each decision's serialized DecisionRecord as it is made."""
        names = tuple(e.name for e in spec.entrants)
        async with fresh_bots(self.lineup, names, self.addresses, self.log_dir, self.prefix) as at:
            spec = replace(spec, entrants=tuple(_seat(e, at) for e in spec.entrants))
            with _scratch_record(spec.game_id) as (path, read):
                result = await play_game(
                    spec,
                    pool=self.pool,
                    record_path=path,
                    on_decision=on_decision,
                )
                record = read()
        result.record_path = None
        return result, record


def _seat(entrant: EntrantRef, addresses: dict[str, str]) -> EntrantRef:
    """A command bot's seat gets this worker's address for it; other seats are as the coordinator sent them."""
    if entrant.address is None and entrant.policy is None:
        return replace(entrant, address=addresses.get(entrant.name))
    return entrant


# --- the local worker process ---------------------------------------------------------------------------------


async def _serve(reader: asyncio.StreamReader, out: asyncio.StreamWriter) -> None:
    init = await read_frame(reader)
    if init is None:
        return
    _, lineup, log_dir, prefix, json_logs = init
    configure(json=json_logs)
    worker = GameWorker(lineup, Path(log_dir), prefix)

    def send(message: object) -> None:
        out.write(frame(message))  # buffered by the pipe's transport: never blocks the games

    try:
        await worker.open()
    except EntrantError as e:
        send(("ready", str(e)))
        await out.drain()
        return
    send(("ready", None))
    log = get_logger(worker=prefix)
    games: set[asyncio.Task] = set()

    async def one(rid: int, spec: GameSpec, want: bool) -> None:
        try:
            result, record = await worker.play(spec, (lambda d: send(("decision", rid, d))) if want else None)
        except SeatsAbsent as e:  # no seat was sent anything: the coordinator seats the others again
            send(("absent", rid, e.absent))
            return
        except Exception as e:
            log.error("game failed in the worker", game_id=spec.game_id, error=repr(e))
            send(("failed", rid, repr(e)))
            return
        send(("done", rid, result, record))
        await out.drain()

    try:
        while (message := await read_frame(reader)) is not None:
            _, rid, spec, want = message  # ("play", rid, spec, want_decisions)
            task = asyncio.create_task(one(rid, spec, want))
            games.add(task)
            task.add_done_callback(games.discard)
    finally:
        # the coordinator closed the pipe (it stops, or it died): abandon the games in flight, stop the bots
        for task in list(games):
            task.cancel()
        await asyncio.gather(*games, return_exceptions=True)
        await worker.close()
        send(("crashes", 0, worker.crashes()))  # the last frame: the coordinator's summary of the run
        with contextlib.suppress(ConnectionError):
            await out.drain()


async def _main() -> None:
    # Replies go to a private copy of stdout; fd 1 becomes stderr, so a stray print cannot break a frame.
    reply_fd = os.dup(1)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 30)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(reply_fd, "wb"))
    out = asyncio.StreamWriter(transport, protocol, None, loop)
    await _serve(reader, out)


def main() -> None:
    tune_gc()
    with contextlib.suppress(KeyboardInterrupt):
        run_games(_main())


if __name__ == "__main__":
    main()
