"""The web site's page times on a big store: builds a data folder with one tournament of about 100,000 finished
games (8 entrants, tables of 4, duplicate deals across tables), serves it with ``abluxx serve --http-port 0``, and
times each page.

    python3 scripts/bench_site.py [--games 100000] [--data DIR] [--repeat 5] [--json]

The games are stored through the store's own ``save_game`` (results, faults, decision times); the last 20 have real
self-played records so that the game page replays one. ``--data`` keeps (and reuses) the folder. For each page:
the median and worst of ``--repeat`` requests of the server's own time (its ``Server-Timing`` header: from the
request's arrival to the page rendered) and of the whole request on loopback (``wall_ms``). The standings' first
build, which the service starts as the site starts and does off its event loop (pages answer 503 meanwhile), is
timed apart (``first_build_s``: from the site's start to the leaderboard's first answer).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from referee.engine import EndReason
from referee.match.spec import GameResult, SeatStats
from referee.records import record_selfplay
from referee.store import open_store
from referee.tournament.config import parse
from referee.tournament.runner import create_tournament

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
NAMES = ["ada", "bob", "cyd", "dee", "eve", "fay", "gus", "hal"]
REAL_RECORDS = 20


def build(data: Path, games: int) -> str:
    """A tournament of about ``games`` finished games in ``data`` (reused if it is there); its id."""
    with open_store(data) as store:
        for row in store.tournaments():
            if row.done >= games * 0.99:
                return row.id
        spec = {"name": "bench", "seed": 5, "table_size": 4, "deals": max(1, round(games / 70))}
        config = parse({**spec, "entrants": [{"name": n, "policy": "random"} for n in NAMES]}, "<bench>")
        slots = create_tournament(store, config, "bench_site")
        rng = random.Random(1)
        for slot in slots:
            real = slot.slot >= len(slots) - REAL_RECORDS
            store.save_game(config.tournament_id, slot, _result(store, slot, rng, real))
        return config.tournament_id


def _result(store, slot, rng: random.Random, real: bool) -> GameResult:
    if real:
        path = store.records / f"{slot.game_id}.abluxx"
        rec = record_selfplay(slot.deck_seed, slot.seats, game_id=slot.game_id, path=path)
        scores, places, decisions = tuple(rec.footer.scores), tuple(rec.footer.places), len(rec.decisions)
    else:
        path = None
        scores = tuple(rng.randint(-12, 20) for _ in slot.seats)
        places, decisions = tuple(1 + sum(o > x for o in scores) for x in scores), rng.randint(30, 60)
    seats = []
    for _ in slot.seats:
        faults = {"timeout": 1} if rng.random() < 0.02 else {}
        seats.append(SeatStats(faults=faults, decision_us=[rng.randint(200, 5000) for _ in range(10)]))
    return GameResult(slot.game_id, scores, places, EndReason.EMPTY_HAND, seats, decisions, "0" * 64, path)


def fetch(url: str) -> tuple[float, float]:
    """(server ms from Server-Timing, wall ms) of one GET; the page must be 200."""
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as r:
        r.read()
        timing = r.headers.get("server-timing", "")
    wall = (time.perf_counter() - t0) * 1000
    m = re.search(r"dur=([0-9.]+)", timing)
    return (float(m[1]) if m else wall), wall


def ready(url: str) -> bool:
    """Whether the page answers 200 (503: its standings are still being built)."""
    try:
        fetch(url)
    except urllib.error.HTTPError as e:
        if e.code != 503:
            raise
        return False
    return True


def serve(data: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([*ABLUXX, "serve", "--data", str(data), "--port", "0", "--http-port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:
        if m := re.match(r"site on (http://\S+?)/?$", line.strip()):
            return proc, m[1]
    raise SystemExit("abluxx serve did not start its site")


def pages(data: Path, tid: str) -> dict[str, str]:
    with open_store(data) as store:
        latest = store.recent_games(tid, None, 1)[0]
        middle = latest.slot // 2
    return {
        "home": "/", "leaderboard": f"/t/{tid}", "leaderboard_table": f"/t/{tid}/table",
        "games": f"/t/{tid}/games", "games_deep": f"/t/{tid}/games?before={middle}",
        "entrant": f"/t/{tid}/e/ada", "entrant_deep": f"/t/{tid}/e/ada?before={middle}",
        "game": f"/g/{latest.game_id}", "bots": "/bots", "how_to_enter": "/how-to-enter",
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--data", type=Path, help="keep the store here (default: a fresh temporary folder)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    import atexit
    import shutil
    import tempfile

    data = args.data or Path(tempfile.mkdtemp(prefix="bench-site-"))
    if args.data is None:  # not left behind in the temporary folder
        atexit.register(shutil.rmtree, data, True)
    t0 = time.perf_counter()
    tid = build(data, args.games)
    built_s = time.perf_counter() - t0
    proc, base = serve(data)
    try:
        t0 = time.perf_counter()
        while not ready(f"{base}/t/{tid}"):  # the standings' first build (once per tournament, off the loop)
            time.sleep(1)
        first_build_s = time.perf_counter() - t0
        out: dict[str, dict[str, float]] = {}
        for name, path in pages(data, tid).items():
            runs = [fetch(base + path) for _ in range(args.repeat)]
            server, wall = [r[0] for r in runs], [r[1] for r in runs]
            out[name] = {"server_ms": round(statistics.median(server), 1), "server_max_ms": round(max(server), 1),
                         "wall_ms": round(statistics.median(wall), 1), "wall_max_ms": round(max(wall), 1)}  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(60)
    with open_store(data) as store:
        games = store.tournament(tid).done  # type: ignore[union-attr]
    result = {"games": games, "store_built_s": round(built_s, 1), "first_build_s": round(first_build_s, 1),
              "pages": out, "slowest_server_ms": max(p["server_max_ms"] for p in out.values())}  # fmt: skip
    if args.json:
        print(json.dumps(result))
    else:
        for name, p in out.items():
            print(f"{name:20} server {p['server_ms']:7.1f} ms (worst {p['server_max_ms']:.1f}), wall {p['wall_ms']}")
        print(f"{games} games; first standings build {first_build_s:.1f} s")


if __name__ == "__main__":
    main()
