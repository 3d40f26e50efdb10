"""Ratings as they stood after each game: the report's plot (``rating_history``) and the site's live one
(``History``, thinned to a few hundred points an entrant)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from referee.rating import Ratings
from referee.store import GameRow


def rating_history(names: list[str], games: list[GameRow]) -> tuple[Ratings, dict[str, list[tuple[int, float]]]]:
    """The ratings fitted to ``games`` (converged), and for each entrant its conservative rating (mu - 3 sigma)
    before its first game and after each of its games as they stood then (games taken in schedule order, each
    folded in by a local update, the fit converged now and then): ``[(0, start), (1, after one game), ...]``."""
    ratings = Ratings(names)
    history = {n: [(0, ratings.get(n).conservative)] for n in names}
    for g in games:
        ratings.add(g.names, g.places)
        for n in g.names:
            history[n].append((len(history[n]), ratings.get(n).conservative))
    ratings.fit()
    return ratings, history


class History:
    """Each entrant's conservative rating (mu - 3 sigma) before its first game and after its games, as
    ``[(games played, rating), ...]``, kept to at most ``points`` points per entrant: when a list fills, every other
    point goes and the step between points doubles, so a plot of a 100,000-game tournament costs a few hundred
    points per entrant (the last point is always the current rating)."""

    def __init__(
        self, ratings: Ratings, names: Iterable[str], points: int = 256, played: Mapping[str, int] | None = None
    ) -> None:
        """``played``: the games each entrant has played already (ratings kept from before), where its line starts."""
        self.points = points
        self.step: dict[str, int] = {}
        self.lines: dict[str, list[tuple[int, float]]] = {}
        self.played: dict[str, int] = {}
        for n in names:
            k = (played or {}).get(n, 0)
            self.step[n], self.played[n], self.lines[n] = 1, k, [(k, ratings.get(n).conservative)]

    def add(self, names: Iterable[str], ratings: Ratings) -> None:
        """The ratings after one more game of ``names``."""
        for n in names:
            if n not in self.lines:  # an entrant that joined after the start (a ladder's)
                self.step[n], self.played[n], self.lines[n] = 1, 0, [(0, ratings.get(n).conservative)]
            k = self.played[n] = self.played[n] + 1
            line = self.lines[n]
            if line[-1][0] % self.step[n]:
                line.pop()  # the last point was only the current rating, off the step
            line.append((k, ratings.get(n).conservative))
            if len(line) > self.points:
                self.step[n] *= 2
                line[:] = [p for p in line if p[0] % self.step[n] == 0 or p is line[-1]]
