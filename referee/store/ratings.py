"""A leaderboard's rating fit kept in the store (docs/ratings.md), so that a restart shows standings without
fitting every game again.

``rating_fits`` holds each entrant's marginal (``referee.rating.state``: precision, precision times mu, and the
factor its sigma is widened by); ``rating_fit_marks`` says which of the tournament's games the fit covers, by
their count and the sums of their slots and squared slots. A fit whose mark is not the stored games' (a game
committed after the fit was last kept, or a void deal that took games out) is stale: the games are rated again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .sqlite import SqliteStore

State = dict[str, tuple[float, float, float]]
Mark = tuple[int, int, int]


@dataclass(frozen=True)
class Kept:
    state: State
    games: int


def mark_of(slots: Iterable[int]) -> Mark:
    """The mark of a fit of the games at ``slots``."""
    games = total = squares = 0
    for s in slots:
        games, total, squares = games + 1, total + s, squares + s * s
    return games, total, squares


def save(store: SqliteStore, tid: str, state: State, mark: Mark, whole: bool = True) -> None:
    """Keeps ``state`` as the fit of the games ``mark`` says, in one transaction: every entrant's rows when
    ``whole``, else only these entrants' rows change (the rest of the fit is as it was)."""
    with store._tx():
        if whole:
            store.db.execute("DELETE FROM rating_fits WHERE tournament_id = ?", (tid,))
        store.db.executemany(
            "INSERT OR REPLACE INTO rating_fits VALUES (?, ?, ?, ?, ?)",
            [(tid, name, pi, tau, widen) for name, (pi, tau, widen) in state.items()],
        )
        store.db.execute("INSERT OR REPLACE INTO rating_fit_marks VALUES (?, ?, ?, ?)", (tid, *mark))


def stored_mark(store: SqliteStore, tid: str) -> Mark:
    """The mark of ``tid``'s stored games (an aggregate over the games' index: no game is read)."""
    q = "SELECT COUNT(*), COALESCE(SUM(slot), 0), COALESCE(SUM(slot * slot), 0) FROM games WHERE tournament_id = ?"
    games, slots, squares = store.db.execute(q, (tid,)).fetchone()
    return games, slots, squares


def load(store: SqliteStore, tid: str) -> Kept | None:
    """The kept fit of ``tid`` if it covers exactly the stored games, else None."""
    q = "SELECT games, slots, squares FROM rating_fit_marks WHERE tournament_id = ?"
    kept = store.db.execute(q, (tid,)).fetchone()
    if kept is None or tuple(kept) != stored_mark(store, tid):
        return None
    q = "SELECT entrant, pi, tau, widen FROM rating_fits WHERE tournament_id = ?"
    return Kept({name: (pi, tau, widen) for name, pi, tau, widen in store.db.execute(q, (tid,))}, kept[0])
