"""Validate the duel's test by simulation (docs/duel.md, "Validation"): real in-process games of the built-in
policies (no records, no gRPC), then duels bootstrapped from their pairs.

    python3 scripts/duel_sim.py [--pool-pairs 300] [--duels 500] [--seed 1] [--json]
                                [--save-pools FILE | --load-pools FILE] [--aa N] [--ab N] [--pairs N]

**Pools.** Real pairs are played, as `abluxx duel` plays them (default measure for the table size), for:
- symmetric data: random against itself, at 2 and 4 players; and the noisy greedy and counter
  (greedy+eps0.2, counter+eps0.2) against themselves at 2 players, bots whose games vary with their seed;
- skewed data: counter against greedy, at 2 and 4 players (its skew is printed).
An A/A pool is symmetrised (each difference and its negative: the two bots are exchangeable, so the law of the
difference is symmetric with mean 0).

**Bootstrapped duels.** For each pool, ``--duels`` duels draw their pairs at random from it, shifted to mean 0
(A/A: the H1 rate must be alpha) and to mean M (A/B: the H0 rate must be beta); a skewed pool is tried as it is
and mirrored (negated), so both signs of skew meet both hypotheses. Each rate is printed with its 95%
Clopper-Pearson interval and whether that interval holds the documented rate, and with its simultaneous interval
over the whole table's 16 rates (Bonferroni: ``ci_family``, ``contains_family``), beside the plain GSPRT's (the
normal approximation with Wald's bounds, the duel's test before issue 21); a summary line (``family``) counts the
intervals that hold and pools the rates. With --json the last line is one JSON object of every figure.

``--aa N`` / ``--ab N`` also play N real duels to the end (random against itself; counter against random and
against greedy), and ``--pairs N`` measures the variance pairing saves (counter against greedy): slower.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy import stats

from referee.duel.runner import default_measure
from referee.duel.simulate import bootstrap_duels, duels, pairing, play_pairs, settings_for
from referee.log import configure
from referee.stats import Sprt, Verdict

# (name, candidate, baseline, table size, share of --pool-pairs, A/A)
POOLS = [
    ("random-2p", "random", "random", 2, 1.0, True),
    ("greedy+eps0.2-2p", "greedy+eps0.2", "greedy+eps0.2", 2, 0.5, True),
    ("counter+eps0.2-2p", "counter+eps0.2", "counter+eps0.2", 2, 0.5, True),
    ("counter-greedy-2p", "counter", "greedy", 2, 1.0, False),
    ("random-4p", "random", "random", 4, 0.5, True),
    ("counter-greedy-4p", "counter", "greedy", 4, 0.5, False),
]


def play_pools(pool_pairs: int) -> dict[str, list[float]]:
    out = {}
    for name, cand, base, k, share, _ in POOLS:
        out[name] = asyncio.run(play_pairs(settings_for(cand, base, k), max(30, int(pool_pairs * share))))
    return out


def rate(outcomes: list, wrong: Verdict, documented: float) -> dict[str, object]:
    k, n = sum(o.verdict is wrong for o in outcomes), len(outcomes)
    ci = stats.binomtest(k, n).proportion_ci(0.95)
    games = [o.games for o in outcomes]
    return {"wrong": wrong.value, "count": k, "duels": n, "rate": k / n, "ci95": [ci.low, ci.high],
            "documented": documented, "contains": bool(ci.low <= documented <= ci.high),
            "inconclusive": sum(o.verdict is Verdict.INCONCLUSIVE for o in outcomes),
            "games_median": statistics.median(games)}  # fmt: skip


def checks() -> int:
    """How many rates the whole table has: A/A and A/B for each pool's shapes (a skewed pool also mirrored)."""
    return sum(2 if aa else 4 for *_, aa in POOLS)


def family(cells: list[dict[str, object]], m: int, level: float = 0.95) -> dict[str, object]:
    """Every rate's interval at the family's level (Bonferroni: each at 1 - (1 - level) / m for the m rates of the
    whole table, ``checks()``, also when ``--only`` runs some), added to its cell as ``ci_family`` and
    ``contains_family``; and the summary: how many of the rates' 95% intervals and how many of their simultaneous
    ones hold the documented rate, and, when every check documents the same rate, the rates pooled (all wrong
    verdicts over all duels) with its 95% interval.

    Sixteen 95% intervals of a test whose every rate is exactly right all hold it only 0.95**16 = 44% of the time;
    the simultaneous intervals all hold it at least 95% of the time, so "every interval holds the documented rate"
    is then a check that a right test passes."""
    for c in cells:
        ci = stats.binomtest(c["count"], c["duels"]).proportion_ci(1 - (1 - level) / m)  # type: ignore[arg-type]
        c["ci_family"] = [ci.low, ci.high]
        c["contains_family"] = bool(ci.low <= c["documented"] <= ci.high)  # type: ignore[operator]
    wrong, duels = sum(c["count"] for c in cells), sum(c["duels"] for c in cells)  # type: ignore[misc]
    same = duels > 0 and len({c["documented"] for c in cells}) == 1
    pooled = stats.binomtest(wrong, duels).proportion_ci(0.95) if same else None
    return {"rates": len(cells), "family_size": m, "level": level, "hold_95": sum(bool(c["contains"]) for c in cells),
            "hold_family": sum(bool(c["contains_family"]) for c in cells),
            "pooled_rate": wrong / duels if pooled else None,
            "pooled_ci95": [pooled.low, pooled.high] if pooled else None}  # fmt: skip


def plain_gsprt(test: Sprt) -> Sprt:
    """The normal-approximation GSPRT with Wald's bounds, as the duel ran it before issue 21: the comparison."""
    return dataclasses.replace(test, method="normal", overshoot=False)


def chosen(only: tuple[str, ...], *keys: str) -> bool:
    """Whether --only picks this check: no --only, or one of its entries a prefix of POOL/SHAPE/CHECK."""
    return not only or any("/".join(keys).startswith(o) for o in only)


def cells(
    pools: dict[str, list[float]], test: Sprt, count: int, seed: int, only: tuple[str, ...] = ()
) -> list[dict[str, object]]:
    """Every bootstrapped check: each pool (and a skewed one mirrored) at mean 0 and at mean M."""
    out = []
    for i, (name, _, _, k, _, aa) in enumerate(POOLS):
        pool = pools[name]
        shapes = (
            [("symmetric", [*pool, *(-d for d in pool)])]
            if aa
            else [("skewed", pool), ("skewed, mirrored", [-d for d in pool])]
        )
        for j, (shape, data) in enumerate(shapes):
            for mean, wrong, documented, check in (
                (0.0, Verdict.H1, test.alpha, "A/A"),
                (test.margin, Verdict.H0, test.beta, "A/B at M"),
            ):
                at = seed + 100 * i + 10 * j + (mean > 0)
                if not chosen(only, name, shape, check):
                    continue
                got = bootstrap_duels(data, mean, test, count, at)
                plain = bootstrap_duels(data, mean, plain_gsprt(test), count, at)
                out.append({"pool": name, "players": k, "measure": default_measure(k), "shape": shape,
                            "skew": float(stats.skew(data)), "sd": statistics.stdev(data), "pool_pairs": len(pool),
                            "check": check, **rate(got, wrong, documented),
                            "plain": rate(plain, wrong, documented)})  # fmt: skip
    return out


def clear_cut(
    pools: dict[str, list[float]], test: Sprt, count: int, seed: int, only: tuple[str, ...] = ()
) -> list[dict[str, object]]:
    """What the test costs where a verdict is easy: duels of each skewed pool (and its mirror) at its own mean,
    with the duel's test ("test") and the plain GSPRT ("plain"): the right verdict's rate and the games."""
    out = []
    for name, _, _, k, _, aa in POOLS:
        for shape, data in () if aa else (("skewed", pools[name]), ("skewed, mirrored", [-d for d in pools[name]])):
            if not chosen(only, name, shape, "clear-cut"):
                continue
            mean = statistics.fmean(data)
            right = Verdict.H1 if mean >= test.margin else Verdict.H0
            row: dict[str, object] = {"pool": name, "players": k, "shape": shape, "mean": mean, "right": right.value}
            for label, t in (("test", test), ("plain", plain_gsprt(test))):
                got = bootstrap_duels(data, mean, t, count, seed)
                games = [o.games for o in got]
                row[label] = {
                    "right": sum(o.verdict is right for o in got) / count,
                    "games_median": statistics.median(games),
                    "games_mean": statistics.fmean(games),
                }
            out.append(row)
    return out


def real_duels(args: argparse.Namespace, test: Sprt, out: dict[str, object]) -> None:
    if args.aa:
        aa = asyncio.run(duels(settings_for("random", "random", 2, test), args.aa))
        out["real_aa_random_2p"] = rate(aa, Verdict.H1, test.alpha)
        print(f"real A/A random vs random: {json.dumps(out['real_aa_random_2p'])}")
    for cand, base in (("counter", "random"), ("counter", "greedy")) if args.ab else ():
        ab = asyncio.run(duels(settings_for(cand, base, 2, test), args.ab))
        games = [o.games for o in ab]
        out[f"real_ab_{cand}_{base}_2p"] = {
            "duels": args.ab,
            "h1": sum(o.verdict is Verdict.H1 for o in ab),
            "games_median": statistics.median(games),
            "games_max": max(games),
        }
        print(f"real A/B {cand} vs {base}: {json.dumps(out[f'real_ab_{cand}_{base}_2p'])}")
    if args.pairs:
        r = asyncio.run(pairing(settings_for("counter", "greedy", 2, test), args.pairs))
        out["pairing"] = {"pairs": r.pairs, "mean": r.mean_paired, "sd_paired": r.sd_paired,
                          "sd_unpaired": r.sd_unpaired, "variance_ratio": r.ratio}  # fmt: skip
        print(f"pairing, counter vs greedy: variance ratio {r.ratio:.2f} over {r.pairs} pairs")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pool-pairs", type=int, default=300, help="real pairs in a full pool (default 300)")
    p.add_argument("--duels", type=int, default=500, help="bootstrapped duels per check (default 500)")
    p.add_argument("--seed", type=int, default=1, help="the bootstrap's seed (the games' deals are fresh)")
    p.add_argument("--margin", type=float, default=Sprt().margin)
    p.add_argument("--save-pools", type=Path, help="write the pools' differences to this JSON file")
    p.add_argument("--load-pools", type=Path, help="bootstrap from pools saved before, playing no game")
    p.add_argument("--aa", type=int, default=0, help="real A/A duels of random against itself (default 0)")
    p.add_argument("--ab", type=int, default=0, help="real A/B duels per match-up (default 0)")
    p.add_argument("--pairs", type=int, default=0, help="pairs for the pairing variance ratio (default 0)")
    p.add_argument("--only", action="append", default=[], metavar="POOL[/SHAPE[/CHECK]]",
                   help="only these checks (a prefix of e.g. counter-greedy-4p/skewed/A/A or .../clear-cut); "
                        "repeatable: run parts in parallel with --load-pools")  # fmt: skip
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    configure("error")
    test = Sprt(margin=args.margin)
    out: dict[str, object] = {"margin": args.margin, "alpha": test.alpha, "beta": test.beta}
    t0 = time.monotonic()
    pools = json.loads(args.load_pools.read_text()) if args.load_pools else play_pools(args.pool_pairs)
    if args.save_pools:
        args.save_pools.write_text(json.dumps(pools))
    out["pool_seconds"] = round(time.monotonic() - t0, 1)
    out["cells"] = cells(pools, test, args.duels, args.seed, tuple(args.only))
    for c in out["cells"]:  # type: ignore[attr-defined]
        low, high = c["ci95"]
        print(f"{c['pool']:<18} {c['shape']:<16} skew {c['skew']:+.2f} {c['check']:<8} {c['wrong']} "
              f"{c['rate']:.3f} [{low:.3f}, {high:.3f}] {'holds' if c['contains'] else 'misses'} "
              f"{c['documented']:g}; median {c['games_median']:.0f} games; plain GSPRT "
              f"{c['plain']['rate']:.3f}, median {c['plain']['games_median']:.0f} games")  # fmt: skip
    out["family"] = fam = family(out["cells"], checks())  # type: ignore[arg-type]
    if fam["rates"]:
        pooled = fam["pooled_ci95"]
        tail = f"; pooled rate {fam['pooled_rate']:.4f} [{pooled[0]:.4f}, {pooled[1]:.4f}]" if pooled else ""  # type: ignore[index]  # fmt: skip
        print(f"{fam['hold_95']} of {fam['rates']} rates' 95% intervals hold the documented rate, "
              f"{fam['hold_family']} of {fam['rates']} of their simultaneous intervals (family 95%, Bonferroni over "
              f"{fam['family_size']}){tail}")  # fmt: skip
    out["clear_cut"] = clear_cut(pools, test, args.duels, args.seed, tuple(args.only))
    for c in out["clear_cut"]:  # type: ignore[attr-defined]
        print(f"clear-cut {c['pool']} {c['shape']} at its mean {c['mean']:+.2f}: {c['right']} "
              f"{c['test']['right']:.3f} in median {c['test']['games_median']:.0f} games "
              f"(plain GSPRT {c['plain']['right']:.3f} in {c['plain']['games_median']:.0f})")  # fmt: skip
    real_duels(args, test, out)
    out["seconds"] = round(time.monotonic() - t0, 1)
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
