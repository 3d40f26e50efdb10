"""The worker pool's side of a game whose worker died (fleet/pool.py), as a unit test of the pool: its workers are
stand-ins that play or die on cue (the real worker processes, killed by a real bot, are in
tests/tournament/test_worker_replay.py). A dead worker's game raises GameLost (the caller deals it again), the worker
is counted lost once and replaced by a fresh one in its slot, and the next game goes to the least loaded live worker;
a finished game's record is written where the caller reads it, and its decisions reach the caller as records."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from referee.engine import EndReason
from referee.errors import GameLost
from referee.fleet import WorkerError, WorkerSettings
from referee.fleet.errors import WorkerLost
from referee.fleet.lineup import Lineup
from referee.fleet.pool import WorkerPool
from referee.log import configure
from referee.match.spec import EntrantRef, GameResult, GameSpec, SeatStats
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records.recordfile import MAGIC


class _Worker:
    """Plays a game at once, or dies (WorkerLost) when told to."""

    def __init__(self, name: str, load: int = 0, dies: bool = False, close_fails: bool = False) -> None:
        self.name, self.load, self.dies, self.close_fails = name, load, dies, close_fails
        self.played: list[str] = []
        self.closed = False
        self.crashes: list = []  # its command bots' crashes, told as it closes

    async def play(self, spec: GameSpec, on_decision) -> tuple[GameResult, bytes]:
        self.played.append(spec.game_id)
        if self.dies:
            raise WorkerLost(f"{self.name} died")
        if on_decision is not None:
            on_decision(rec_pb.DecisionRecord(seq=7, seat=1).SerializeToString())
        result = GameResult(spec.game_id, (3, 1), (1, 2), EndReason.EMPTY_HAND, [SeatStats(), SeatStats()], 4, "",
                            None)  # fmt: skip
        return result, MAGIC + spec.game_id.encode()

    async def close(self) -> None:
        self.closed = True
        if self.close_fails:  # a dead worker's pipe or actor is gone: stopping it can fail
            raise BrokenPipeError(f"{self.name}: broken pipe")


# A pool whose stand-in workers answer at once is done in milliseconds: one that is still busy after this long waits
# for a worker that never comes (a broken wait loop), and fails here rather than hanging the suite.
HANG_S = 20


def _run(game: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(game, HANG_S))


def _spec(game_id: str) -> GameSpec:
    seats = (EntrantRef("a", policy="random"), EntrantRef("b", policy="random"))
    return GameSpec(game_id=game_id, seed=1, entrants=seats)


async def _pool(tmp_path: Path, workers: list[_Worker], fresh: list[_Worker]) -> WorkerPool:
    """A pool whose slots hold ``workers``; a slot started again gets the next of ``fresh``."""
    pool = WorkerPool(WorkerSettings("processes", len(workers)), Lineup("run-1", ()), tmp_path)
    pool.records.mkdir(parents=True)
    started: list[int] = []

    async def start(index: int) -> _Worker:
        started.append(index)
        return fresh.pop(0)

    pool._start = start  # type: ignore[method-assign]
    pool.started = started  # type: ignore[attr-defined]
    for w in workers:
        f: asyncio.Future = asyncio.get_running_loop().create_future()
        f.set_result(w)
        pool.slots.append(f)  # type: ignore[arg-type]
    return pool


def test_a_game_goes_to_the_least_loaded_worker_and_its_record_is_written_where_the_caller_reads_it(
    tmp_path: Path,
) -> None:
    async def run() -> None:
        busy, idle = _Worker("w0", load=2), _Worker("w1", load=1)
        pool = await _pool(tmp_path, [busy, idle], [])
        seen: list[rec_pb.DecisionRecord] = []
        result = await pool.play(_spec("t-g1"), on_decision=seen.append)
        assert idle.played == ["t-g1"] and busy.played == []
        assert result.record_path == tmp_path / "records" / "t-g1.abluxx"
        assert result.record_path.read_bytes() == MAGIC + b"t-g1"
        assert [(d.seq, d.seat) for d in seen] == [(7, 1)]  # the worker's bytes, as the caller's records
        named = await pool.play(_spec("t-g2"), record="t-g2-b")  # a duel names its two games' records apart
        assert named.record_path == tmp_path / "records" / "t-g2-b.abluxx" and named.record_path.is_file()
        assert not (tmp_path / "records" / "t-g2.abluxx").exists()

    _run(run())


def test_a_worker_that_dies_mid_game_loses_that_game_is_counted_once_and_replaced(tmp_path: Path) -> None:
    out = io.StringIO()

    async def run() -> None:
        dead, other, fresh = _Worker("w0", dies=True), _Worker("w1", load=5), _Worker("w0b")
        pool = await _pool(tmp_path, [dead, other], [fresh])
        with pytest.raises(GameLost) as lost:
            await pool.play(_spec("t-g1"))
        assert str(lost.value) == "game t-g1 lost its worker: w0 died"
        assert pool.lost == 1 and dead.closed
        assert not list((tmp_path / "records").iterdir())  # nothing of the lost game is written
        await asyncio.sleep(0)  # the replacement starts
        assert pool.started == [0] and pool.slots[0].result() is fresh  # type: ignore[attr-defined]
        # another game that was in flight on the dead worker: lost too, but the worker is not counted again
        with pytest.raises(GameLost):
            await _lost_in_flight(pool, dead, 0)
        assert pool.lost == 1 and pool.started == [0]  # type: ignore[attr-defined]
        # the next game goes to the fresh worker, the least loaded
        result = await pool.play(_spec("t-g2"))
        assert fresh.played == ["t-g2"] and result.record_path is not None and result.record_path.is_file()

    configure("info", json=True, stream=out)
    try:
        _run(run())
    finally:
        configure("warning")
    (line,) = [json.loads(x) for x in out.getvalue().splitlines()]
    assert line["event"] == "worker lost; its games in flight are void and their deals dealt again"
    assert (line["worker"], line["games_in_flight"], line["error"], line["level"]) == ("w0", 1, "w0 died", "warning")
    assert (line["tournament"], line["backend"]) == ("run-1", "processes")


def test_a_dead_worker_that_fails_to_close_still_only_loses_its_game_and_every_death_is_counted(
    tmp_path: Path,
) -> None:
    """Stopping a dead worker can fail (its pipe is gone): the game is still lost and dealt again (GameLost), not a
    referee failure that stops the tournament, the slot still restarts and the crashes it told are kept; a second
    worker's death counts as a second loss."""

    async def run() -> None:
        first, second = _Worker("w0", dies=True, close_fails=True), _Worker("w1", load=1, dies=True)
        first.crashes = ["bot r ended"]
        pool = await _pool(tmp_path, [first, second], [_Worker("w0b", load=9), _Worker("w1b", load=9)])
        with pytest.raises(GameLost, match="game t-g1 lost its worker: w0 died"):
            await pool.play(_spec("t-g1"))
        assert first.closed and pool.crashes == ["bot r ended"] and pool.lost == 1
        with pytest.raises(GameLost, match="game t-g2 lost its worker: w1 died"):
            await pool.play(_spec("t-g2"))
        assert pool.lost == 2 and second.closed
        await asyncio.sleep(0)
        assert pool.started == [0, 1]  # type: ignore[attr-defined]

    _run(run())


async def _lost_in_flight(pool: WorkerPool, dead: _Worker, index: int) -> GameResult:
    """A game started on ``dead`` before it died, whose WorkerLost comes after the slot was restarted."""

    async def worker() -> tuple[int, _Worker]:
        return index, dead

    pool._worker = worker  # type: ignore[method-assign]
    try:
        return await pool.play(_spec("t-g0"))
    finally:
        del pool._worker


def test_while_every_slot_restarts_a_game_waits_and_a_slot_that_cannot_start_stops_it(tmp_path: Path) -> None:
    async def run() -> None:
        pool = await _pool(tmp_path, [], [])
        gate: asyncio.Future = asyncio.get_running_loop().create_future()
        pool.slots = [gate]  # type: ignore[list-item]
        waiting = asyncio.ensure_future(pool.play(_spec("t-g1")))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        back = _Worker("w0")
        gate.set_result(back)
        result = await waiting
        assert back.played == ["t-g1"] and result.game_id == "t-g1"
        broken: asyncio.Future = asyncio.get_running_loop().create_future()
        broken.set_exception(WorkerError("no python"))
        restarting: asyncio.Future = asyncio.get_running_loop().create_future()
        pool.slots = [restarting, broken]  # type: ignore[list-item]
        with pytest.raises(WorkerError, match="a worker could not be started again: no python"):
            await pool.play(_spec("t-g2"))
        restarting.cancel()

    _run(run())
