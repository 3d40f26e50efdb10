"""Where games are played (fleet/pool.py), in the test's process so mutation testing sees it: the inline backend
and real worker processes behind ``open_games``, a dial-in game kept in this process, a worker's record written
and synced (a record that is not one refused), and the pool's start: every worker started, one that dies while it
starts started again with a growing wait, unreachable entrants retried as told, the Ray backend joined and left,
and every worker closed with its bots' crashes kept. (What becomes of a game whose worker dies mid-game is in
test_pool_replay.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import stat
import sys
import time
import types
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

import referee.fleet
from referee.fleet import pool as pool_module
from referee.fleet.errors import EntrantError, FleetError, WorkerError
from referee.fleet.lineup import Bot, Lineup
from referee.fleet.pool import Games, WorkerPool, _dialin_here, open_games, write_record
from referee.fleet.settings import WorkerSettings
from referee.match.spec import EntrantRef, GameSpec
from referee.records.recordfile import MAGIC

from .test_bots import EXAMPLE

LINEUP = Lineup("run", (Bot("a", policy="random"), Bot("b", policy="greedy")))


def _spec(game_id: str, address: str | None = None, seed: int = 1) -> GameSpec:
    first = EntrantRef("a", address=address) if address else EntrantRef("a", policy="random")
    return GameSpec(game_id=game_id, seed=seed, entrants=(first, EntrantRef("b", policy="greedy")))


def test_a_record_from_a_worker_is_written_whole_and_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "records" / "g1.abluxx"
    path.parent.mkdir()
    path.write_bytes(b"x" * 5000)  # an older, longer file is replaced
    record = MAGIC + bytes(range(256)) * 400
    write_record(path, record)
    assert path.read_bytes() == record
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with pytest.raises(FleetError, match=r"^a worker sent g2 a record that is not one \(b'not a re'\)$"):
        write_record(tmp_path / "records" / "g2.abluxx", b"not a record")
    assert not (tmp_path / "records" / "g2.abluxx").exists()


def test_a_dial_in_game_is_played_here_by_one_player_opened_at_the_first_such_game() -> None:
    played: list[tuple[str, str, dict[str, Any]]] = []
    opened: list[int] = []

    def player(where: str):
        async def play(spec: GameSpec, **options: object) -> str:
            played.append((where, spec.game_id, options))
            return where

        return play

    async def here():
        opened.append(1)
        await asyncio.sleep(0.05)  # two dial-in games at once still open one player
        return player("here")

    elsewhere = player("elsewhere")

    async def go() -> None:
        play = _dialin_here(elsewhere, here)
        assert play.elsewhere is elsewhere  # type: ignore[attr-defined]
        assert await play(_spec("g1"), record="r1") == "elsewhere"
        assert opened == []
        dial = "dialin:a"
        both = await asyncio.gather(play(_spec("g2", dial)), play(_spec("g3", dial), on_decision=print))
        assert both == ["here", "here"] and opened == [1]
        assert await play(_spec("g4", "127.0.0.1:5")) == "elsewhere"

    asyncio.run(go())
    assert played == [("elsewhere", "g1", {"record": "r1"}), ("here", "g2", {}),
                      ("here", "g3", {"on_decision": print}), ("elsewhere", "g4", {})]  # fmt: skip


def test_games_hand_a_player_only_the_options_given() -> None:
    seen: list[dict[str, object]] = []

    async def backend(spec: GameSpec, **options: object) -> str:
        seen.append(options)
        return spec.game_id

    games = Games(backend, {}, LINEUP, Path("logs"))

    async def go() -> None:
        assert await games.play(_spec("g1")) == "g1"
        await games.play(_spec("g2"), on_decision=print)
        await games.play(_spec("g3"), record="r")

    asyncio.run(go())
    assert seen == [{}, {"on_decision": print}, {"record": "r"}]


@contextlib.asynccontextmanager
async def _player(records: Path) -> AsyncIterator[Any]:
    async def play(spec: GameSpec, **options: object) -> tuple[str, Path]:
        return spec.game_id, records

    yield play


def test_inline_games_start_the_command_bots_here_and_play_with_the_player(tmp_path: Path) -> None:
    lineup = Lineup("inl", (Bot("c", command=EXAMPLE), Bot("p", policy="greedy")), fresh_process=True)

    async def go() -> None:
        async with open_games(WorkerSettings("inline", 1), lineup, tmp_path, _player) as games:
            assert await games.play(_spec("g1")) == ("g1", tmp_path / "records")
            assert games.lineup is lineup and games.log_dir == tmp_path / "logs" and dict(games.addresses) == {}
            async with games.seats(("c", "p")) as seats:
                assert set(seats) == {"c"}
        assert [p.name for p in (tmp_path / "logs").iterdir()] == ["inl-c.log"]  # every start named by the run

    asyncio.run(go())


def test_worker_processes_play_the_games_and_a_dial_in_game_stays_here(tmp_path: Path) -> None:
    lineup = Lineup("wk", LINEUP.bots, fresh_process=True)
    (tmp_path / "records").mkdir()

    async def go() -> None:
        async with open_games(WorkerSettings("processes", 1), lineup, tmp_path, _player) as games:
            assert games.lineup == Lineup("wk", LINEUP.bots)  # the workers start a game's fresh bots
            assert isinstance(games.addresses, referee.fleet.bots.Addresses) and dict(games.addresses) == {}
            result = await games.play(_spec("g1"))
            assert result.game_id == "g1" and result.record_path == tmp_path / "records" / "g1.abluxx"
            assert result.record_path.read_bytes().startswith(MAGIC)
            assert await games.play(_spec("g2", "dialin:a")) == ("g2", tmp_path / "records")
            assert games.addresses.crashes == []

    asyncio.run(asyncio.wait_for(go(), 120))


class _Stand:
    """A started worker: closes, and tells its bots' crashes."""

    def __init__(self, name: str, crashes: list[str] | None = None) -> None:
        self.name, self.load, self.crashes, self.closed = name, 0, crashes or [], False

    async def close(self) -> None:
        self.closed = True


def _starts(monkeypatch: pytest.MonkeyPatch, outcomes: list[object]) -> list[tuple[str, float]]:
    """ProcessWorker.start gives the next outcome (a worker, or an exception to raise), and notes when it was asked
    and for which prefix."""
    asked: list[tuple[str, float]] = []

    async def start(lineup: Lineup, log_dir: Path, prefix: str) -> object:
        asked.append((prefix, time.monotonic()))
        assert log_dir.name == "logs"
        outcome = outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    monkeypatch.setattr(pool_module.ProcessWorker, "start", start)
    return asked


@pytest.mark.usefixtures("every_log_level")
def test_every_worker_starts_with_its_name_and_closes_with_its_crashes_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workers = [_Stand("w0", ["c0"]), _Stand("w1", ["c1"])]
    asked = _starts(monkeypatch, list(workers))

    async def go() -> WorkerPool:
        async with WorkerPool(WorkerSettings("processes", 2), LINEUP, tmp_path) as pool:
            assert [t.result() for t in pool.slots] == workers
        return pool

    with capture_logs() as logs:
        pool = asyncio.run(go())
    (ready,) = [e for e in logs if e["event"] == "workers ready"]
    assert (ready["workers"], ready["tournament"], ready["backend"]) == (2, "run", "processes")
    assert [p for p, _ in asked] == ["run-w0", "run-w1"]
    assert all(w.closed for w in workers) and pool.crashes == ["c0", "c1"]


@pytest.mark.usefixtures("every_log_level")
def test_a_worker_that_dies_while_starting_is_started_again_after_a_growing_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool_module, "START_RETRY_S", 0.2)
    up = _Stand("w0")
    asked = _starts(monkeypatch, [WorkerError("died"), WorkerError("died"), WorkerError("died"), up])

    async def go() -> None:
        async with WorkerPool(WorkerSettings("processes", 1), LINEUP, tmp_path) as pool:
            assert pool.slots[0].result() is up

    with capture_logs() as logs:
        asyncio.run(go())
    died = [(e["worker"], e["attempt"], e["error"]) for e in logs
            if e["event"] == "worker died while starting; starting it again"]  # fmt: skip
    assert died == [("run-w0", 1, "died"), ("run-w0", 2, "died"), ("run-w0", 3, "died")]
    times = [t for _, t in asked]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) == 3 and gaps[0] >= 0.2 and gaps[1] >= 0.4 and gaps[2] >= 0.6, gaps
    assert up.closed


def test_a_worker_that_keeps_dying_stops_the_start_and_the_started_ones_are_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool_module, "START_RETRY_S", 0.01)
    up = _Stand("w0", ["c0"])
    died = [WorkerError(f"died {i}") for i in range(4)]
    asked = _starts(monkeypatch, [up, *died])

    async def go() -> None:
        async with WorkerPool(WorkerSettings("processes", 2), LINEUP, tmp_path):
            pass

    with pytest.raises(WorkerError, match=r"^died 3$"):
        asyncio.run(go())
    assert len(asked) == 5 and up.closed


@pytest.mark.usefixtures("every_log_level")
def test_unreachable_entrants_are_retried_only_as_long_as_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def go(**options: Any) -> None:
        async with WorkerPool(WorkerSettings("processes", 1), LINEUP, tmp_path, **options):
            pass

    _starts(monkeypatch, [EntrantError("entrant x: down")])
    with pytest.raises(EntrantError, match="entrant x: down"):
        asyncio.run(go())  # no retry_s: at once
    up = _Stand("w0")
    asked = _starts(monkeypatch, [EntrantError("down"), EntrantError("down"), up])
    with capture_logs() as logs:
        asyncio.run(go(retry_s=0.01))
    retried = [(e["error"], e["retry_s"]) for e in logs if e["event"] == "entrants unreachable from a worker; retrying"]
    assert retried == [("down", 0.01), ("down", 0.01)]
    assert len(asked) == 3 and up.closed
    told: list[int] = []
    asked = _starts(monkeypatch, [EntrantError("down"), EntrantError("down"), EntrantError("still down")])
    with pytest.raises(EntrantError, match="still down"):
        asyncio.run(go(retry_s=0.01, keep_trying=lambda: told.append(1) or len(told) < 3))
    assert len(asked) == 3 and len(told) == 3


def test_the_ray_backend_joins_ray_starts_its_workers_there_and_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray itself is not needed: the backend's three calls are a stand-in's (tests/tournament/test_ray.py runs the
    real one)."""
    calls: list[object] = []

    async def start(lineup: Lineup, log_dir: Path, prefix: str) -> _Stand:
        assert lineup is LINEUP
        calls.append(("start", prefix, log_dir))
        return _Stand(prefix)

    ray = types.SimpleNamespace(connect=lambda s: calls.append(("connect", s)), start=start,
                                disconnect=lambda: calls.append("disconnect"))  # fmt: skip
    monkeypatch.setitem(sys.modules, "referee.fleet.ray_worker", ray)
    monkeypatch.setattr(referee.fleet, "ray_worker", ray, raising=False)
    settings = WorkerSettings("ray", 1)

    async def go() -> WorkerPool:
        async with WorkerPool(settings, LINEUP, tmp_path) as pool:
            assert pool._ray
        assert not pool._ray
        await pool.close()  # a second close leaves Ray alone
        return pool

    asyncio.run(go())
    assert calls == [("connect", settings), ("start", "run-w0", tmp_path / "logs"), "disconnect"]


def test_the_workers_bots_crashes_reach_the_runs_summary_once_they_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _starts(monkeypatch, [_Stand("w0", ["c0"]), _Stand("w1", ["c1"])])

    async def go() -> list:
        async with open_games(WorkerSettings("processes", 2), LINEUP, tmp_path, _player) as games:
            crashes = games.addresses.crashes  # type: ignore[attr-defined]
            assert crashes == []
        return crashes

    assert asyncio.run(go()) == ["c0", "c1"]


def test_closing_goes_past_a_slot_that_failed_and_a_worker_that_fails_to_close(tmp_path: Path) -> None:
    class Failing(_Stand):
        async def close(self) -> None:
            self.closed = True
            raise BrokenPipeError("gone")

    async def go() -> tuple[WorkerPool, list[_Stand]]:
        pool = WorkerPool(WorkerSettings("processes", 3), LINEUP, tmp_path)
        loop = asyncio.get_running_loop()
        workers = [Failing("w0", ["c0"]), _Stand("w2", ["c2"])]
        failed, first, last = loop.create_future(), loop.create_future(), loop.create_future()
        failed.set_exception(WorkerError("no python"))
        first.set_result(workers[0])
        last.set_result(workers[1])
        pool.slots = [first, failed, last]  # type: ignore[list-item]
        await pool.close()
        return pool, workers

    pool, workers = asyncio.run(go())
    assert all(w.closed for w in workers) and pool.crashes == ["c0", "c2"]
