"""The Ray backend (docs/scale.md) on a real local Ray with 2 CPUs, on loopback: 2 actors store what one process
stores, and an actor killed with ``ray.kill`` mid-game loses nothing and doubles nothing.

Ray is an optional extra (``pip install -e ".[ray]"``): without it these tests skip, except under CI=true (.ci/run
installs the extra), where they fail. A Ray start costs seconds, so one Ray serves the whole module."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("CI") == "true":
    import ray  # under CI a missing Ray is a failure, not a skip
else:
    ray = pytest.importorskip("ray", reason='Ray is an optional extra: pip install -e ".[ray]"')

# ray_worker imports Ray: after the guard, so that without Ray the module skips rather than fails to collect
from referee.fleet import match_player, ray_worker
from referee.fleet.pool import WorkerPool
from referee.store import open_store
from referee.tournament.config import WorkerSettings, load
from referee.tournament.play import lineup
from referee.tournament.runner import create_tournament, play_slots, run_tournament

from .test_workers import BOTS, POLICIES, same_as_inline, write_config


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    """The local Ray a run starts (fleet/ray_worker.connect: loopback, a private temp root and token), joined by
    every run in the module."""
    ray_worker.connect(WorkerSettings("ray", 2))
    yield
    ray_worker.disconnect()


def test_two_ray_actors_store_what_one_process_stores(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, 'name = "ray"\nseed = 5\ntable_size = 3\ndeals = 2\n' + POLICIES)
    config = load(cfg)
    with open_store(tmp_path / "ray2") as store:
        out = asyncio.run(run_tournament(config, store, match_player, progress=False,
                                         workers=WorkerSettings("ray", 2)))  # fmt: skip
    assert out.played == 20
    assert ray.is_initialized()  # the run joined the module's Ray and left it running
    same_as_inline(tmp_path, cfg, tmp_path / "ray2", 20)


def test_a_ray_actor_killed_mid_game_loses_nothing_and_doubles_nothing(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, 'name = "rk"\nseed = 3\ntable_size = 2\ndeals = 4\n' + BOTS)
    config = load(cfg)
    data = tmp_path / "killed"

    async def play() -> tuple[int, int, Any]:
        with open_store(data) as store:
            create_tournament(store, config, str(cfg))
            async with WorkerPool(WorkerSettings("ray", 2), lineup(config), store.data) as pool:
                # the workers start the command bots; the coordinator schedules without them (as open_games does)
                run = asyncio.create_task(play_slots(store, replace(config, fresh_process=False), pool.play, {}, 4))
                first = pool.slots[0].result()
                while len(store.games(config.tournament_id)) < 3 or first.load == 0:
                    assert not run.done()
                    await asyncio.sleep(0.002)
                in_flight = first.load
                ray.kill(first.actor)
                played, _ = await run
                return played, in_flight, pool.lost

    played, in_flight, lost = asyncio.run(play())
    assert in_flight >= 1 and lost == 1  # it died with games in flight
    with sqlite3.connect(data / "abluxx.db") as c:  # the lost games void their sets, which are dealt again
        redone = c.execute("SELECT COUNT(*) FROM void_games WHERE finished = 1").fetchone()[0]
    assert played == 24 + redone  # every game once, and again the finished games of a void set
    same_as_inline(tmp_path, cfg, data, 24)


def test_a_ladder_on_two_ray_actors_plays_its_budget_and_checks_out(tmp_path: Path) -> None:
    """Which tables a ladder chooses depends on when its games end (docs/ladders.md), so two runs need not store the
    same games; what holds on Ray as in one process is the budget played and every choice made again from the store."""
    from referee.tournament.ladder_run import run_ladder

    from .test_ladder_run import assert_history_checks_out, stored
    from .test_ladder_run import write as write_ladder

    config = load(write_ladder(tmp_path, 12))
    with open_store(tmp_path / "ray2") as store:
        out = asyncio.run(run_ladder(config, store, match_player, progress=False, workers=WorkerSettings("ray", 2)))
    assert out.played == 12
    assert len(stored(tmp_path / "ray2")) == 12 and all(row[4] is not None for row in stored(tmp_path / "ray2"))
    assert_history_checks_out(tmp_path / "ray2", config)


def test_crashes_on_ray_actors_reach_the_runs_summary(tmp_path: Path) -> None:
    """Each actor runs its own copy of a command bot that crashes; the run's summary lists their crashes."""
    from referee.fleet import crash_summary

    from .test_crash_summary import CONFIG

    config = load(write_config(tmp_path, CONFIG))
    with open_store(tmp_path / "d") as store:
        out = asyncio.run(run_tournament(config, store, match_player, progress=False,
                                         workers=WorkerSettings("ray", 2)))  # fmt: skip
    assert out.crashes and {c.entrant for c in out.crashes} == {"crasher"}
    assert all(c.where.startswith(config.tournament_id + "-w") for c in out.crashes), out.crashes
    assert "the bot's process exited with code 7" in crash_summary(out.crashes)[0]
