#!/usr/bin/env python3
"""Benchmark: the same 1,000-game tournament of built-in policies played by a real `abluxx serve`, once with no
watcher and once with one WatchTournament stream reading every event, over real loopback gRPC.

    python3 scripts/bench_watch.py [--games N] [--watchers W] [--seconds S] [--json]

Prints each run's wall time from StartTournament to finished, and their ratio (watched / unwatched): issue 11
asks for at most 1.2. Watching once recounted every stored game after each game (141-179 s against 7-9 s for
1,200 games). --seconds bounds each run (default 600). The last line is one JSON object with --json.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc
from referee.tournament.schedule import size

TOKEN = "bench-organiser-token"
POLICIES = ["random", "greedy", "counter", "random"]
PER_DEAL = size(len(POLICIES), 2, 0, 1, "across")  # games per deal with the defaults (tables of 2, across)


def _serve(data: Path) -> tuple[subprocess.Popen, str]:
    (data.parent / "server.toml").write_text(f'[auth]\norganiser_tokens = ["{TOKEN}"]\n')
    argv = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())", "serve",
            "--data", str(data), "--port", "0", "--config", str(data.parent / "server.toml"),
            "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if m := re.search(r"listening on (\S+:\d+)", line):
            return proc, m[1]
    raise RuntimeError("abluxx serve did not start")


def run(games: int, watchers: int, seconds: float, name: str) -> tuple[float, int]:
    """Seconds from StartTournament to the tournament finished, with ``watchers`` streams reading it, and how many
    games it played (the deals are rounded up, so at least ``games``)."""
    with tempfile.TemporaryDirectory() as tmp:
        proc, address = _serve(Path(tmp) / "data")
        try:
            s = ref_grpc.RefereeStub(grpc.insecure_channel(address))
            meta = [("authorization", f"Bearer {TOKEN}")]
            c = ref_pb.TournamentConfig(name=name, deals=math.ceil(games / PER_DEAL), concurrency=8)
            for i, p in enumerate(POLICIES):
                c.entrants.add(name=f"{p}{i}", policy=p)
            t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=meta, timeout=60)
            streams = [s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=t.tournament_id),
                                         timeout=seconds) for _ in range(watchers)]  # fmt: skip
            for st in streams:
                next(st)
            ended: list[str] = []

            def read(stream) -> None:
                try:
                    last = [e for e in stream][-1]
                    ended.append(ref_pb.TournamentState.Name(last.tournament.state))
                except grpc.RpcError as e:
                    ended.append(f"{e.code().name}: {e.details()}")

            readers = [threading.Thread(target=read, args=(st,)) for st in streams]
            for r in readers:
                r.start()
            start = time.perf_counter()
            s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t.tournament_id), metadata=meta)
            while True:
                now = s.GetTournament(ref_pb.GetTournamentRequest(tournament_id=t.tournament_id), timeout=60)
                if now.state == ref_pb.TOURNAMENT_STATE_FINISHED:
                    elapsed = time.perf_counter() - start
                    break
                if time.perf_counter() - start > seconds:
                    raise RuntimeError(f"not finished within {seconds} s ({now.finished}/{now.games} games)")
                time.sleep(0.05)
            for r in readers:
                r.join(60)
            if any(e != "TOURNAMENT_STATE_FINISHED" for e in ended):
                raise RuntimeError(f"a watcher did not follow the tournament to its end: {ended}")
            return elapsed, now.games
        finally:
            proc.terminate()
            proc.wait(60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1000, help="games, rounded up to whole deals (default 1000)")
    ap.add_argument("--watchers", type=int, default=1, help="watchers in the watched run (default 1)")
    ap.add_argument("--seconds", type=float, default=600.0, help="give up on a run after this long (default 600)")
    ap.add_argument("--json", action="store_true", help="end with one JSON line")
    args = ap.parse_args()
    unwatched, games = run(args.games, 0, args.seconds, "unwatched")
    print(f"unwatched: {unwatched:.2f} s for {games} games")
    watched, _ = run(args.games, args.watchers, args.seconds, "watched")
    print(f"watched by {args.watchers}: {watched:.2f} s")
    ratio = watched / unwatched
    print(f"ratio watched/unwatched: {ratio:.3f} (goal <= 1.2)")
    if args.json:
        print(json.dumps({"games": games, "watchers": args.watchers,
                          "unwatched_s": round(unwatched, 3), "watched_s": round(watched, 3),
                          "ratio": round(ratio, 3)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
