"""The ``processes`` backend's worker (fleet/processes.py) in the test's process, so mutation testing sees it: one
real worker process playing a real game, and a scripted worker (a real process on real pipes, speaking the same
frames) for every answer a worker can give: a decision, a result, absent seats, a failure, a reply to no game, its
bots' crashes as it closes, a death mid-game, a frame it cannot read, a start that fails or hangs, and a worker that
will not stop. The real worker's command bot logs where it was told, and every worker leads its own session."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import TypeVar

import pytest

from referee.errors import SeatsAbsent
from referee.fleet import processes
from referee.fleet.errors import EntrantError, FleetError, WorkerError, WorkerLost
from referee.fleet.lineup import Bot, Lineup
from referee.fleet.processes import ProcessWorker
from referee.match.spec import EntrantRef, GameSpec
from referee.records.recordfile import MAGIC

from .test_bots import EXAMPLE

T = TypeVar("T")

# A worker that answers by its prefix (init) and each game's id; at the end of its input it tells its bots'
# crashes and exits (or, as "stubborn", waits on).
SCRIPTED = """
import os, pickle, struct, sys, time
def read():
    head = sys.stdin.buffer.read(4)
    if len(head) < 4:
        return None
    return pickle.loads(sys.stdin.buffer.read(struct.unpack(">I", head)[0]))
def send(m):
    body = pickle.dumps(m)
    sys.stdout.buffer.write(struct.pack(">I", len(body)) + body)
    sys.stdout.buffer.flush()
prefix = read()[3]
if prefix == "exits":
    sys.exit(3)
if prefix == "hangs":
    time.sleep(60)
send(("ready", "entrant x: no answer" if prefix == "refuses" else None))
if prefix == "garbled":
    sys.stdout.buffer.write(struct.pack(">I", 3) + b"abc")  # a frame that is no pickle
    sys.stdout.buffer.flush()
while (m := read()) is not None:
    _, rid, spec, want = m
    g = spec.game_id
    if g == "dies":
        os._exit(9)
    if g == "stray":
        send(("done", rid + 100, "not this game", b""))
    if want:
        send(("decision", rid, b"d-" + g.encode()))
    if g == "absent":
        send(("absent", rid, {"a": "no Hello"}))
    elif g == "failed":
        send(("failed", rid, "ValueError('x')"))
    else:
        send(("done", rid, "result-" + g, b"record-" + g.encode()))
send(("crashes", 0, ["bot r ended"]))
if prefix == "stubborn":
    time.sleep(60)
"""
LINEUP = Lineup("t", (Bot("a", policy="random"), Bot("b", policy="greedy")))
# A started scripted worker answers a frame in milliseconds; an answer that never comes fails the test after this
# (not after the whole test's 60 s), so a mutant that loses one costs mutation testing seconds, not a minute.
ANSWER_S = 10.0


async def _answer(play: Awaitable[T]) -> T:
    return await asyncio.wait_for(play, ANSWER_S)


@contextlib.asynccontextmanager
async def _started(tmp_path: Path, prefix: str) -> AsyncIterator[ProcessWorker]:
    """A scripted worker, closed (killed if need be) however the test ends: a worker left waiting on its input
    would hold asyncio.run's end for ever (the reader's end waits for the worker to exit), so a test that failed
    would hang instead."""
    worker = await ProcessWorker.start(LINEUP, tmp_path, prefix)
    try:
        yield worker
    finally:
        try:
            await asyncio.wait_for(worker.close(), ANSWER_S)
        finally:
            if worker.proc.returncode is None:
                worker.proc.kill()


def _spec(game_id: str, seed: int = 1) -> GameSpec:
    return GameSpec(game_id=game_id, seed=seed, entrants=(EntrantRef("a", policy="random"),
                                                          EntrantRef("b", policy="greedy")))  # fmt: skip


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "launch", lambda command: [sys.executable, "-c", SCRIPTED])


def test_a_real_worker_plays_a_game_and_sends_its_decisions_and_record(tmp_path: Path) -> None:
    async def go() -> None:
        lineup = Lineup("t", (*LINEUP.bots, Bot("c", command=EXAMPLE)))
        worker = await ProcessWorker.start(lineup, tmp_path, "t-w0")
        try:
            assert worker.name == "t-w0" and worker.load == 0 and worker.pid == worker.proc.pid
            assert (tmp_path / "t-w0-c.log").is_file()  # its command bot logs where the worker was told
            seen: list[bytes] = []
            result, record = await worker.play(_spec("t-g1"), seen.append)
            assert result.game_id == "t-g1" and record.startswith(MAGIC) and seen
            assert worker.load == 0
            plain, _ = await worker.play(_spec("t-g2", 2), None)
            assert plain.game_id == "t-g2"
        finally:
            await worker.close()
        assert worker.proc.returncode == 0 and worker.crashes == []

    asyncio.run(go())


def test_each_answer_of_a_worker_reaches_its_game(tmp_path: Path, scripted: None) -> None:
    async def go() -> None:
        async with _started(tmp_path, "w") as worker:
            assert os.getsid(worker.pid) == worker.pid != os.getsid(0)  # a Ctrl-C at the terminal is not its
            seen: list[bytes] = []
            assert await _answer(worker.play(_spec("g1"), seen.append)) == ("result-g1", b"record-g1")
            assert seen == [b"d-g1"]
            assert await _answer(worker.play(_spec("g2"), None)) == ("result-g2", b"record-g2")
            assert await _answer(worker.play(_spec("stray"), None)) == ("result-stray", b"record-stray")
            with pytest.raises(SeatsAbsent) as absent:
                await _answer(worker.play(_spec("absent"), None))
            assert absent.value.absent == {"a": "no Hello"}
            with pytest.raises(FleetError, match=r"^failed in worker w: ValueError\('x'\)$"):
                await _answer(worker.play(_spec("failed"), None))
            both = await _answer(asyncio.gather(worker.play(_spec("g3"), None), worker.play(_spec("g4"), None)))
            assert both == [("result-g3", b"record-g3"), ("result-g4", b"record-g4")]
            assert worker.load == 0 and worker._games == {}
            await worker.close()
            assert worker.crashes == ["bot r ended"] and worker.proc.returncode == 0

    asyncio.run(asyncio.wait_for(go(), 60))


def test_a_worker_that_dies_loses_its_games_in_flight_and_every_later_one(tmp_path: Path, scripted: None) -> None:
    async def go() -> None:
        async with _started(tmp_path, "w") as worker:
            with pytest.raises(WorkerLost, match=rf"^worker w \(pid {worker.pid}\) ended with code 9$"):
                await _answer(worker.play(_spec("dies"), None))
            await asyncio.wait_for(asyncio.shield(worker._reader), ANSWER_S)  # type: ignore[arg-type]
            with pytest.raises(WorkerLost, match=rf"^worker w \(pid {worker.pid}\) is gone$"):
                await worker.play(_spec("g1"), None)
            assert worker.load == 0 and worker.crashes == []  # a worker that died tells no crashes
            await worker.close()

    asyncio.run(asyncio.wait_for(go(), 60))


def test_a_worker_whose_answer_cannot_be_read_is_killed_and_loses_its_games_at_once(
    tmp_path: Path, scripted: None
) -> None:
    async def go() -> None:
        async with _started(tmp_path, "garbled") as worker:
            # no close: the game is lost as soon as the frame is read, not when the pool next closes the worker
            with pytest.raises(WorkerLost, match=rf"^worker garbled \(pid {worker.pid}\) sent a frame that could not "
                               r"be read \(UnpicklingError\) and was killed$"):  # fmt: skip
                await _answer(worker.play(_spec("g1"), None))
            assert worker.proc.returncode == -9
            with pytest.raises(WorkerLost, match=r"is gone$"):
                await worker.play(_spec("g2"), None)
            await worker.close()  # the reader's error is not the closer's

    asyncio.run(asyncio.wait_for(go(), 60))


@pytest.mark.parametrize(
    ("prefix", "wait_s", "error", "words"),
    [("exits", 60.0, WorkerError, r"^worker exits exited at start \(code 3\)$"),
     ("hangs", 1.0, WorkerError, r"^worker hangs was not ready within 1 s$"),
     ("refuses", 60.0, EntrantError, r"^worker refuses: entrant x: no answer$")],
)  # fmt: skip
def test_a_worker_that_cannot_start_says_why_and_is_gone(
    tmp_path: Path,
    scripted: None,
    monkeypatch: pytest.MonkeyPatch,
    prefix: str,
    wait_s: float,
    error: type,
    words: str,
) -> None:
    # Only the worker that hangs waits out the start timeout: the others are told apart from it by what they do
    # (exit, refuse), which a loaded machine may take more than a second to start up and do.
    monkeypatch.setattr(processes, "WORKER_START_TIMEOUT_S", wait_s)
    monkeypatch.setattr(processes, "WORKER_STOP_S", 1.0)
    started: list[ProcessWorker] = []
    real_init = ProcessWorker.__init__

    def init(self: ProcessWorker, name: str, proc: asyncio.subprocess.Process) -> None:
        real_init(self, name, proc)
        started.append(self)

    monkeypatch.setattr(ProcessWorker, "__init__", init)
    with pytest.raises(error, match=words):
        asyncio.run(asyncio.wait_for(ProcessWorker.start(LINEUP, tmp_path, prefix), 120))
    assert started[0].proc.returncode is not None


def test_a_worker_that_does_not_stop_is_killed(tmp_path: Path, scripted: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "WORKER_STOP_S", 1.0)

    async def go() -> ProcessWorker:
        worker = await ProcessWorker.start(LINEUP, tmp_path, "stubborn")
        # its input ends, and it tells its crashes before the stop's short limit starts: under load a worker can
        # take longer than 1 s to say them, and the test is about the kill, not a race with it
        assert worker.proc.stdin is not None
        worker.proc.stdin.close()
        async with asyncio.timeout(ANSWER_S):
            while not worker.crashes:
                await asyncio.sleep(0.01)
        await worker.close()
        await worker.close()  # twice is harmless
        return worker

    worker = asyncio.run(asyncio.wait_for(go(), 60))
    assert worker.proc.returncode == -9 and worker.crashes == ["bot r ended"]
