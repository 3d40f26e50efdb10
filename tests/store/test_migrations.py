"""The store's numbered migrations: a new store gets them all, an older one the missing ones, a newer one is refused."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from referee.store import DATABASE, StoreError, open_store
from referee.store import ladder as ladder_store
from referee.store import migrations as m
from referee.store import ratings as kept


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_numbers_run_from_one_without_gaps() -> None:
    assert [x.number for x in m.MIGRATIONS] == list(range(1, len(m.MIGRATIONS) + 1))
    assert len(m.MIGRATIONS) == m.LATEST


def test_a_new_store_has_every_migration_recorded(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        assert m.version(store.db) == m.LATEST
        rows = store.db.execute("SELECT number, name FROM schema_migrations ORDER BY number").fetchall()
    assert rows == [(x.number, x.name) for x in m.MIGRATIONS]
    assert {"tournaments", "deal_keys", "ladder_rounds", "void_games", "service_entrants"} <= _tables(
        tmp_path / DATABASE
    )


def test_a_store_from_before_numbered_migrations_gains_what_it_lacks(tmp_path: Path) -> None:
    """The first release's tables, written as it wrote them (no user_version): its rows stay, columns are added."""
    path = tmp_path / DATABASE
    with sqlite3.connect(path) as db:
        for statement in m.statements(m.MIGRATIONS[0].sql):
            db.execute(statement)
        db.execute("INSERT INTO tournaments VALUES ('t1', 'old', '{}', 'old.toml', 1.0, NULL)")
        db.execute("INSERT INTO schedule (tournament_id, slot, game_id, table_no, deal, seat_order, deck_seed, seats,"
                   " start_seat) VALUES ('t1', 0, 'g0', 0, 0, 0, 7, '[]', 0)")  # fmt: skip
    with open_store(tmp_path) as store:
        assert m.version(store.db) == m.LATEST
        assert store.slots("t1")[0].attempt == 0
        assert store.tournament("t1") is not None
        assert [r[0] for r in store.db.execute("SELECT number FROM schema_migrations")] == list(range(1, m.LATEST + 1))


def test_a_store_newer_than_the_code_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / DATABASE
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE future (x)")
        db.execute(f"PRAGMA user_version = {m.LATEST + 1}")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(m.StoreTooNew, match=rf"schema version {m.LATEST + 1}, newer than this abluxx knows"):
        open_store(tmp_path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [DATABASE, "records"]  # no -wal: never opened to write


def test_a_failing_migration_leaves_the_store_at_its_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_store(tmp_path).close()
    broken = m.Migration(m.LATEST + 2, "broken", "CREATE TABLE half (x);\nCREATE TABLE oops (")
    monkeypatch.setattr(
        m, "MIGRATIONS", (*m.MIGRATIONS, m.Migration(m.LATEST + 1, "fine", "CREATE TABLE fine (x)"), broken)
    )
    monkeypatch.setattr(m, "LATEST", m.LATEST + 2)
    with pytest.raises(StoreError, match="not a usable abluxx database"):
        open_store(tmp_path)
    monkeypatch.undo()
    assert not {"fine", "half"} & _tables(tmp_path / DATABASE)
    with open_store(tmp_path) as store:
        assert m.version(store.db) == m.LATEST


def test_statements_are_cut_at_their_ends() -> None:
    sql = "CREATE TABLE a (x);  -- a note; with a semicolon\nCREATE TABLE b (\n  y  -- one; two\n);"
    assert m.statements(sql) == [
        "CREATE TABLE a (x);  -- a note; with a semicolon",
        "CREATE TABLE b (\n  y  -- one; two\n);",
    ]


def test_a_store_of_fits_of_the_old_draw_probability_fits_again_and_keeps_its_ladder_choices(tmp_path: Path) -> None:
    """A store at migration 14 (ratings of the draw probability 0.05): opened by today's code its kept fits are gone,
    so no leaderboard is restored from a fit of the old model (each is fitted again at its first read), and its
    ladder choices read back with no draw probability: ``replay`` rates them with 0.05."""
    with open_store(tmp_path) as store:
        store.db.execute("INSERT INTO tournaments VALUES ('t1', 'old', '{}', 'old.toml', 1.0, NULL)")
        kept.save(store, "t1", {"a": (0.1, 2.5, 1.0)}, (0, 0, 0))
        assert kept.load(store, "t1") is not None
        store.db.execute(
            "INSERT INTO ladder_rounds (tournament_id, round, first_slot, games, chosen_at, results_seen, idle, free,"
            " tables, in_flight, rule) VALUES ('t1', 0, 0, 0, 1.0, 0, '[]', 1, '[]', 0, 3)"
        )
        store.db.execute("DELETE FROM schema_migrations WHERE number = 15")
        store.db.execute("PRAGMA user_version = 14")
    with open_store(tmp_path) as store:
        assert m.version(store.db) == m.LATEST
        assert kept.load(store, "t1") is None
        assert store.db.execute("SELECT COUNT(*) FROM rating_fits").fetchone()[0] == 0
        assert [r.draw_probability for r in ladder_store.rounds(store, "t1")] == [None]
