"""Persistence behind one small interface. The default, and so far the only, store is SQLite in a data folder.

The data folder (default ``./abluxx-data``) holds ``abluxx.db`` (WAL mode) and the game records under
``records/``. A finished game's result, its record's path and its schedule slot commit in one transaction; the
match runner has written and synced the record file before that.
"""

from __future__ import annotations

from .sqlite import (
    DATABASE,
    EntrantSpec,
    GameFilter,
    GameRow,
    SeatRow,
    Slot,
    SqliteStore,
    StoreError,
    TournamentRow,
    TournamentSpec,
    open_store,
)

__all__ = [
    "DATABASE", "EntrantSpec", "GameFilter", "GameRow", "SeatRow", "Slot", "SqliteStore", "StoreError", "TournamentRow",
    "TournamentSpec", "open_store",
]  # fmt: skip
