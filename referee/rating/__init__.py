"""Ratings from game placings (R15): TrueSkill's model fitted to a whole history of games at once.

TrueSkill's model is kept (Gaussian performances, beta, the draw margin, the prior mu and sigma, a free-for-all of
2 to 5 places with ties), but instead of updating one game at a time and never going back, expectation propagation
runs over every game until it converges (TrueSkill Through Time, Dangauthier et al. 2007, with each entrant one
fixed skill: no dynamics). The fit does not depend on the order of the games (docs/ratings.md).

``Ratings`` fits lazily: ``add`` only records a game; a read folds the games added since into the fit by a few
local passes, and sweeps over every game to convergence once the games added since the last full fit reach a
share of the history (``REFIT_SHARE``; None: never on a read, for a service that refits off its event loop).
``fit`` converges on demand.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import trueskill

from referee.metrics import RATING_FIT_SECONDS

from .history import Fit

# How often two equal players tie (TrueSkill's draw probability; its draw margin follows). Abluxxen's ties are rare:
# between copies of one built-in bot, none in 6,000 games of 2 and 0.5-1.9% of neighbouring places in 4,000 of 3
# (about 1% of pairs of 2 in the model's terms). A larger one reads every decisive result as won by more than the
# margin, so the fit over-states differences: with 0.05, two identical entrants were marked "separated" 6.2% of
# the time for 5% (docs/notes/2026-12-07-draw-probability.md). Above 0: ties happen (R15), and trueskill 0.4.5
# with 0 silently raises sigma on a tie.
DRAW_PROBABILITY = 0.01
# the draw probability of every rating before DRAW_PROBABILITY was 0.01: ladder choices stored without one were made
# from ratings of this one (``ladder_run.replay`` makes them again with it)
DRAW_PROBABILITY_BEFORE = 0.05
MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2
REFIT_SHARE = 0.05  # a read converges again once the games added since the last full fit reach this share


def environment() -> trueskill.TrueSkill:
    """TrueSkill's parameters as one explicit environment (never trueskill's global one): the one-pass update
    the simulations compare against, and beta and the draw margin of the fit. No dynamics (tau 0): a bot version
    does not drift."""
    return trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=BETA, tau=0.0, draw_probability=DRAW_PROBABILITY)


def draw_margin(draw_probability: float = DRAW_PROBABILITY) -> float:
    """TrueSkill's margin eps between two players' performances below which they tie."""
    return float(trueskill.calc_draw_margin(draw_probability, 2, environment()))


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """mu - 3 sigma: the leaderboard's order."""
        return self.mu - 3 * self.sigma


def order(seats: tuple[int, ...], places: tuple[int, ...]) -> tuple[list[int], list[bool]]:
    """Seats best place first, and for each neighbouring pair whether they tie."""
    if len(seats) != len(places) or not 2 <= len(seats) <= 5:
        raise ValueError(f"a game needs 2 to 5 seats with one place each, got {seats} and {places}")
    ranked = sorted(range(len(seats)), key=lambda i: places[i])
    ties = [places[a] == places[b] for a, b in itertools.pairwise(ranked)]
    return [seats[i] for i in ranked], ties


class Ratings:
    """Ratings of a field of entrants over every game added (in any order)."""

    def __init__(
        self, names: Iterable[str], refit_share: float | None = REFIT_SHARE, draw_probability: float = DRAW_PROBABILITY
    ) -> None:
        self.refit_share, self.draw_probability = refit_share, draw_probability
        self._index: dict[str, int] = {}
        self._fit = Fit(1 / SIGMA**2, MU / SIGMA**2, BETA**2, draw_margin(draw_probability))
        self.games = 0
        self._since_full = 0
        self._restored = False
        self._read: tuple[np.ndarray, np.ndarray] | None = None  # mu and sigma as last read (None: games since)
        for n in names:
            self.join(n)

    def add(self, seats: tuple[str, ...], places: tuple[int, ...]) -> None:
        """One game: entrant names by seat and their places (1 is best; equal places are a tie)."""
        if len(set(seats)) != len(seats):
            raise ValueError(f"an entrant cannot hold two seats of one game: {seats}")
        players, ties = order(tuple(self._index[n] for n in seats), places)
        self._fit.add(players, ties)
        self._read = None
        self.games += 1
        self._since_full += 1

    def join(self, name: str) -> None:
        """A new entrant, at the prior (a ladder's entrants arrive as it goes; nothing if known)."""
        if name not in self._index:
            self._index[name] = len(self._index)
            self._fit.grow(len(self._index))
            self._read = None

    def copy(self) -> Ratings:
        """An independent copy."""
        other = Ratings((), self.refit_share, self.draw_probability)
        other._index, other._fit = dict(self._index), self._fit.copy()
        other.games, other._since_full, other._restored = self.games, self._since_full, self._restored
        return other

    def fit(self) -> int:
        """Converges over every game now, from nothing (so the result depends on the games alone, not on what was
        read before); returns the sweeps it took."""
        if self._restored:
            raise RuntimeError("ratings restored from a store hold no games to fit again: rate the stored games")
        self._since_full, self._read = 0, None
        names = list(self._index)
        rank = np.empty(len(names), np.int64)
        rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
        with RATING_FIT_SECONDS.time():  # docs/operations.md
            return self._fit.fit(rank)

    @property
    def local(self) -> int:
        """Games folded in by local updates since the last full fit."""
        return self._since_full

    @property
    def converged(self) -> bool:
        """True when every game is in a full fit (no local update since)."""
        return not self._since_full

    def names(self) -> list[str]:
        return list(self._index)

    def _current(self) -> tuple[np.ndarray, np.ndarray]:
        """Every entrant's mu and sigma (read-only: shared by the reads until a game or an entrant is added)."""
        if self._read is None:
            share = self.refit_share
            if self._since_full and share is not None and self._since_full >= share * self.games:
                self.fit()
            else:
                self._fit.settle()
            self._read = self._fit.mu_sigma()
        return self._read

    def get(self, name: str) -> Rating:
        mu, sigma = self._current()
        i = self._index[name]
        return Rating(float(mu[i]), float(sigma[i]))

    def all(self) -> dict[str, Rating]:
        mu, sigma = self._current()
        return {n: Rating(float(mu[i]), float(sigma[i])) for n, i in self._index.items()}

    def difference_sd(self, a: str, b: str) -> float:
        """How uncertain the difference of ``a``'s and ``b``'s skills is: from the fit's covariance, which knows
        that a game compares entrants and says nothing of the field's common level; sqrt(sigma_a² + sigma_b²) where
        the fit kept none (over 2,500 entrants, ratings restored from a store, entrants new since the last full
        fit), which overstates it."""
        found = self._fit.difference_sd(self._index[a], self._index[b])
        if found is not None:
            return found
        sigma = self._current()[1]
        return math.hypot(sigma[self._index[a]], sigma[self._index[b]])

    def leaderboard(self) -> list[tuple[str, Rating]]:
        """Best first, by mu - 3 sigma (then by name, so equal ratings list in a stable order)."""
        return sorted(self.all().items(), key=lambda x: (-x[1].conservative, x[0]))


def state(ratings: Ratings, names: Iterable[str] | None = None) -> dict[str, tuple[float, float, float]]:
    """Each entrant's marginal (of ``names``, default all) as natural parameters (1 / sigma^2, mu / sigma^2 of the
    per-skill marginal) and the factor its sigma is widened by (the fit's sites taken jointly): what a store keeps
    of a fit."""
    ratings._current()
    fit, index = ratings._fit, ratings._index
    return {n: (float(fit.pi[index[n]]), float(fit.tau[index[n]]), float(fit.widen[index[n]])) for n in names or index}


def restored(marginals: dict[str, tuple[float, float, float]], games: int) -> Ratings:
    """Ratings from a stored fit (``state``) of ``games`` games: games added later fold in by local updates; a full
    fit needs every game again (``rate``), so these never refit on a read."""
    ratings = Ratings(marginals, refit_share=None)
    fit = ratings._fit
    for n, (pi, tau, widen) in marginals.items():
        i = ratings._index[n]
        fit.pi[i], fit.tau[i], fit.widen[i] = pi, tau, widen
    ratings.games, ratings._restored, ratings._read = games, True, None
    return ratings


def rate(names: Iterable[str], games: Iterable[tuple[tuple[str, ...], tuple[int, ...]]]) -> Ratings:
    """Ratings fitted to ``games`` (seats, places), in any order."""
    ratings = Ratings(names)
    for seats, places in games:
        ratings.add(seats, places)
    ratings.fit()
    return ratings
