#!/usr/bin/env python3
"""Benchmark: a tournament of built-in policy entrants (so the referee's own work is what is measured) through the
real tournament runner, match runner, record writing and SQLite store, played inline, on 2 local worker processes
and, when Ray is installed, on 2 Ray actors (docs/scale.md).

    python3 scripts/bench_workers.py [--seconds S] [--json] [--concurrency C]

Each backend plays for about S seconds after its workers are up (their start is not counted), then starts no more
games. Prints games/s and decisions/s for each, the scaling of 2 worker processes over one process, and the
coordinator's CPU: its share of all the referee's CPU in the 2-process run (the coordinator and its workers) and
how much of one core it used. Also the machine's load average before and after, since the machine may be shared.
The last line is one JSON object with --json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.match.spec import GameSpec
from referee.tournament.runner import GameHooks
from referee.tournament.schedule import Slot

ENTRANTS = [("random", "random"), ("greedy", "greedy"), ("counter", "counter"), ("greedy-2", "greedy"),
            ("random-2", "random")]  # fmt: skip
TICK = os.sysconf("SC_CLK_TCK")


def _own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _pid_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


class _Deadline(GameHooks):
    """Hooks that start no game once ``seconds`` have passed and a few games have started: on a loaded machine a
    short run could otherwise end before its first game and have nothing to divide by."""

    MIN_GAMES = 4

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = 0
        self.t0 = time.perf_counter()

    def should_continue(self) -> bool:
        return self.started < self.MIN_GAMES or time.perf_counter() - self.t0 < self.seconds

    def on_start(self, slot: Slot, spec: GameSpec) -> None:
        self.started += 1


async def _worker_pids(pool: Any) -> list[int]:
    pids = []
    for t in pool.slots:
        w = t.result()
        if hasattr(w, "pid"):
            pids.append(w.pid)
        else:  # a Ray actor
            pids.append(await w.actor.pid.remote())
    return pids


async def measure(backend: str, count: int, seconds: float, concurrency: int, data: Path) -> dict[str, float]:
    from referee.fleet import match_player
    from referee.store import open_store
    from referee.tournament.config import WorkerSettings, parse
    from referee.tournament.play import open_games
    from referee.tournament.runner import create_tournament, play_slots

    config = parse({"name": f"bench-{backend}{count}", "table_size": 3, "deals": 2000, "concurrency": concurrency,
                    "entrants": [{"name": n, "policy": p} for n, p in ENTRANTS]}, "bench")  # fmt: skip
    with open_store(data) as store:
        create_tournament(store, config, "bench")
        settings = WorkerSettings(backend, count) if backend != "inline" else WorkerSettings()
        async with open_games(settings, config, store, match_player) as (play, addresses, scheduled):
            games = getattr(play, "__self__", None)  # the fleet's Games; on workers its backend is WorkerPool.play
            fleet_play = getattr(games, "backend", None)
            fleet_play = getattr(fleet_play, "elsewhere", fleet_play)  # fleet/pool.py: but for dial-in games, the pool
            pool = getattr(fleet_play, "__self__", None)
            pids = await _worker_pids(pool) if pool is not None else []
            hooks = _Deadline(seconds)
            cpu0, workers0 = _own_cpu(), sum(_pid_cpu(p) for p in pids)
            played, _ = await play_slots(store, scheduled, play, addresses, concurrency, hooks=hooks)
            wall = time.perf_counter() - hooks.t0
            coordinator = _own_cpu() - cpu0
            workers = sum(_pid_cpu(p) for p in pids) - workers0
        games = store.games(config.tournament_id)
        decisions = sum(g.decisions for g in games)
        record_bytes = sum(f.stat().st_size for f in (data / "records").glob("*.abluxx"))
    return {
        "games": played,
        "wall_s": wall,
        "games_per_s": played / wall,
        "decisions_per_s": decisions / wall,
        "coordinator_cpu_s": coordinator,
        "workers_cpu_s": workers,
        "record_bytes_per_game": record_bytes / max(1, len(games)),
        "decisions_per_game": decisions / max(1, len(games)),
    }


def _load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="seconds of play per backend (default 20)")
    ap.add_argument("--concurrency", type=int, default=16, help="games at once, over all workers (default 16)")
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()

    from referee.log import configure

    configure(level="warning")
    try:
        import ray  # noqa: F401

        have_ray = True
    except ImportError:
        have_ray = False
    load_before = _load()
    runs: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        for name, backend, count in [("inline", "inline", 1), ("w2", "processes", 2)] + (
            [("ray2", "ray", 2)] if have_ray else []
        ):
            runs[name] = asyncio.run(measure(backend, count, args.seconds, args.concurrency, Path(tmp) / name))
            r = runs[name]
            print(f"{name:>6}: {r['games']:>6} games in {r['wall_s']:5.1f} s = {r['games_per_s']:7.1f} games/s, "
                  f"{r['decisions_per_s']:8.0f} decisions/s; CPU: coordinator {r['coordinator_cpu_s']:5.1f} s, "
                  f"workers {r['workers_cpu_s']:5.1f} s", flush=True)  # fmt: skip
    load_after = _load()
    w2 = runs["w2"]
    out: dict[str, Any] = {
        "games_per_s_inline": round(runs["inline"]["games_per_s"], 1),
        "games_per_s_w2": round(w2["games_per_s"], 1),
        "scaling_w2": round(w2["games_per_s"] / runs["inline"]["games_per_s"], 2),
        # of all the referee's CPU in the 2-process run, the coordinator's part (the rest is the workers')
        "coordinator_cpu_share": round(w2["coordinator_cpu_s"] / (w2["coordinator_cpu_s"] + w2["workers_cpu_s"]), 3),
        "coordinator_core_use_w2": round(w2["coordinator_cpu_s"] / w2["wall_s"], 3),  # of one core
        # CPU per game: what the load on a shared machine changes least
        "cpu_ms_per_game_inline": round(1000 * runs["inline"]["coordinator_cpu_s"] / runs["inline"]["games"], 2),
        "coordinator_cpu_ms_per_game_w2": round(1000 * w2["coordinator_cpu_s"] / w2["games"], 2),
        "worker_cpu_ms_per_game_w2": round(1000 * w2["workers_cpu_s"] / w2["games"], 2),
        "decisions_per_s_inline": round(runs["inline"]["decisions_per_s"]),
        "decisions_per_game": round(runs["inline"]["decisions_per_game"], 1),
        "record_bytes_per_game": round(runs["inline"]["record_bytes_per_game"]),
        "cores": os.cpu_count(),
        "load_before": round(load_before, 2),
        "load_after": round(load_after, 2),
        "seconds": args.seconds,
        "concurrency": args.concurrency,
    }
    if "ray2" in runs:
        out["games_per_s_ray2"] = round(runs["ray2"]["games_per_s"], 1)
        out["scaling_ray2"] = round(runs["ray2"]["games_per_s"] / runs["inline"]["games_per_s"], 2)
    print(f"scaling_w2 = {out['scaling_w2']}, coordinator share of the CPU = {out['coordinator_cpu_share']}, "
          f"load {out['load_before']} -> {out['load_after']} on {out['cores']} cores")  # fmt: skip
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
