"""The calibration of the ratings on games drawn from TrueSkill's own model (docs/ratings.md, issue 43), for
``scripts/ladder_sim.py --calibration``: how often mu +- 1.96 sigma covers the true skill, and Kendall's tau
between the leaderboard (mu - 3 sigma) and the truth, for the whole-history fit (``referee.rating``) and for the
one-pass update the leaderboard used before (trueskill 0.4.5 with tau sigma/100), on the same games.

Fields of N entrants a seed, tables of 4 drawn uniformly at random, each seat performing its true skill plus
N(0, beta), neighbouring places tied within TrueSkill's draw margin (as the model says):

- ``prior``: true skills drawn from the prior N(25, (25/3)^2), the model's own (the fair test of coverage: a
  posterior is calibrated over skills drawn from its prior);
- ``graded``: ladder_sim's field, best 32 down to 32 - 27 (its mean 18.5 is not the prior's 25: no rating can
  know the field's level from games that only compare its entrants, so coverage there measures that too);
- ``centred``: the same evenly graded field of span 27 about the prior's mean, 38.5 down to 11.5 (as likely a
  level under the prior as any): the test of sigma on a graded field that the field's level does not decide.

Beside them, ``whole_history_relative``: the coverage of each true skill less the field's mean by mu less the
mean mu, +- 1.96 times that contrast's sd from the fit's covariance (its tau column is 0: not measured).
"""

from __future__ import annotations

import random

import numpy as np
import trueskill
from scipy.stats import kendalltau

from referee.rating import BETA, DRAW_PROBABILITY, MU, SIGMA, Rating, Ratings, draw_margin, rate

CHECKPOINTS = (50, 200, 1000)
FIELDS = ("prior", "graded", "centred")
SPAN = 27.0  # the graded fields' best less worst (ladder_sim's default)
Z95 = 1.959964


def truth(field: str, n: int, rng: random.Random) -> list[float]:
    if field == "prior":
        return [rng.gauss(MU, SIGMA) for _ in range(n)]
    top = MU + SPAN / 2 if field == "centred" else 32.0
    return [top - SPAN * i / (n - 1) for i in range(n)]


def games_of(skills: list[float], count: int, rng: random.Random) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
    """Random tables of 4 from TrueSkill's model, ties included: neighbouring performances within the draw margin
    share a place (a generator without ties made the fit's sigma look over-confident: a strict win then says
    more than the games were drawn to say)."""
    eps, out = draw_margin(), []
    for _ in range(count):
        seats = rng.sample(range(len(skills)), 4)
        perf = [skills[s] + rng.gauss(0, BETA) for s in seats]
        order = sorted(range(4), key=lambda i: -perf[i])
        places, place = [0] * 4, 1
        for j, i in enumerate(order):
            if j and perf[order[j - 1]] - perf[i] > eps:
                place = j + 1
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


def relative(ratings: Ratings, skills: list[float]) -> int:
    """Entrants whose mu less the field's mean mu, +- 1.96 times that contrast's sd (from the fit's covariance),
    covers the true skill less the field's mean skill: sigma's honesty about how entrants compare, which is all
    that games tell, whatever the field's level."""
    names = sorted(ratings.names())
    fit = ratings._fit  # the covariance of the last full fit, in rank order (scripts only)
    assert fit.cov is not None
    at = fit.cov_rank[[ratings._index[n] for n in names]]
    cov = fit.cov[np.ix_(at, at)]
    sd = np.sqrt(np.diag(cov) - 2 * cov.mean(axis=1) + cov.mean())
    mu = np.array([ratings.get(n).mu for n in names])
    truth = np.array(skills)
    return int(np.sum(np.abs((mu - mu.mean()) - (truth - truth.mean())) <= Z95 * sd))


def one(field: str, n: int, seed: int) -> dict[str, list[tuple[int, float]]]:
    """For each method, (covered, tau) at each checkpoint, one seed."""
    rng = random.Random(f"calibration-{field}-{n}-{seed}")
    skills = truth(field, n, rng)
    games = games_of(skills, CHECKPOINTS[-1], rng)
    names = [f"e{s:02d}" for s in range(n)]
    out: dict[str, list[tuple[int, float]]] = {"whole_history": [], "one_pass": [], "whole_history_relative": []}
    for g in CHECKPOINTS:
        fitted = rate(names, games[:g])
        out["whole_history"].append(score(fitted.all(), skills))
        out["whole_history_relative"].append((relative(fitted, skills), 0.0))
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
