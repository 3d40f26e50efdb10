"""Validate the duel's test by simulation (docs/duel.md, "Validation"): real in-process games of the built-in
policies, no records, no gRPC.

    python3 scripts/duel_sim.py [--aa 200] [--ab 20] [--pairs 400] [--table-size K] [--margin M] [--json]

Prints the A/A H1 rate (policy against itself) with alpha's binomial 99% band; the A/B verdicts and games used for
counter against random and counter against greedy; and the pairing variance ratio (paired against unpaired) for
counter against greedy. With --json the last line is one JSON object of all the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy import stats

from referee.duel.simulate import duels, pairing, settings_for
from referee.log import configure
from referee.stats import Sprt, Verdict


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--aa", type=int, default=200, help="A/A duels (default 200)")
    p.add_argument("--aa-policy", default="random", help="the policy the A/A duels play against itself")
    p.add_argument("--ab", type=int, default=20, help="duels for each A/B match-up (default 20)")
    p.add_argument("--pairs", type=int, default=400, help="pairs for the variance ratio (default 400)")
    p.add_argument("--table-size", type=int, default=2)
    p.add_argument("--margin", type=float, default=Sprt().margin)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    configure("error")
    test = Sprt(margin=args.margin)
    out: dict[str, object] = {"table_size": args.table_size, "margin": args.margin, "alpha": test.alpha,
                              "beta": test.beta}  # fmt: skip
    t0 = time.monotonic()
    if args.aa:
        aa = asyncio.run(duels(settings_for(args.aa_policy, args.aa_policy, args.table_size, test), args.aa))
        h1 = sum(o.verdict is Verdict.H1 for o in aa)
        low, high = (int(x) for x in stats.binom.interval(0.99, args.aa, test.alpha))
        games = [o.games for o in aa]
        print(f"A/A {args.aa_policy} vs {args.aa_policy}: {args.aa} duels, H1 {h1} ({h1 / args.aa:.3f}), alpha's "
              f"99% band {low}-{high}; H0 {sum(o.verdict is Verdict.H0 for o in aa)}, inconclusive "
              f"{sum(o.verdict is Verdict.INCONCLUSIVE for o in aa)}; games median {statistics.median(games):.0f}, "
              f"max {max(games)}")  # fmt: skip
        out["aa"] = {"duels": args.aa, "h1": h1, "band99": [low, high], "games_median": statistics.median(games),
                     "games_max": max(games)}  # fmt: skip
    for cand, base in (("counter", "random"), ("counter", "greedy")):
        if not args.ab:
            break
        ab = asyncio.run(duels(settings_for(cand, base, args.table_size, test), args.ab))
        games = [o.games for o in ab]
        h1 = sum(o.verdict is Verdict.H1 for o in ab)
        print(f"A/B {cand} vs {base}: {args.ab} duels, H1 {h1}; games median {statistics.median(games):.0f}, "
              f"max {max(games)}")  # fmt: skip
        out[f"ab_{cand}_{base}"] = {"duels": args.ab, "h1": h1, "games_median": statistics.median(games),
                                    "games_max": max(games)}  # fmt: skip
    if args.pairs:
        r = asyncio.run(pairing(settings_for("counter", "greedy", args.table_size, test), args.pairs))
        print(f"pairing, counter vs greedy over {r.pairs} pairs: mean {r.mean_paired:+.2f}, sd paired "
              f"{r.sd_paired:.2f}, unpaired {r.sd_unpaired:.2f}: variance ratio {r.ratio:.1f} (an unpaired test "
              f"needs about {r.ratio:.1f}x the games)")  # fmt: skip
        out["pairing"] = {"pairs": r.pairs, "mean": r.mean_paired, "sd_paired": r.sd_paired,
                          "sd_unpaired": r.sd_unpaired, "variance_ratio": r.ratio}  # fmt: skip
    out["seconds"] = round(time.monotonic() - t0, 1)
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
