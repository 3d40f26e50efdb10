"""How soon a leaderboard hears of a finished game: serves a fresh data folder with ``abluxx serve --http-port 0``,
plays a small tournament of built-in policies through the API, follows its live stream (``/t/ID/events``) and, at
each ``game`` event, fetches the table the page's script fetches. Prints, in ms after each game was committed to
the store, when the event arrived and when the new table was in hand.

    python3 scripts/site_latency.py [--games 20] [--json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
TOKEN = "latency-organiser"


def serve(data: Path) -> tuple[subprocess.Popen, str, str]:
    """``abluxx serve`` with an organiser token; (process, site host:port, gRPC host:port)."""
    env = {**os.environ, "ABLUXX_ORGANISER_TOKENS": TOKEN}
    argv = [*ABLUXX, "serve", "--data", str(data), "--port", "0", "--http-port", "0"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert proc.stdout is not None
    site = grpc_at = ""
    for line in proc.stdout:
        if m := re.match(r"site on http://(\S+?)/?$", line.strip()):
            site = m[1]
        if m := re.match(r"listening on (\S+)", line):
            grpc_at = m[1]
        if site and grpc_at:
            return proc, site, grpc_at
    raise SystemExit("abluxx serve did not start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="site-latency-"))
    proc, site, grpc_at = serve(data)
    try:
        stub = ref_grpc.RefereeStub(grpc.insecure_channel(grpc_at))
        meta = [("authorization", f"Bearer {TOKEN}")]
        c = ref_pb.TournamentConfig(name="latency", table_size=2, deals=max(1, args.games // 3 + 1), seed=3,
                                    concurrency=1)  # fmt: skip
        for name, policy in (("a", "random"), ("b", "greedy"), ("c", "random")):
            c.entrants.add(name=name, policy=policy)
        tid = stub.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=meta).tournament_id
        host, port = site.rsplit(":", 1)
        stream = http.client.HTTPConnection(host, int(port), timeout=120)
        stream.request("GET", f"/t/{tid}/events")
        events = stream.getresponse()
        events.readline()  # retry: ...
        stub.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=meta)
        db = sqlite3.connect(data / "abluxx.db")
        heard: list[float] = []
        fetched: list[float] = []
        last = b""
        while len(heard) < args.games:
            line = events.readline().strip()
            if not line:
                continue
            previous, last = last, line
            if previous != b"event: game":
                continue
            at = time.time()
            table = http.client.HTTPConnection(host, int(port), timeout=120)
            table.request("GET", f"/t/{tid}/table")
            table.getresponse().read()
            done = time.time()
            game_id = json.loads(line.removeprefix(b"data:"))["game_id"]
            committed = db.execute("SELECT finished_at FROM games WHERE game_id = ?", (game_id,)).fetchone()[0]
            heard.append((at - committed) * 1000)
            fetched.append((done - committed) * 1000)
    finally:
        proc.terminate()
        proc.wait(60)
    out = {"games": len(heard), "event_ms_median": round(statistics.median(heard), 1),
           "event_ms_max": round(max(heard), 1), "table_ms_median": round(statistics.median(fetched), 1),
           "table_ms_max": round(max(fetched), 1)}  # fmt: skip
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))


if __name__ == "__main__":
    main()
