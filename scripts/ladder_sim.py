#!/usr/bin/env python3
"""Simulation: bench_ladder's convergence on games drawn from TrueSkill's own model (docs/tournaments.md, "What
the pairing cannot fix").

    python3 scripts/ladder_sim.py [--json] [--seeds N] [--entrants N] [--span MU] [--budget G]
                                  [--pairing ladder|true-order] [--jobs J]
    python3 scripts/ladder_sim.py --calibration [--json] [--seeds N] [--jobs J]

The bench's ``convergence`` (the ladder's own ``Book`` and ``choose`` on a simulated clock, the leaderboard's
TrueSkill, tau of mu - 3 sigma to the known order), but each game's places come from TrueSkill's model instead of
the policies: entrant i (best first) has a true mu of 32 - span * i / (N - 1), each plays mu + N(0, beta), beta =
25/6, seeded by the game. A seed takes seconds instead of the bench's minutes, so a question about the pairing can
be asked over a hundred seeds; what carries over to real games must still be measured there (bench_ladder.py).

- ``--pairing true-order``: the ladder's rule given the known order instead of its ratings, once it has seen a
  result, as if its estimates were exact.

- ``--calibration``: instead, the ratings' calibration on random tables of 4 (``rating_calibration.py``): the
  coverage of mu +- 1.96 sigma and Kendall's tau, whole-history fit beside the one-pass update, on the same
  games, for 16, 32 and 64 entrants at 50, 200 and 1,000 games (default 24 seeds), on three fields: skills
  drawn from the prior, the graded field above, and that field centred on the prior's mean.

Prints the games to tau 0.9 for the pairing and for uniformly random tables on the same seeds, their ratio with a
90% bootstrap interval (as bench_ladder), and when each first reached tau 0.9 (averaged over the seeds).
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
from concurrent.futures import ProcessPoolExecutor

import bench_ladder as bench
import rating_calibration

from referee.log import configure
from referee.rating import Ratings, environment
from referee.tournament.schedule import _derive

BETA = environment().beta  # the leaderboard's: 25/6
TOP = 32.0


def model_game(mus: list[float], seats: tuple[str, ...], deck: int, game_id: str) -> tuple[int, ...]:
    """Places drawn from TrueSkill's model: each seat performs its true mu plus N(0, beta); the entrant's index
    is in its name (``e07-...``)."""
    rng = random.Random(_derive(deck, game_id, "model"))
    perf = [mus[int(s[1 : s.index("-")])] + rng.gauss(0, BETA) for s in seats]
    order = sorted(range(len(seats)), key=lambda i: -perf[i])
    places = [0] * len(seats)
    for place, i in enumerate(order, 1):
        places[i] = place
    return tuple(places)


class _Firsts:
    """Wraps the bench's tau to note when it first reached 0.9 (in games: it is asked after each)."""

    def __init__(self) -> None:
        self.rounds: int | None = None
        self.calls = 0

    def __call__(self, ratings: Ratings, names: list[str]) -> float:
        t = _TAU(ratings, names)
        self.calls += 1
        if t >= 0.9 and self.rounds is None:
            self.rounds = self.calls
        return t


_TAU = bench.tau


def _init() -> None:
    configure("warning")


def one(method: str, seed: int, n: int, span: float, budget: int, slots: int = 0) -> tuple[int, int]:
    """(games to tau 0.9 as the bench counts them, games when tau first reached 0.9)."""
    mus = [TOP - span * i / (n - 1) for i in range(n)]
    firsts = _Firsts()
    bench.tau = firsts
    out = bench.convergence(method, seed, budget, 4, n, slots, games=functools.partial(model_game, mus))
    return out, firsts.rounds or budget


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--seeds", type=int, default=None, help="seeds (default 48; 24 with --calibration)")
    p.add_argument("--calibration", action="store_true", help="the ratings' calibration instead (see above)")
    p.add_argument("--entrants", type=int, default=32, help="entrants (default 32, as the wide field)")
    p.add_argument("--span", type=float, default=27.0, help="true mu from best to worst (default 27)")
    p.add_argument("--budget", type=int, default=1000, help="games per run (default 1000)")
    p.add_argument("--slots", type=int, default=0, help="game slots (default 0: a table for everyone, entrants / 4)")
    p.add_argument("--pairing", choices=("ladder", "true-order"), default="ladder", help="default ladder")
    p.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    args = p.parse_args()
    if args.calibration:
        return calibration(args.seeds or 24, args.jobs, args.json)
    if args.entrants < 8 or args.entrants % 4:
        p.error("--entrants must be a multiple of 4, at least 8 (tables of 4, everyone seated)")
    args.seeds = args.seeds or 48
    seeds = list(range(1, args.seeds + 1))
    runs: dict[str, list[tuple[int, int]]] = {}
    with ProcessPoolExecutor(args.jobs, initializer=_init) as pool:
        for method in (args.pairing, "uniform"):
            same = ([args.entrants] * len(seeds), [args.span] * len(seeds), [args.budget] * len(seeds),
                    [args.slots] * len(seeds))  # fmt: skip
            runs[method] = list(pool.map(one, [method] * len(seeds), seeds, *same))
    pairing, uniform = [r[0] for r in runs[args.pairing]], [r[0] for r in runs["uniform"]]
    out = {
        "pairing": args.pairing,
        "games_to_tau90": statistics.mean(pairing),
        "games_to_tau90_uniform": statistics.mean(uniform),
        "ratio": round(statistics.mean(pairing) / statistics.mean(uniform), 3),
        "ratio_90": bench.ratio_interval(pairing, uniform),
        "first_tau90": statistics.mean(r[1] for r in runs[args.pairing]),
        "first_tau90_uniform": statistics.mean(r[1] for r in runs["uniform"]),
        "seeds": args.seeds, "entrants": args.entrants, "span": args.span, "budget": args.budget, "slots": args.slots,
    }  # fmt: skip
    bench.report(out, args.json)
    return 0


def calibration(seeds: int, jobs: int, as_json: bool) -> int:
    sizes, fields = (16, 32, 64), rating_calibration.FIELDS
    cells = [(field, n, seed) for field in fields for n in sizes for seed in range(1, seeds + 1)]
    with ProcessPoolExecutor(jobs, initializer=configure, initargs=("warning",)) as pool:
        outs = list(pool.map(rating_calibration.one, *zip(*cells, strict=True)))
    runs = [(field, n, out) for (field, n, _), out in zip(cells, outs, strict=True)]
    out = {"calibration": rating_calibration.summary(runs), "seeds": seeds}
    bench.report(out, as_json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
