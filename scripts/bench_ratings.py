"""The ratings on a big store (docs/ratings.md, issue 43): one tournament of 100,000 finished games of 1,000
entrants at tables of 4, results drawn from TrueSkill's model, stored through the store's own ``save_game``.

    python3 scripts/bench_ratings.py [--games 100000] [--entrants 1000] [--updates 200] [--data DIR] [--skip PARTS]
                                     [--json]

- ``full_fit_s``: ``rate`` over every stored game, from nothing, in this process;
- ``first_open_s``: ``abluxx serve`` started on the store, to its leaderboard's first 200 (no fit kept yet: every
  game is rated once and the fit kept);
- ``restart_to_standings_s``: the same again, now from the kept standings and fit; ``restart_503s``: the 503s it
  answered;
- ``restart_to_live_s``: a new ``Boards`` (in this process) from its first standings (the kept ones) to its tally
  built from every game: until then a finished game waits to be shown;
- ``update_ms_p95`` (and the median): a game committed and handed to the service's ``Boards``, to the leaderboard
  that shows it (``Boards.add`` then ``Boards.standings``), over ``--updates`` games, in this process;
  ``add_ms_p95``: the ``Boards.add`` part alone (the ratings' local update and keeping its seats' ratings).

``--data`` keeps (and reuses) the folder; the update games are committed into it.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_site import ready, serve

from referee.engine import EndReason
from referee.match.spec import GameResult, SeatStats
from referee.rating import BETA, MU, SIGMA, rate
from referee.service.reads import Boards, Reader
from referee.store import Slot, open_store
from referee.store import ratings as kept_fits
from referee.tournament.config import parse
from referee.tournament.runner import create_tournament


def build(data: Path, games: int, entrants: int, spare: int) -> str:
    """A tournament of ``games`` finished games and at least ``spare`` pending ones (reused if it is there)."""
    with open_store(data) as store:
        for row in store.tournaments():
            if row.done >= games:
                return row.id
        tables = entrants // 4
        spec = {"name": "ratings", "seed": 5, "table_size": 4, "tables": tables, "deals": -(-(games + spare) // tables)}
        config = parse({**spec, "entrants": [{"name": f"e{i:04d}", "policy": "random"} for i in range(entrants)]}, "-")
        slots = create_tournament(store, config, "bench_ratings")
        rng = random.Random(1)
        skill = {f"e{i:04d}": rng.gauss(MU, SIGMA) for i in range(entrants)}
        for slot in slots[:games]:
            store.save_game(config.tournament_id, slot, result(slot, skill, rng))
        return config.tournament_id


def result(slot: Slot, skill: dict[str, float], rng: random.Random) -> GameResult:
    perf = [skill[n] + rng.gauss(0, BETA) for n in slot.seats]
    places = tuple(1 + sum(o > p for o in perf) for p in perf)
    scores = tuple(10 - 3 * p for p in places)
    seats = [SeatStats(decision_us=[rng.randint(200, 5000) for _ in range(10)]) for _ in slot.seats]
    return GameResult(slot.game_id, scores, places, EndReason.EMPTY_HAND, seats, 40, "0" * 64, None)


def full_fit(data: Path, tid: str) -> float:
    with open_store(data) as store:
        games = [(g.names, g.places) for g in store.games(tid)]
        names = sorted({n for seats, _ in games for n in seats})
    t0 = time.perf_counter()
    rate(names, games)
    return time.perf_counter() - t0


def open_site(data: Path, tid: str) -> tuple[float, int]:
    """(seconds from ``abluxx serve``'s start to the leaderboard's first 200, the 503s before it)."""
    t0 = time.perf_counter()
    proc, base = serve(data)
    try:
        refused = 0
        while not ready(f"{base}/t/{tid}"):
            refused += 1
            time.sleep(0.2)
        return time.perf_counter() - t0, refused
    finally:
        proc.terminate()
        proc.wait(60)


async def updates(data: Path, tid: str, count: int) -> tuple[float, list[tuple[float, float]]]:
    """Seconds until a new Boards has built the tally that finished games are added to (until then it shows the
    kept standings), then milliseconds from a committed game handed to Boards to the standings that count it, and
    of that its ``Boards.add`` (the ratings' local update, keeping its seats' ratings), for ``count`` games."""
    reader = Reader(data)
    rng = random.Random(2)
    with open_store(data) as store:
        boards = Boards(reader, store)
        done = store.tournament(tid).done  # type: ignore[union-attr]
        t0 = time.perf_counter()
        await boards.standings(tid, done)  # the kept standings: the tally is built meanwhile, off the loop
        while not boards.builds:
            await asyncio.sleep(0.05)
        live = time.perf_counter() - t0
        skill = {n: rng.gauss(MU, SIGMA) for n in {n for s in store.slots(tid) for n in s.seats}}
        out = []
        for slot in store.slots(tid, pending_only=True)[:count]:
            store.save_game(tid, slot, result(slot, skill, rng))
            (game,) = [g for g in store.recent_games(tid, None, 1)]
            t0 = time.perf_counter()
            boards.add(tid, game)
            t1 = time.perf_counter()
            done += 1
            standings = await boards.standings(tid, done)
            out.append(((time.perf_counter() - t0) * 1000, (t1 - t0) * 1000))
            assert standings.games == done
    reader.close()
    return live, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--entrants", type=int, default=1000)
    ap.add_argument("--updates", type=int, default=200)
    ap.add_argument("--data", type=Path, help="keep the store here (default: a fresh temporary folder)")
    ap.add_argument("--skip", default="", help="comma-separated parts not to measure: full_fit, open, updates")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    data = args.data or Path(tempfile.mkdtemp(prefix="bench-ratings-"))
    if args.data is None:  # a store of this size is not left behind in the temporary folder
        atexit.register(shutil.rmtree, data, True)
    t0 = time.perf_counter()
    tid = build(data, args.games, args.entrants, args.updates)
    out: dict[str, Any] = {"games": args.games, "entrants": args.entrants, "store_built_s": time.perf_counter() - t0}
    skip = set(args.skip.split(","))
    if "full_fit" not in skip:
        out["full_fit_s"] = full_fit(data, tid)
        print(f"full_fit_s: {out['full_fit_s']:.1f}", file=sys.stderr, flush=True)  # a long run keeps its figures
    if "open" not in skip:
        with open_store(data) as store:  # a first open: nothing kept (a store from before them, or a reused folder)
            kept_fits.save(store, tid, {}, (-1, 0, 0))
            store.db.execute("DELETE FROM kept_standings")
        out["first_open_s"], out["first_open_503s"] = open_site(data, tid)
        print(f"first_open_s: {out['first_open_s']:.1f}", file=sys.stderr, flush=True)
        out["restart_to_standings_s"], out["restart_503s"] = open_site(data, tid)
        print(f"restart_to_standings_s: {out['restart_to_standings_s']:.1f}", file=sys.stderr, flush=True)
    if "updates" not in skip:
        out["restart_to_live_s"], ms = asyncio.run(updates(data, tid, args.updates))
        out["update_ms_p95"] = statistics.quantiles([m for m, _ in ms], n=20)[-1]
        out["update_ms_median"] = statistics.median(m for m, _ in ms)
        out["add_ms_p95"] = statistics.quantiles([a for _, a in ms], n=20)[-1]
    out = {k: round(v, 2) if isinstance(v, float) else v for k, v in out.items()}
    for k, v in out.items():
        print(f"{k:>24}: {v}", file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
