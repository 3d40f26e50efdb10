"""The calibration of the ratings on games drawn from TrueSkill's own model (docs/ratings.md, issue 43), for
``scripts/ladder_sim.py --calibration``: how often mu +- 1.96 sigma covers the true skill, and Kendall's tau
between the leaderboard (mu - 3 sigma) and the truth, for the whole-history fit (``referee.rating``) and for the
one-pass update the leaderboard used before (trueskill 0.4.5 with tau sigma/100), on the same games.

Two fields of N entrants a seed, tables of 4 drawn uniformly at random, each seat performing its true skill plus
N(0, beta):

- ``prior``: true skills drawn from the prior N(25, (25/3)^2), the model's own (the fair test of coverage: a
  posterior is calibrated over skills drawn from its prior);
- ``graded``: ladder_sim's field, best 32 down to 32 - 27 (its mean 18.5 is not the prior's 25: no rating can
  know the field's level from games that only compare its entrants, so coverage there measures that too).
"""

from __future__ import annotations

import random

import numpy as np
import trueskill
from scipy.stats import kendalltau

from referee.rating import BETA, DRAW_PROBABILITY, MU, SIGMA, Rating, rate

CHECKPOINTS = (50, 200, 1000)
Z95 = 1.959964


def truth(field: str, n: int, rng: random.Random) -> list[float]:
    if field == "prior":
        return [rng.gauss(MU, SIGMA) for _ in range(n)]
    return [32.0 - 27.0 * i / (n - 1) for i in range(n)]


def games_of(skills: list[float], count: int, rng: random.Random) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
    out = []
    for _ in range(count):
        seats = rng.sample(range(len(skills)), 4)
        perf = [skills[s] + rng.gauss(0, BETA) for s in seats]
        order = sorted(range(4), key=lambda i: -perf[i])
        places = [0] * 4
        for place, i in enumerate(order, 1):
            places[i] = place
        out.append((tuple(f"e{s:02d}" for s in seats), tuple(places)))
    return out


def one_pass(names: list[str], games: list[tuple[tuple[str, ...], tuple[int, ...]]]) -> dict[str, Rating]:
    """The one-pass update as the leaderboard had it before issue 43 (dynamics tau sigma/100)."""
    env = trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=BETA, tau=SIGMA / 100, draw_probability=DRAW_PROBABILITY)
    r = {n: env.create_rating() for n in names}
    for seats, places in games:
        rated = env.rate([(r[n],) for n in seats], ranks=[p - 1 for p in places])
        for n, (x,) in zip(seats, rated, strict=True):
            r[n] = x
    return {n: Rating(x.mu, x.sigma) for n, x in r.items()}


def score(ratings: dict[str, Rating], skills: list[float]) -> tuple[int, float]:
    """(entrants whose mu +- 1.96 sigma covers the true skill, Kendall's tau of mu - 3 sigma to the truth)."""
    names = sorted(ratings)
    mu = np.array([ratings[n].mu for n in names])
    sigma = np.array([ratings[n].sigma for n in names])
    covered = int(np.sum(np.abs(mu - np.array(skills)) <= Z95 * sigma))
    return covered, float(kendalltau(mu - 3 * sigma, skills).statistic)


def one(field: str, n: int, seed: int) -> dict[str, list[tuple[int, float]]]:
    """For each method, (covered, tau) at each checkpoint, one seed."""
    rng = random.Random(f"calibration-{field}-{n}-{seed}")
    skills = truth(field, n, rng)
    games = games_of(skills, CHECKPOINTS[-1], rng)
    names = [f"e{s:02d}" for s in range(n)]
    out: dict[str, list[tuple[int, float]]] = {"whole_history": [], "one_pass": []}
    for g in CHECKPOINTS:
        out["whole_history"].append(score(rate(names, games[:g]).all(), skills))
        out["one_pass"].append(score(one_pass(names, games[:g]), skills))
    return out


def summary(runs: list[tuple[str, int, dict[str, list[tuple[int, float]]]]]) -> dict[str, object]:
    """Coverage and mean tau by field, entrants, games and method, over the seeds."""
    cells: dict[str, dict[str, list[float]]] = {}
    for field, n, out in runs:
        for method, at in out.items():
            for g, (covered, tau) in zip(CHECKPOINTS, at, strict=True):
                cell = cells.setdefault(f"{field} n={n} games={g} {method}", {"covered": [], "entrants": [], "tau": []})
                cell["covered"].append(covered)
                cell["entrants"].append(n)
                cell["tau"].append(tau)
    return {
        key: {"coverage": round(sum(c["covered"]) / sum(c["entrants"]), 3), "tau": round(float(np.mean(c["tau"])), 3)}
        for key, c in sorted(cells.items())
    }
