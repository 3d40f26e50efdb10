"""TrueSkill ratings from game placings (R15), applied in schedule order.

Ratings are derived data: the same results in the same (schedule) order give bit-identical ratings, whatever
order the games finished in. Ties share a rank; the match runner already places retired seats last.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import trueskill

# trueskill 0.4.5 with draw_probability=0 silently raises sigma on a tie; ties happen (R15), so keep it above 0.
DRAW_PROBABILITY = 0.05
MU = 25.0
SIGMA = MU / 3


def environment() -> trueskill.TrueSkill:
    """The one explicit environment every rating is computed in (never trueskill's global one)."""
    return trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=SIGMA / 2, tau=SIGMA / 100, draw_probability=DRAW_PROBABILITY)


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """mu - 3 sigma: the leaderboard's order."""
        return self.mu - 3 * self.sigma


class Ratings:
    """Ratings of a field of entrants, updated one game at a time (call ``add`` in schedule order)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.env = environment()
        self._r = {n: self.env.create_rating() for n in names}
        self.games = 0

    def add(self, seats: tuple[str, ...], places: tuple[int, ...]) -> None:
        """One game: entrant names by seat and their places (1 is best; equal places are a tie)."""
        if len(seats) != len(places) or len(seats) < 2:
            raise ValueError(f"a game needs 2 or more seats with one place each, got {seats} and {places}")
        groups = [(self._r[n],) for n in seats]
        rated = self.env.rate(groups, ranks=[p - 1 for p in places])
        for name, (r,) in zip(seats, rated, strict=True):
            self._r[name] = r
        self.games += 1

    def join(self, name: str) -> None:
        """A new entrant, at the starting rating (a ladder's entrants arrive as it goes; nothing if known)."""
        if name not in self._r:
            self._r[name] = self.env.create_rating()

    def copy(self) -> Ratings:
        """An independent copy (trueskill's ratings are immutable, so sharing them is safe)."""
        other = Ratings(())
        other.env, other._r, other.games = self.env, dict(self._r), self.games
        return other

    def get(self, name: str) -> Rating:
        r = self._r[name]
        return Rating(r.mu, r.sigma)

    def all(self) -> dict[str, Rating]:
        return {n: self.get(n) for n in self._r}

    def leaderboard(self) -> list[tuple[str, Rating]]:
        """Best first, by mu - 3 sigma (then by name, so equal ratings list in a stable order)."""
        return sorted(self.all().items(), key=lambda x: (-x[1].conservative, x[0]))


def rate(names: Iterable[str], games: Iterable[tuple[tuple[str, ...], tuple[int, ...]]]) -> Ratings:
    """Ratings after ``games`` (seats, places), applied in the order given: pass them in schedule order."""
    ratings = Ratings(names)
    for seats, places in games:
        ratings.add(seats, places)
    return ratings
