#!/usr/bin/env python3
"""Benchmark: a duel's games/s played inline and on 2 local worker processes (docs/duel.md, docs/scale.md).

    python3 scripts/bench_duel.py [--games G] [--concurrency C] [--table-size K] [--json]

The duel is the real one (the duel runner, the fleet, the match runner, records written, every pair stored in a real
duels.db), between two built-in policies (random as candidate and baseline, each with its own seeds, and the default
field at tables of 3 to 5), so the referee's own work is what is measured. Its test is set so wide (alpha = beta =
1e-9, margin 0.01) that it plays all G games (two identical deterministic bots would differ by 0 every pair, and the
test would stop them at once). The rate counts the pairs from the first stored pair to the last, so neither the
workers' start nor the first pair's latency is in it. Prints the machine's load average before and after, since the
machine may be shared; the last line is one JSON object with --json. """

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any


async def measure(backend: str, count: int, games: int, concurrency: int, table_size: int, data: Path) -> dict:
    from referee.duel.runner import DuelSettings, DuelState, default_field, new_id, run_duel
    from referee.duel.store import DuelStore
    from referee.fleet import WorkerSettings
    from referee.stats import Sprt
    from referee.tournament.config import EntrantConfig

    settings = DuelSettings(
        candidate=EntrantConfig("cand", policy="random"),
        baseline=EntrantConfig("base", policy="random"),
        field=default_field(table_size),
        table_size=table_size,
        max_games=games,
        test=Sprt(alpha=1e-9, beta=1e-9, margin=0.01),
    )
    stamps: list[float] = []
    with DuelStore(data) as store:
        state = DuelState(new_id("bench"), settings, {})
        store.create(state.duel_id, settings.to_json())
        workers = WorkerSettings() if backend == "inline" else WorkerSettings(backend, count)
        await run_duel(state, store, concurrency=concurrency, workers=workers,
                       on_pair=lambda s: stamps.append(time.perf_counter()))  # fmt: skip
        pairs = len(store.pairs(state.duel_id))
    elapsed = stamps[-1] - stamps[0] if len(stamps) > 1 else float("nan")
    return {"pairs": pairs, "games_per_s": 2 * (len(stamps) - 1) / elapsed if elapsed > 0 else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200, help="games per backend (default 200)")
    ap.add_argument("--concurrency", type=int, default=8, help="pairs at once (default 8)")
    ap.add_argument("--table-size", type=int, default=2, help="players per game (default 2)")
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()
    out: dict[str, Any] = {"games": args.games, "concurrency": args.concurrency, "table_size": args.table_size,
                           "load_before": os.getloadavg()[0]}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for name, backend, count in (("inline", "inline", 1), ("w2", "processes", 2)):
            got = asyncio.run(measure(backend, count, args.games, args.concurrency, args.table_size, Path(tmp) / name))
            out[f"games_per_s_{name}"] = round(got["games_per_s"], 1)
            out[f"pairs_{name}"] = got["pairs"]
            print(f"{name:>6}: {got['games_per_s']:8.1f} games/s ({got['pairs']} pairs)", flush=True)
    out["scaling_w2"] = round(out["games_per_s_w2"] / out["games_per_s_inline"], 2) if out["games_per_s_inline"] else 0
    out["load_after"] = os.getloadavg()[0]
    print(f"load average {out['load_before']:.1f} -> {out['load_after']:.1f}")
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
