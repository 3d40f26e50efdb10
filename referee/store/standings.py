"""The standings a service last showed, kept in the store (docs/ratings.md, "How it is kept up to date"), so that
a restart shows them at once instead of reading every game first. Like the kept rating fit (``ratings.py``) they
carry the mark of the games they count; a copy whose mark is not the stored games' is never shown.
"""

from __future__ import annotations

import json
from typing import Any

from .ratings import Mark, stored_mark
from .sqlite import SqliteStore


def shown_key(shown: object) -> str:
    """The key of a board of only ``shown``'s rows ('' for every entrant)."""
    return "" if shown is None else json.dumps(sorted(shown))  # type: ignore[call-overload]  # a collection of names


def save(store: SqliteStore, tid: str, shown: str, mark: Mark, body: dict[str, Any]) -> None:
    """Keeps ``body`` as the standings of the games ``mark`` says (replacing the last kept ones)."""
    with store._tx():
        store.db.execute(
            "INSERT OR REPLACE INTO kept_standings VALUES (?, ?, ?, ?, ?, ?)", (tid, shown, *mark, json.dumps(body))
        )


def load(store: SqliteStore, tid: str) -> dict[str, dict[str, Any]]:
    """The kept standings of ``tid`` that count exactly the stored games, by board (``shown_key``); a copy that
    does not parse is left out (the board is built from the games instead)."""
    mark = stored_mark(store, tid)
    out: dict[str, dict[str, Any]] = {}
    q = "SELECT shown, games, slots, squares, body FROM kept_standings WHERE tournament_id = ?"
    for shown, games, slots, squares, body in store.db.execute(q, (tid,)).fetchall():
        if (games, slots, squares) == mark:
            try:
                out[shown] = json.loads(body)
            except ValueError:
                continue
    return out
