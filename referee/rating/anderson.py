"""Anderson acceleration of the fit's sweeps (D. G. Anderson, J. ACM 1965; H. F. Walker and P. Ni, SIAM J. Numer.
Anal. 2011): from the last few sweeps' results and how far each moved its start, the point that a linear model of
the sweep says moves least. A field of groups that play only each other many times (a round robin at fixed
tables) converges by plain sweeps at a rate near 1 (each game's message is mostly the echo of its copies' in the
marginal, and only the prior pulls it to its end); mixing the last sweeps takes such a slow direction in one step
(docs/notes/2026-12-06-rating-fit-speed.md)."""

from __future__ import annotations

import numpy as np

from .ep import Floats

RIDGE, TINY = 1e-10, 1e-300
MEMORY = 5  # sweeps remembered: 3 to 10 took about as many sweeps; each one kept costs two copies of every message


class Anderson:
    """The differences of the last ``memory`` + 1 sweeps' results and of their residuals (result minus start);
    ``weights``: how much each coordinate's residual counts (the square root of the games a row of messages stands
    for, so that identical games in one row mix as they would one row each). Columns are overwritten in turn: a
    least-squares fit does not depend on their order."""

    def __init__(self, weights: Floats, memory: int = MEMORY) -> None:
        self.weights, self.memory = weights, memory
        self.results = np.empty((memory, len(weights)))  # differences of consecutive results, one a row
        self.residuals = np.empty((memory, len(weights)))  # of consecutive weighted residuals
        self.last: tuple[Floats, Floats] | None = None  # the last result and its weighted residual
        self.filled, self.column = 0, 0

    def propose(self, start: Floats, result: Floats) -> Floats:
        """The next start, after a sweep from ``start`` gave ``result``: the mix of the remembered results whose
        residuals, mixed alike, are least (least squares); the result itself after the first sweep."""
        residual = (result - start) * self.weights
        if self.last is not None:
            np.subtract(result, self.last[0], out=self.results[self.column])
            np.subtract(residual, self.last[1], out=self.residuals[self.column])
            self.column, self.filled = (self.column + 1) % self.memory, min(self.filled + 1, self.memory)
        self.last = result, residual
        if not self.filled:
            return result
        # least squares by its normal equations (memory x memory), kept solvable by a touch of ridge: near the end
        # the differences are nearly parallel, and a poor mix only costs a sweep (``fit`` checks every sweep)
        ours = self.residuals[: self.filled]
        gram = ours @ ours.T
        gram[np.diag_indices_from(gram)] += RIDGE * max(np.trace(gram), TINY)
        gamma = np.linalg.solve(gram, ours @ residual)
        return result - gamma @ self.results[: self.filled]

    def forget(self) -> None:
        """Starts again from the next sweep (a proposal was refused)."""
        self.last, self.filled, self.column = None, 0, 0
