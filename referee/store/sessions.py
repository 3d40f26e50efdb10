"""The site's sign-in sessions, kept in the store so that signing out and revoking a token end them at once
(docs/web.md, "Sign-in"). The table is migration 12 of ``store/migrations.py``.

A row is keyed by the SHA-256 of the session id its cookie holds (the id itself is never stored, so a copy of the
store signs nobody in) and remembers the SHA-256 of the token signed in with: a session is good only while that
token is still one the server knows.
"""

from __future__ import annotations

from dataclasses import dataclass

from .sqlite import SqliteStore


@dataclass(frozen=True)
class SessionRow:
    principal: str
    organiser: bool
    token_hash: str
    expires: float


def add(store: SqliteStore, id_hash: str, row: SessionRow, now: float, keep: int) -> None:
    """Stores a new session; its principal keeps at most ``keep`` sessions (the oldest end first). Expired rows
    are dropped on the way."""
    with store._tx():
        db = store.db
        db.execute("DELETE FROM site_sessions WHERE expires <= ?", (now,))
        db.execute(
            "INSERT INTO site_sessions VALUES (?, ?, ?, ?, ?, ?)",
            (id_hash, row.principal, int(row.organiser), row.token_hash, now, row.expires),
        )
        db.execute(
            "DELETE FROM site_sessions WHERE principal = ? AND id_hash NOT IN "
            "(SELECT id_hash FROM site_sessions WHERE principal = ? ORDER BY created DESC LIMIT ?)",
            (row.principal, row.principal, keep),
        )


def find(store: SqliteStore, id_hash: str, now: float) -> SessionRow | None:
    """The session whose id hashes to ``id_hash``, unless it has expired."""
    q = "SELECT principal, organiser, token_hash, expires FROM site_sessions WHERE id_hash = ? AND expires > ?"
    r = store.db.execute(q, (id_hash, now)).fetchone()
    return None if r is None else SessionRow(r[0], bool(r[1]), r[2], r[3])


def end(store: SqliteStore, id_hash: str) -> None:
    """Ends one session (sign-out)."""
    store.db.execute("DELETE FROM site_sessions WHERE id_hash = ?", (id_hash,))


def end_unknown(store: SqliteStore, known: set[str]) -> int:
    """Ends every session whose token hash is not in ``known`` (tokens revoked); how many."""
    hashes = [r[0] for r in store.db.execute("SELECT DISTINCT token_hash FROM site_sessions")]
    before = store.db.total_changes
    with store._tx():
        for h in hashes:
            if h not in known:
                store.db.execute("DELETE FROM site_sessions WHERE token_hash = ?", (h,))
    return store.db.total_changes - before
