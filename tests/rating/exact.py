"""The exact posterior of TrueSkill's model by numerical integration on a grid: an independent computation of
what the EP fit approximates, for 2 or 3 entrants and a few games."""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from referee.rating import BETA, MU, SIGMA, draw_margin

NODES, WEIGHTS = np.polynomial.hermite_e.hermegauss(40)  # E[f(x)], x ~ N(0, 1): sum(w f(x)) / sqrt(2 pi)
WEIGHTS = WEIGHTS / np.sqrt(2 * np.pi)


def _pair(d: np.ndarray, tie: bool, spread: float, eps: float) -> np.ndarray:
    """P(the better place's performance minus the other's, given skills d apart, says what was seen)."""
    if tie:
        return ndtr((eps - d) / spread) - ndtr((-eps - d) / spread)
    return ndtr((d - eps) / spread)


def likelihood(skills: list[np.ndarray], places: tuple[int, ...]) -> np.ndarray:
    """P(places | skills) for a game of 2 or 3 seats (skills by seat, on a grid), ties by the draw margin."""
    eps = draw_margin()
    order = sorted(range(len(places)), key=lambda i: places[i])
    s = [skills[i] for i in order]
    ties = [places[order[k]] == places[order[k + 1]] for k in range(len(order) - 1)]
    if len(s) == 2:
        return _pair(s[0] - s[1], ties[0], np.sqrt(2) * BETA, eps)
    out = np.zeros(np.broadcast(*s).shape)
    for x, w in zip(NODES, WEIGHTS, strict=True):  # the middle place's performance, integrated out
        middle = s[1] + BETA * x
        out += w * _pair(s[0] - middle, ties[0], BETA, eps) * _pair(middle - s[2], ties[1], BETA, eps)
    return out


def posterior(
    players: int, games: list[tuple[tuple[int, ...], tuple[int, ...]]], points: int = 161
) -> list[tuple[float, float]]:
    """(mean, sd) of each entrant's skill under the prior N(MU, SIGMA^2) and ``games`` (seats as entrant numbers)."""
    axis = np.linspace(MU - 6 * SIGMA, MU + 6 * SIGMA, points)
    grids = np.meshgrid(*[axis] * players, indexing="ij", sparse=True)
    density = np.ones([points] * players)
    for g in grids:
        density = density * np.exp(-0.5 * ((g - MU) / SIGMA) ** 2)
    for seats, places in games:
        density = density * likelihood([grids[i] for i in seats], places)
    density /= density.sum()
    out = []
    for i in range(players):
        marginal = density.sum(axis=tuple(k for k in range(players) if k != i))
        mean = float((marginal * axis).sum())
        out.append((mean, float(np.sqrt((marginal * (axis - mean) ** 2).sum()))))
    return out
