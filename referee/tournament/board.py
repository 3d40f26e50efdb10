"""A tournament's standings as every surface shows them (the site, ``abluxx standings``, ``abluxx remote
standings`` and the API): the same rows and the same figures.

On top of the standings' numbers (``standings.Tally``) a board has: which rows it shows (a ladder's latest version
of each bot by default, every version on request); what the games played are compared with (the schedule, a
ladder's budget, or nothing for a ladder without one); each row's marks (a version ``superseded`` or ``retired``,
and its health, ``store/health.py``); and a head to head without the pairs that can never meet (two entrants of one
owner never share a table of a ladder or of a tournament with ``across`` seat orders).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from referee.store import SqliteStore, TournamentRow
from referee.store import health as health_store
from referee.store import ladder as ladder_store
from referee.store.ladder import LadderEntrant

from .pairs import PairRows
from .runner import entrant_names
from .standings import Standing, Standings, Tally


def planned(row: TournamentRow) -> int:
    """What a tournament's games played are compared with: its schedule; a ladder's budget (0 without one)."""
    ladder = row.config.get("ladder")
    return row.games if ladder is None else int(ladder.get("games") or 0)


def tally_of(store: SqliteStore, row: TournamentRow) -> Tally:
    """The standings' tally over every stored game of ``row``."""
    tally = Tally(row.id, entrant_names(store, row), planned(row))
    for g in store.games(row.id):
        tally.add(g)
    return tally


def shown(store: SqliteStore, row: TournamentRow, all_versions: bool) -> set[str] | None:
    """The rows a board shows: a ladder's latest version of each bot, or (``all_versions``, or not a ladder)
    everyone (None)."""
    if all_versions or "ladder" not in row.config:
        return None
    return ladder_store.latest_versions(ladder_store.entrants(store, row.id))


def _states(entrants: list[LadderEntrant]) -> dict[str, str]:
    """A ladder entrant no longer seated: ``superseded`` when its owner's bot has a later version, else
    ``retired``."""
    latest: dict[tuple[str, str], int] = {}
    for e in entrants:
        latest[(e.owner, e.bot)] = max(e.version, latest.get((e.owner, e.bot), 0))
    return {
        e.name: "superseded" if e.version < latest[(e.owner, e.bot)] else "retired"
        for e in entrants
        if e.left_round is not None
    }


def _owners(store: SqliteStore, row: TournamentRow) -> dict[str, str] | None:
    """Entrant -> owner where two of one owner never meet (a ladder, or ``across`` seat orders); else None."""
    if "ladder" in row.config:
        return {e.name: e.owner for e in ladder_store.entrants(store, row.id)}
    if row.config.get("seat_orders") == "across":
        return {e["name"]: e.get("owner") or e["name"] for e in row.config["entrants"]}
    return None


def _apart(pairs: Mapping[str, dict[str, Any]], owners: dict[str, str] | None) -> Mapping[str, dict[str, Any]]:
    if owners is None:
        return pairs

    def apart(a: str, b: str) -> bool:
        return owners.get(a, a) == owners.get(b, b)

    if isinstance(pairs, PairRows):
        return pairs.without(apart)
    return {a: {b: v for b, v in row.items() if not apart(a, b)} for a, row in pairs.items()}


def _marked(r: Standing, state: str, health: str) -> Standing:
    """``r`` with its state and health (itself when they are already these: 1,000 rows after every game)."""
    return r if (r.state, r.health) == (state, health) else replace(r, state=state, health=health)


def dressed(standings: Standings, store: SqliteStore, row: TournamentRow) -> Standings:
    """``standings`` as a board shows them: each row's marks, the played games' comparison, and the head to head
    without the pairs that can never meet."""
    states = _states(ladder_store.entrants(store, row.id)) if "ladder" in row.config else {}
    health = health_store.get(store, [r.entrant for r in standings.rows])
    rows = [_marked(r, states.get(r.entrant, ""), health[r.entrant].status if r.entrant in health else "up")
            for r in standings.rows]  # fmt: skip
    owners = _owners(store, row)
    return replace(
        standings,
        scheduled=planned(row),
        rows=rows,
        head_to_head=_apart(standings.head_to_head, owners),
        score_diff=_apart(standings.score_diff, owners),
    )


def board(store: SqliteStore, tid: str, all_versions: bool = False) -> Standings:
    """The board of the stored tournament ``tid`` (which must exist), as every surface shows it."""
    row = store.tournament(tid)
    assert row is not None
    return dressed(tally_of(store, row).standings(shown=shown(store, row, all_versions)), store, row)
