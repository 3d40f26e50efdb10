"""How soon a leaderboard hears of a finished game: serves a fresh data folder with ``abluxx serve --http-port 0``,
plays a small tournament of built-in policies through the API, follows its live stream (``/t/ID/events``) and, at
each ``game`` event, fetches the table the page's script fetches. Prints, in ms after each game was committed to
the store, when the event arrived and when the new table was in hand.

Then, with ``--readers N`` (default 20), whether the gRPC service stays quick while the site is busy: it calls
``ListTournaments`` every ``--interval-ms`` for ``--seconds``, first with nobody reading the site, then while N
readers (threads of another process, each on its own kept-alive connection) fetch the site's pages back to back,
and prints each phase's median, p99 and worst in ms, and the pages served a second (docs/web.md, "Measured").

    python3 scripts/site_latency.py [--games 20] [--readers 20] [--seconds 10] [--json]
"""

from __future__ import annotations

import argparse
import atexit
import http.client
import json
import multiprocessing
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc
from referee.store import open_store

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


def _read_pages(site: str, paths: list[str], readers: int, stop, served) -> None:
    """``readers`` threads, each fetching ``paths`` in turn on its own kept-alive connection until ``stop``."""
    host, port = site.rsplit(":", 1)

    def reader(k: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        i = k
        while not stop.is_set():
            try:
                conn.request("GET", paths[i % len(paths)])
                conn.getresponse().read()
                with served.get_lock():
                    served.value += 1
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection(host, int(port), timeout=60)
            i += 1

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _calls(stub: ref_grpc.RefereeStub, seconds: float, interval_s: float) -> list[float]:
    """ListTournaments every ``interval_s`` for ``seconds``: each call's time in ms."""
    out = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        stub.ListTournaments(ref_pb.ListTournamentsRequest(), timeout=30)
        out.append((time.perf_counter() - t0) * 1000)
        time.sleep(interval_s)
    return out


def _summary(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {"median": round(statistics.median(ms), 2), "p99": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 2),
            "max": round(ms[-1], 2), "calls": len(ms)}  # fmt: skip


def grpc_under_readers(
    stub, site: str, tid: str, game_id: str, args: argparse.Namespace, entrant: str = "a"
) -> dict[str, object]:
    """ListTournaments' times alone, then with ``args.readers`` page readers."""
    paths = ["/", f"/t/{tid}", f"/t/{tid}/games", f"/t/{tid}/e/{entrant}", f"/g/{game_id}", "/bots", f"/t/{tid}/table"]
    stub.ListTournaments(ref_pb.ListTournamentsRequest(), timeout=30)  # the channel connected
    quiet = _calls(stub, args.seconds, args.interval_ms / 1000)
    stop, served = multiprocessing.Event(), multiprocessing.Value("l", 0)
    load = multiprocessing.Process(target=_read_pages, args=(site, paths, args.readers, stop, served))
    load.start()
    time.sleep(1)  # every reader connected and reading
    before, t0 = served.value, time.monotonic()
    busy = _calls(stub, args.seconds, args.interval_ms / 1000)
    pages_per_s = (served.value - before) / (time.monotonic() - t0)
    stop.set()
    load.join(60)
    return {"readers": args.readers, "grpc_ms_quiet": _summary(quiet), "grpc_ms_busy": _summary(busy),
            "pages_per_s": round(pages_per_s, 1), "load_average": os.getloadavg()[0]}  # fmt: skip


def on_stored(args: argparse.Namespace) -> None:
    """The gRPC phase alone, on bench_site.py's big tournament (its pages cost more than a small one's)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import bench_site

    data = args.data or Path(tempfile.mkdtemp(prefix="site-latency-"))
    if args.data is None:  # not left behind in the temporary folder
        atexit.register(shutil.rmtree, data, True)
    tid = bench_site.build(data, args.stored)
    with open_store(data) as store:
        game_id = store.recent_games(tid, None, 1)[0].game_id
    proc, site, grpc_at = serve(data)
    try:
        while not bench_site.ready(f"http://{site}/t/{tid}"):  # 503 while the standings are first built
            time.sleep(1)
        stub = ref_grpc.RefereeStub(grpc.insecure_channel(grpc_at))
        out = {"stored": args.stored, **grpc_under_readers(stub, site, tid, game_id, args, "ada")}
    finally:
        proc.terminate()
        proc.wait(60)
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--readers", type=int, default=20, help="concurrent page readers (0: no gRPC phase)")
    ap.add_argument("--seconds", type=float, default=10, help="how long each gRPC phase calls")
    ap.add_argument("--interval-ms", type=float, default=20, help="the pause between two gRPC calls")
    ap.add_argument("--stored", type=int, default=0, help="only the gRPC phase, on a store of about this many "
                    "games (bench_site.py's tournament: heavier pages); kept in --data")  # fmt: skip
    ap.add_argument("--data", type=Path, help="the data folder for --stored (reused when it has the games)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.stored:
        return on_stored(args)
    data = Path(tempfile.mkdtemp(prefix="site-latency-"))
    atexit.register(shutil.rmtree, data, True)  # not left behind in the temporary folder
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
        while events.readline():  # the stream ends with the tournament: no game plays while the loop is measured
            pass
        loop = grpc_under_readers(stub, site, tid, game_id, args) if args.readers else {}
    finally:
        proc.terminate()
        proc.wait(60)
    out = {"games": len(heard), "event_ms_median": round(statistics.median(heard), 1),
           "event_ms_max": round(max(heard), 1), "table_ms_median": round(statistics.median(fetched), 1),
           "table_ms_max": round(max(fetched), 1), **loop}  # fmt: skip
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))


if __name__ == "__main__":
    main()
