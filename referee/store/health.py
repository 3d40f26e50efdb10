"""Each entrant's health as the ladder sees it (docs/bot-health.md): up, down or suspended, since
when, why, how many games it missed and how many probes have failed since it went down.

Keyed by the name an entrant plays under (a service bot's ``name.vN``, or a file entrant's name), across
tournaments: a bot that cannot be reached is unreachable for every ladder it is in. An entrant without a row is up.
The table is migration 8 of ``store/migrations.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from .sqlite import SqliteStore

Status = Literal["up", "down", "suspended"]
STATUSES: tuple[Status, ...] = ("up", "down", "suspended")


@dataclass(frozen=True)
class HealthRow:
    name: str
    status: Status = "up"
    since: float = 0.0
    missed: int = 0
    reason: str = ""
    probes: int = 0


_COLUMNS = "name, status, since, missed, reason, probes"


def _db(store: SqliteStore) -> sqlite3.Connection:
    """The connection; the table is migration 8 (store/migrations.py), made when the store is opened."""
    return store.db


def get(store: SqliteStore, names: Iterable[str]) -> dict[str, HealthRow]:
    """The stored rows of ``names`` (an absent name is up, and has no row)."""
    wanted = list(dict.fromkeys(names))
    found: dict[str, HealthRow] = {}
    db = _db(store)
    for i in range(0, len(wanted), 500):  # under SQLite's limit on bound parameters
        part = wanted[i : i + 500]
        marks = ",".join("?" * len(part))
        q = f"SELECT {_COLUMNS} FROM entrant_health WHERE name IN ({marks})"
        for r in db.execute(q, part):
            found[r[0]] = HealthRow(r[0], r[1], r[2], r[3], r[4], r[5])
    return found


def everything(store: SqliteStore) -> dict[str, HealthRow]:
    """Every stored row (the prober's state on a restart)."""
    q = f"SELECT {_COLUMNS} FROM entrant_health"
    return {r[0]: HealthRow(r[0], r[1], r[2], r[3], r[4], r[5]) for r in _db(store).execute(q)}


def set_status(store: SqliteStore, name: str, status: Status, reason: str, at: float) -> HealthRow:
    """``name`` is now ``status`` since ``at`` for ``reason``; its failed probes start again from 0. Its missed
    games are kept (they are the author's to see)."""
    if status not in STATUSES:
        raise ValueError(f"entrant health: status {status!r} is not one of {', '.join(STATUSES)}")
    db = _db(store)
    with store._tx():
        db.execute(
            "INSERT INTO entrant_health (name, status, since, reason) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(name) DO UPDATE SET status = excluded.status, since = excluded.since,"
            " reason = excluded.reason, probes = 0",
            (name, status, at, reason),
        )
    return get(store, [name])[name]


def add_missed(store: SqliteStore, name: str, n: int = 1) -> None:
    """``name`` missed ``n`` more games (it would have been seated, but was down)."""
    db = _db(store)
    with store._tx():
        db.execute(
            "INSERT INTO entrant_health (name, status, since, missed) VALUES (?, 'up', 0, ?)"
            " ON CONFLICT(name) DO UPDATE SET missed = missed + excluded.missed",
            (name, n),
        )


def add_probe(store: SqliteStore, name: str) -> None:
    """One more failed probe of ``name``."""
    db = _db(store)
    with store._tx():
        db.execute("UPDATE entrant_health SET probes = probes + 1 WHERE name = ?", (name,))
