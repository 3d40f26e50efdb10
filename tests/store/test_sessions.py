"""The site's sessions in a real store (store/sessions.py): found until they expire or end, a principal's oldest
ended past its cap, and the sessions of revoked tokens ended."""

from __future__ import annotations

from pathlib import Path

from referee.store import open_store
from referee.store import sessions as s


def _row(name: str, token: str = "t-alice", expires: float = 1000.0) -> s.SessionRow:
    return s.SessionRow(name, name.startswith("organiser"), token, expires)


def test_a_session_is_found_until_it_expires_or_ends(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        s.add(store, "id-1", _row("alice", expires=100.0), now=10.0, keep=5)
        s.add(store, "id-2", _row("organiser", "t-org"), now=10.0, keep=5)
        assert s.find(store, "id-1", 99.9) == _row("alice", expires=100.0)
        assert s.find(store, "id-1", 100.0) is None  # expired at its time
        assert s.find(store, "id-2", 50.0) == s.SessionRow("organiser", True, "t-org", 1000.0)
        assert s.find(store, "nope", 50.0) is None
        s.end(store, "id-2")
        assert s.find(store, "id-2", 50.0) is None
        s.add(store, "id-3", _row("bob", "t-bob"), now=200.0, keep=5)  # expired rows go as a session is added
        assert store.db.execute("SELECT COUNT(*) FROM site_sessions WHERE id_hash = 'id-1'").fetchone()[0] == 0


def test_a_principal_keeps_its_newest_sessions_only(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        for i in range(4):
            s.add(store, f"a{i}", _row("alice"), now=float(i), keep=3)
        s.add(store, "b0", _row("bob", "t-bob"), now=5.0, keep=3)
        assert [k for k in ("a0", "a1", "a2", "a3", "b0") if s.find(store, k, 6.0)] == ["a1", "a2", "a3", "b0"]


def test_the_sessions_of_unknown_tokens_end(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        s.add(store, "a0", _row("alice"), now=1.0, keep=3)
        s.add(store, "a1", _row("alice"), now=2.0, keep=3)
        s.add(store, "b0", _row("bob", "t-bob"), now=3.0, keep=3)
        assert s.end_unknown(store, {"t-bob"}) == 2
        assert [k for k in ("a0", "a1", "b0") if s.find(store, k, 4.0)] == ["b0"]
        assert s.end_unknown(store, {"t-bob"}) == 0
