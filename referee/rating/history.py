"""A whole history of games and its EP fit (``ep.py``): the games by table size, each game's messages, and every
entrant's marginal. ``fit`` runs sweeps over every game from nothing until no rating moves; ``settle`` updates
only the games added since, from the current marginals (a few local passes: what a live leaderboard pays per
finished game)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from threadpoolctl import threadpool_limits

from .anderson import Anderson
from .ep import Floats, game_messages, skill_precisions

# the share of a game's new message taken in a full sweep (the rest is its old one): every game is updated from the
# same marginals at once, so undamped they would all push the same way; 0.6 converged in the fewest sweeps of
# 0.3-0.8 on 2,000 games of 50 entrants and 300 of 32 (docs/notes/2026-12-06-ratings.md)
DAMPING = 0.6
TOLERANCE = 1e-5  # a fit has converged when no mu or sigma moved more than this in a sweep
MAX_SWEEPS = 300
LOCAL_PASSES = 3  # passes over just the games added since the last read
# a full fit takes each sigma from the sites taken jointly (``joint_sigma``: an inverse of entrants x entrants, about
# a second at 2,000); above this many entrants, sigma stays the product of one message per skill, which is
# over-confident (docs/notes/2026-12-06-ratings.md)
MAX_JOINT = 2500
# a full fit keeps identical games (the same entrants in the same places, the same ties) as one row with a count:
# each row's message is one game's, and the marginals hold it count times. Every game is updated from the same
# marginals at once and starts from an empty message, so identical games have the same message at every sweep:
# one row computes what its count of games would, at the cost of one (a round robin at fixed tables: 100,000
# games in 6,000 rows; docs/notes/2026-12-06-rating-fit-speed.md). False: a row per game (tests compare the two).
MERGE = True


@dataclass
class _Size:
    """Every game of one table size: seats in place order, ties between neighbours, messages to the skills."""

    n: int
    players: NDArray[np.int64] = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    ties: NDArray[np.bool_] = field(default_factory=lambda: np.zeros((0, 0), bool))
    pi: Floats = field(default_factory=lambda: np.zeros((0, 0)))
    tau: Floats = field(default_factory=lambda: np.zeros((0, 0)))
    count: Floats = field(default_factory=lambda: np.zeros(0))  # the identical games each row stands for
    new: list[tuple[list[int], list[bool]]] = field(default_factory=list)

    def take_new(self) -> NDArray[np.int64]:
        """Moves the games added since into the arrays (with empty messages); returns their rows."""
        start = len(self.players)
        if self.new:
            p = np.array([x for x, _ in self.new], np.int64).reshape(-1, self.n)
            t = np.array([x for _, x in self.new], bool).reshape(-1, self.n - 1)
            self.players = np.vstack([self.players.reshape(-1, self.n), p])
            self.ties = np.vstack([self.ties.reshape(-1, self.n - 1), t])
            self.pi = np.vstack([self.pi.reshape(-1, self.n), np.zeros(p.shape)])
            self.tau = np.vstack([self.tau.reshape(-1, self.n), np.zeros(p.shape)])
            self.count = np.concatenate([self.count, np.ones(len(p))])
            self.new = []
        return np.arange(start, len(self.players))

    def restart(self, rank: NDArray[np.int64]) -> None:
        """Every game with empty messages, in an order of their seats' ranks and ties alone, so that the order
        games came in (and the numbers entrants got) cannot change a bit of a fit; identical games (the same
        entrants in the same places with the same ties) in one row that counts them."""
        self.take_new()
        if not len(self.players):
            return
        key = np.hstack([rank[self.players], self.ties])
        canonical = np.lexsort(key.T[::-1])
        key, players, ties, count = key[canonical], self.players[canonical], self.ties[canonical], self.count[canonical]
        if MERGE:
            first = np.flatnonzero(np.concatenate([[True], (key[1:] != key[:-1]).any(axis=1)]))
            players, ties, count = players[first], ties[first], np.add.reduceat(count, first)
        self.players, self.ties, self.count = players, ties, count
        self.pi, self.tau = np.zeros(self.players.shape), np.zeros(self.players.shape)

    def copy(self) -> _Size:
        other = _Size(self.n, self.players.copy(), self.ties.copy(), self.pi.copy(), self.tau.copy())
        other.count, other.new = self.count.copy(), list(self.new)
        return other


class Fit:
    """Marginals (natural parameters) of every entrant and the games' messages that make them."""

    def __init__(self, prior_pi: float, prior_tau: float, beta2: float, eps: float) -> None:
        self.prior = (prior_pi, prior_tau)
        self.beta2, self.eps = beta2, eps
        self.pi, self.tau = np.zeros(0), np.zeros(0)
        self.widen = np.zeros(0)  # joint sigma over the per-skill one, at the last full fit (1 for newcomers since)
        self.sizes: dict[int, _Size] = {}
        # the skills' covariance at the last full fit (rank order) and each entrant's row in it: how far apart two
        # entrants are known to be, which their sigmas (the field's common level in each) overstate
        self.cov: Floats | None = None
        self.cov_rank: NDArray[np.int64] = np.zeros(0, np.int64)

    def grow(self, entrants: int) -> None:
        """Room for ``entrants`` (new ones at the prior)."""
        extra = entrants - len(self.pi)
        if extra > 0:
            self.pi = np.concatenate([self.pi, np.full(extra, self.prior[0])])
            self.tau = np.concatenate([self.tau, np.full(extra, self.prior[1])])
            self.widen = np.concatenate([self.widen, np.ones(extra)])

    def add(self, players: list[int], ties: list[bool]) -> None:
        n = len(players)
        if n not in self.sizes:
            self.sizes[n] = _Size(n)
        self.sizes[n].new.append((players, ties))

    def copy(self) -> Fit:
        other = Fit(*self.prior, self.beta2, self.eps)
        other.pi, other.tau, other.widen = self.pi.copy(), self.tau.copy(), self.widen.copy()
        other.cov, other.cov_rank = self.cov, self.cov_rank  # never changed in place: a full fit makes a new one
        other.sizes = {n: s.copy() for n, s in self.sizes.items()}
        return other

    def update(self, size: _Size, rows: NDArray[np.int64], damping: float) -> None:
        """New messages for ``rows`` of one size from the current marginals; the marginals follow."""
        if not len(rows):
            return
        seats, old_pi, old_tau = size.players[rows], size.pi[rows], size.tau[rows]
        cav_pi, cav_tau = self.pi[seats] - old_pi, self.tau[seats] - old_tau
        new_pi, new_tau, _ = game_messages(cav_tau / cav_pi, 1.0 / cav_pi, size.ties[rows], self.beta2, self.eps)
        new_pi = damping * new_pi + (1 - damping) * old_pi
        new_tau = damping * new_tau + (1 - damping) * old_tau
        flat, m, count = seats.ravel(), len(self.pi), size.count[rows, None]
        self.pi += np.bincount(flat, (count * (new_pi - old_pi)).ravel(), minlength=m)
        self.tau += np.bincount(flat, (count * (new_tau - old_tau)).ravel(), minlength=m)
        size.pi[rows], size.tau[rows] = new_pi, new_tau

    def settle(self) -> int:
        """Folds in the games added since, by a few passes over them alone; returns how many there were."""
        fresh = [(s, s.take_new()) for s in self.sizes.values()]
        for _ in range(LOCAL_PASSES):
            for size, rows in fresh:
                self.update(size, rows, 1.0)
        return sum(len(rows) for _, rows in fresh)

    def sweep(self) -> None:
        """One damped pass over every game, each table size at once."""
        for size in self.sizes.values():
            self.update(size, np.arange(len(size.players)), DAMPING)

    def fit(self, rank: NDArray[np.int64]) -> int:
        """Sweeps to convergence from nothing; returns the sweeps run. ``rank``: each entrant's place in an order
        that does not depend on when it joined (its name's), so that the fit is a function of the games alone."""
        with threadpool_limits(1, user_api="blas"):  # small products and one inverse: BLAS's threads only wait
            return self._fit(rank)

    def _fit(self, rank: NDArray[np.int64]) -> int:
        self.pi, self.tau = np.full(len(self.pi), self.prior[0]), np.full(len(self.pi), self.prior[1])
        self.sizes = dict(sorted(self.sizes.items()))  # sizes are swept one after the other: not in the games' order
        for size in self.sizes.values():
            size.restart(rank)
        groups, by_rank = self.groups(), np.argsort(rank)
        rows = [np.repeat(np.sqrt(s.count), s.n) for s in self.sizes.values()]
        weights = np.concatenate([np.zeros(0), *(w for row in rows for w in (row, row))])  # as ``messages``
        sweeps, accelerate = MAX_SWEEPS, Anderson(weights)
        for sweep in range(1, MAX_SWEEPS + 1):
            mu, sigma, start = self.tau / self.pi, self.pi**-0.5, self.messages()
            self.sweep()
            self.recentre(groups, by_rank)
            moved = np.abs(self.tau / self.pi - mu).max(initial=0.0)
            if max(moved, np.abs(sigma - self.pi**-0.5).max(initial=0.0)) < TOLERANCE:
                sweeps = sweep
                break
            if not self.set_messages(accelerate.propose(start, self.messages())):
                accelerate.forget()
        if len(self.pi) <= MAX_JOINT:
            self.widen = self.joint_sigma(rank) * np.sqrt(self.pi)
        return sweeps

    def messages(self) -> Floats:
        """Every game's messages as one vector: precisions then precision-adjusted means, size by size."""
        return np.concatenate([np.zeros(0), *(x.ravel() for s in self.sizes.values() for x in (s.pi, s.tau))])

    def set_messages(self, messages: Floats) -> bool:
        """Every game's messages from one vector (``messages``), and the marginals they make; refused (False, and
        nothing changed) if a precision is not above 0."""
        parts, at = [], 0
        for s in self.sizes.values():
            k, shape = s.pi.size, s.pi.shape
            parts.append((s, messages[at : at + k].reshape(shape), messages[at + k : at + 2 * k].reshape(shape)))
            at += 2 * k
        if not all((pi > 0).all() for _, pi, _ in parts):
            return False
        m = len(self.pi)
        self.pi, self.tau = np.full(m, self.prior[0]), np.full(m, self.prior[1])
        for s, pi, tau in parts:
            s.pi, s.tau, flat = pi, tau, s.players.ravel()
            self.pi += np.bincount(flat, (s.count[:, None] * pi).ravel(), minlength=m)
            self.tau += np.bincount(flat, (s.count[:, None] * tau).ravel(), minlength=m)
        return True

    def groups(self) -> NDArray[np.int64]:
        """Each entrant's group: entrants linked by games, directly or through others."""
        m = len(self.pi)
        pairs = [s.players[:, [0, k]] for s in self.sizes.values() for k in range(1, s.n) if len(s.players)]
        edges = np.vstack(pairs) if pairs else np.zeros((0, 2), np.int64)
        graph = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(m, m))
        return np.asarray(connected_components(graph, directed=False)[1], np.int64)

    def recentre(self, groups: NDArray[np.int64], by_rank: NDArray[np.int64]) -> None:
        """Moves each group's mu together so that their mean is the prior's. Games see only differences and the
        prior is the same for all, so the exact posterior keeps each group's mean at the prior's mean; a sweep moves
        that common level only by the prior's small pull, far too slowly to converge on its own. The shift goes
        into the groups' messages, in proportion to what each entrant's messages hold. (Sums in rank order.)"""
        mu = self.tau / self.pi
        counts = np.bincount(groups)
        sums = np.bincount(groups[by_rank], mu[by_rank], minlength=len(counts))
        shift = (self.prior[1] / self.prior[0]) - sums / np.maximum(counts, 1)
        held = self.pi - self.prior[0]
        scale = np.where(held > 0, shift[groups] * self.pi / np.where(held > 0, held, 1.0), 0.0)
        for size in self.sizes.values():
            if len(size.players):
                size.tau += scale[size.players] * size.pi
        self.tau += np.where(held > 0, shift[groups] * self.pi, 0.0)

    def mu_sigma(self) -> tuple[Floats, Floats]:
        return self.tau / self.pi, self.widen / np.sqrt(self.pi)

    def joint_sigma(self, rank: NDArray[np.int64]) -> Floats:
        """Each entrant's sigma from the fit's sites taken jointly (the inverse of the precision matrix they sum
        to with the prior), which keeps how uncertain the field's common level is. (The matrix in rank order.)"""
        m = len(self.pi)
        precision = np.eye(m) * self.prior[0]
        for size in self.sizes.values():
            if len(size.players):
                seats = size.players
                cav_pi, cav_tau = self.pi[seats] - size.pi, self.tau[seats] - size.tau
                _, _, sites = game_messages(cav_tau / cav_pi, 1.0 / cav_pi, size.ties, self.beta2, self.eps)
                at = rank[seats]
                blocks = skill_precisions(sites, self.beta2) * size.count[:, None, None]
                np.add.at(precision, (at[:, :, None], at[:, None, :]), blocks)
        cov = np.asarray(np.linalg.inv(precision), dtype=np.float64)
        self.cov, self.cov_rank = cov, rank.copy()
        return np.sqrt(np.diag(cov))[rank]

    def difference_sd(self, i: int, j: int) -> float | None:
        """The standard deviation of skill i minus skill j at the last full fit; None without one for both."""
        if self.cov is None or max(i, j) >= len(self.cov_rank):
            return None
        a, b = self.cov_rank[i], self.cov_rank[j]
        return float(np.sqrt(max(0.0, self.cov[a, a] + self.cov[b, b] - 2 * self.cov[a, b])))
