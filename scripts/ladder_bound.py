#!/usr/bin/env python3
"""How far any pairing could bring ``ladder_vs_uniform`` down on a graded field (docs/tournaments.md, "Ladders").

    python3 scripts/ladder_bound.py [--entrants N] [--span S] [--table-size K] [--json]

The field: N entrants whose true mu are evenly spaced over S (TrueSkill's units, beta = 25/6), everyone seated
each round at tables of K. A game is taken as its K(K-1)/2 pairwise comparisons under TrueSkill's own model (a
pair's order is that of two performances, each the entrant's mu plus noise of spread beta), each carrying the
Fisher information phi(z)^2 / (Phi(z)(1 - Phi(z))) / (2 beta^2) about the pair's difference, z = d / (sqrt 2 beta).
Two pairings are compared by their expected information per round:

- ``blocks``: the ladder's rule with the ratings equal to the truth (the order cut into runs of K, the cut at each
  of the K offsets equally often): the most a partition can seat neighbours together;
- ``uniform``: uniformly random tables (the bench's baseline).

The games needed to pin an adjacent pair's order to a given precision scale with the variance of its estimated
difference, so the ratio of those variances is what ``ladder_vs_uniform`` would be, once the early rounds are
past, if the ladder knew the true order; pairing by estimates can only do worse. Two estimators are priced:

- ``diagonal_ratio``: one that keeps each entrant's own variance only, as TrueSkill does (var_i + var_j, each the
  inverse of the entrant's information): the leaderboard the bench measures;
- ``full_ratio``: one that keeps the covariances, a whole-history fit (the pseudo-inverse of the information).

Prints the mean over the adjacent pairs (and ``--json``: one JSON object on the last line).

``--tau``: instead, the games until Kendall's tau of the fit's mean to the true order is 0.9 (and 0.92) in
expectation, for random tables drawn from windows of W neighbours in the true order (W = K: contiguous blocks; W
= N: uniform). Adjacent pairs are not what tau counts: it counts every pair, and pairs a few places apart need
games that compare them too. The mean is the posterior's under TrueSkill's prior N(25, (25/3)^2): its mean is
A mu (A = (P)^-1 G J, with P the prior's precision plus G games' information J), compressed towards the prior
where the design says little (the field's long-range differences, under blocks), its sampling covariance
P^-1 G J P^-1; tau's expectation sums Phi(-|difference| / sd) over the pairs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random

import numpy as np
from scipy.stats import norm

from referee.rating import SIGMA, environment

BETA = environment().beta  # the leaderboard's: 25/6


def pair_information(mus: np.ndarray) -> np.ndarray:
    """[a, b]: the Fisher information about mu_a - mu_b from the order of the two entrants' performances."""
    z = (mus[:, None] - mus[None, :]) / (np.sqrt(2) * BETA)
    p = norm.cdf(z)
    return norm.pdf(z) ** 2 / (p * (1 - p)) / (2 * BETA**2)


def add_table(pairs: np.ndarray, table: list[int], info: np.ndarray, weight: float) -> None:
    for a, b in itertools.combinations(table, 2):
        w = weight * pairs[a, b]
        info[a, a] += w
        info[b, b] += w
        info[a, b] -= w
        info[b, a] -= w


def blocks_information(mus: np.ndarray, k: int) -> np.ndarray:
    n, pairs = len(mus), pair_information(mus)
    info = np.zeros((n, n))
    for cut in range(k):
        order = list(range(cut, n)) + list(range(cut))
        for i in range(0, n - n % k, k):
            add_table(pairs, order[i : i + k], info, 1 / k)
    return info


def uniform_information(mus: np.ndarray, k: int, samples: int, seed: int = 1) -> np.ndarray:
    n, pairs = len(mus), pair_information(mus)
    info = np.zeros((n, n))
    rng = random.Random(seed)
    for _ in range(samples):
        order = rng.sample(range(n), n)
        for i in range(0, n - n % k, k):
            add_table(pairs, order[i : i + k], info, 1 / samples)
    return info


def adjacent_variances(info: np.ndarray) -> tuple[float, float]:
    """The mean variance of adjacent differences: (each entrant's own variance only, with covariances)."""
    n = len(info)
    cov = np.linalg.pinv(info)
    diagonal = [1 / info[i, i] + 1 / info[i + 1, i + 1] for i in range(n - 1)]
    full = [cov[i, i] + cov[i + 1, i + 1] - 2 * cov[i, i + 1] for i in range(n - 1)]
    return float(np.mean(diagonal)), float(np.mean(full))


def bound(n: int, span: float, k: int, samples: int = 3000) -> dict[str, float]:
    mus = np.linspace(span, 0.0, n)
    b_diag, b_full = adjacent_variances(blocks_information(mus, k))
    u_diag, u_full = adjacent_variances(uniform_information(mus, k, samples))
    return {"entrants": n, "span": span, "table_size": k, "spacing_in_beta": round(span / (n - 1) / BETA, 3),
            "diagonal_ratio": round(b_diag / u_diag, 3), "full_ratio": round(b_full / u_full, 3)}  # fmt: skip


def window_information(mus: np.ndarray, k: int, w: int, samples: int = 400, seed: int = 2) -> np.ndarray:
    """One round's information when each of its N / K tables is K entrants drawn from W neighbours in the true
    order, the window placed uniformly at random (W = N: uniform tables)."""
    n, pairs = len(mus), pair_information(mus)
    info = np.zeros((n, n))
    rng = random.Random(seed)
    for _ in range(samples):
        for _table in range(n // k):
            start = rng.randrange(0, n - w + 1)
            add_table(pairs, rng.sample(range(start, start + w), k), info, 1 / samples)
    return info


def expected_tau(per_game: np.ndarray, mus: np.ndarray, games: int) -> float:
    """Kendall's tau of the posterior mean to the true order, in expectation, after ``games`` games."""
    n = len(mus)
    gj = games * per_game
    p_inv = np.linalg.inv(np.eye(n) / SIGMA**2 + gj)
    mean, cov = p_inv @ gj @ mus, p_inv @ gj @ p_inv
    right = np.sign((mus[:, None] - mus[None, :]) * (mean[:, None] - mean[None, :]))
    gap = np.abs(mean[:, None] - mean[None, :]) * right
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
    upper = np.triu_indices(n, 1)
    wrong = norm.cdf(-gap[upper] / np.sqrt(np.maximum(var[upper], 1e-12))).sum()
    return float(1 - 2 * wrong / len(upper[0]))


def games_to_tau(n: int, span: float, k: int, windows: list[int], target: float, most: int = 3000) -> dict[str, int]:
    """Games until tau's expectation reaches ``target`` for each window width (``most`` when it never does)."""
    mus = np.linspace(span, 0.0, n)
    out = {}
    for w in windows:
        per_game = window_information(mus, k, w) / (n // k)
        out[f"window_{w}"] = next((g for g in range(1, most) if expected_tau(per_game, mus, g) >= target), most)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--entrants", type=int, default=16, help="entrants (default 16, the bench's narrow field)")
    p.add_argument("--span", type=float, default=14.0, help="best mu less worst mu (default 14)")
    p.add_argument("--table-size", type=int, default=4, help="seats per table (default 4)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--tau", action="store_true", help="games to Kendall's tau 0.9 and 0.92 by window (above)")
    args = p.parse_args()
    n, k = args.entrants, args.table_size
    if n < 2 * k or args.span <= 0:
        p.error("needs at least two tables' entrants and a positive span")
    if args.tau:
        windows = sorted({w for w in (k, k + k // 2, 2 * k, 3 * k, 4 * k, n) if w <= n})
        out: dict = {"entrants": n, "span": args.span, "table_size": k}
        for target in (0.9, 0.92):
            found = games_to_tau(n, args.span, k, windows, target)
            best = min(found, key=lambda key: found[key])
            out[f"tau{target}"] = {**found, "best_vs_uniform": round(found[best] / found[f"window_{n}"], 3)}
    else:
        out = bound(n, args.span, k)
    for key, value in out.items():
        print(f"{key:>16}: {value}")
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
