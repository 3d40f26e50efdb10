"""What the store keeps, read back from a real SQLite file: a tournament's row, deal key, entrants and ratings
snapshot, a game's result saved once and whole (or not at all), a game looked up by id, a record's file, and the
file's own settings (WAL, owner-only) that let ``abluxx standings`` read while a tournament writes."""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from referee.engine import EndReason
from referee.match.spec import GameResult, SeatStats
from referee.store import StoreError, migrations, open_store
from referee.store.migrations import StoreTooNew
from referee.store.sqlite import SqliteStore
from referee.tournament import schedule
from referee.tournament.config import TournamentConfig, parse
from referee.tournament.redeal import redeal_interrupted
from referee.tournament.runner import create_tournament

ENTRANTS = [{"name": "a", "policy": "random"}, {"name": "b", "address": "127.0.0.1:5001"},
            {"name": "c", "command": "python3 bot.py --fast"}]  # fmt: skip


def _config(name: str = "kept", **more: object) -> TournamentConfig:
    return parse({"name": name, "seed": 1, "table_size": 2, "deals": 1, "entrants": ENTRANTS, **more}, "<test>")


def _tournament(store: SqliteStore, name: str = "kept", **more: object) -> str:
    config = _config(name, **more)
    create_tournament(store, config, "kept.toml")
    return config.tournament_id


def _result(game_id: str, record: Path | None, seats: int = 2) -> GameResult:
    stats = [SeatStats(faults={"timeout": 2, "invalid": 1}, decision_us=[120, 340]),
             SeatStats(decision_us=[55], retired=True)][:seats]  # fmt: skip
    return GameResult(game_id, (7, -3)[:seats], (1, 2)[:seats], EndReason.PILE_EMPTY, stats, 41, "d1g", record, 2)


def test_a_saved_game_reads_back_whole_by_its_id_and_its_record_is_found(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        tid = _tournament(store, deals=2, seat_orders="rotations")
        slots = store.slots(tid)
        first = next(s for s in slots if len({s.table, s.deal, s.order}) == 3)  # each read from its own column
        second, third = [s for s in slots if s != first][:2]
        before = time.time()
        store.save_game(tid, first, _result(first.game_id, store.records / f"{first.game_id}.abluxx"))
        store.save_game(tid, second, _result(second.game_id, tmp_path.parent / "elsewhere.abluxx"))
        store.save_game(tid, third, _result(third.game_id, None))
        game = store.game(first.game_id)
        assert game is not None
        assert (game.slot, game.game_id, game.table, game.deal, game.order) == (
            first.slot, first.game_id, first.table, first.deal, first.order)  # fmt: skip
        assert (game.end_reason, game.decisions, game.names, game.places) == ("pile_empty", 41, first.seats, (1, 2))
        assert before <= game.finished_at <= time.time()
        # faults by name whatever order they came in: `abluxx tournament games --json` lists them as read
        seats = [(s.entrant, s.score, s.place, s.retired, list(s.faults.items()), s.decision_us) for s in game.seats]
        assert seats == [
            (first.seats[0], 7, 1, False, [("invalid", 1), ("timeout", 2)], [120, 340]),
            (first.seats[1], -3, 2, True, [], [55]),
        ]
        # a record inside the data folder is kept relative to it (the folder may move), one outside as given
        assert game.record_path == f"records/{first.game_id}.abluxx"
        assert store.record_file(game.record_path) == store.records / f"{first.game_id}.abluxx"
        elsewhere = store.game(second.game_id)
        assert elsewhere is not None and elsewhere.record_path == str(tmp_path.parent / "elsewhere.abluxx")
        assert store.record_file(elsewhere.record_path) == tmp_path.parent / "elsewhere.abluxx"
        none = store.game(third.game_id)
        assert none is not None and none.record_path is None and store.record_file(None) is None
        assert store.game("no-such-game") is None
        saved = (first, second, third)
        assert store.slots(tid, pending_only=True) == [s for s in slots if s not in saved]


def test_a_game_is_counted_once_and_a_result_that_does_not_fit_leaves_its_slot_pending(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        tid = _tournament(store)
        first, second = store.slots(tid)[:2]
        wrong = f"result for {second.game_id} does not belong to slot 0 ({first.game_id})"
        with pytest.raises(StoreError, match=f"^{re.escape(wrong)}$"):
            store.save_game(tid, first, _result(second.game_id, None))
        with pytest.raises(ValueError):  # one seat's result for a table of two: nothing of it is kept
            store.save_game(tid, first, _result(first.game_id, None, seats=1))
        assert store.game(first.game_id) is None and store.slots(tid, pending_only=True)[0] == first
        store.save_game(tid, first, _result(first.game_id, None))
        twice = f"game {first.game_id} is not a pending slot of {tid}: refusing to count it twice"
        with pytest.raises(StoreError, match=f"^{re.escape(twice)}$"):
            store.save_game(tid, first, _result(first.game_id, None))
        assert [g.game_id for g in store.games(tid)] == [first.game_id]
        assert store.tournament(tid).done == 1  # type: ignore[union-attr]


def test_a_tournament_keeps_its_row_entrants_deal_key_and_finished_ratings(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        before = time.time()
        tid = _tournament(store)
        public = _tournament(store, "public", public_deals=True)
        rows = store.tournaments()
        assert [t.id for t in rows] == [tid, public]  # oldest first
        row = store.tournament(tid)
        assert row is not None and (row.name, row.source, row.finished_at, row.games, row.done) == (
            "kept", "kept.toml", None, 3, 0)  # fmt: skip
        assert row.config["entrants"][2]["command"] == ["python3", "bot.py", "--fast"]
        assert before <= row.created_at <= rows[1].created_at <= time.time()
        # the secret key read back deals the stored schedule again (a resume's decks); public deals keep none
        assert schedule.build(_config(), store.deal_key(tid)) == store.slots(tid)
        assert store.deal_key(public) is None
        kept = store.db.execute("SELECT name, address, command, policy FROM entrants WHERE tournament_id = ?"
                                " ORDER BY name", (tid,)).fetchall()  # fmt: skip
        assert kept == [("a", None, None, "random"), ("b", "127.0.0.1:5001", None, None),
                        ("c", None, '["python3", "bot.py", "--fast"]', None)]  # fmt: skip
        store.finish(tid, {"a": (25.0, 8.0), "b": (20.5, 7.25)}, 3)
        store.finish(tid, {"a": (26.0, 6.0), "c": (19.0, 5.5)}, 6)  # finished again: the snapshot replaced
        snapshot = store.db.execute("SELECT * FROM ratings WHERE tournament_id = ? ORDER BY entrant", (tid,))
        assert snapshot.fetchall() == [(tid, "a", 26.0, 6.0, 6), (tid, "c", 19.0, 5.5, 6)]
        done = store.tournament(tid)
        assert done is not None and done.finished_at is not None and before <= done.finished_at <= time.time()
        assert store.tournament(public).finished_at is None  # type: ignore[union-attr]


def test_the_store_file_is_wal_owner_only_and_keeps_its_foreign_keys(tmp_path: Path) -> None:
    """WAL lets `abluxx standings` read while a tournament writes; NORMAL loses nothing committed to a kill."""
    with open_store(tmp_path) as store:
        _tournament(store)
        assert store.db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert store.db.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
        assert store.db.execute("PRAGMA foreign_keys").fetchone() == (1,)
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            store.db.execute("INSERT INTO deal_keys VALUES ('no-such-tournament', x'00')")
        files = [tmp_path / n for n in ("abluxx.db", "abluxx.db-wal", "abluxx.db-shm")]
        assert [f.stat().st_mode & 0o777 for f in files] == [0o600] * 3
        assert (tmp_path.stat().st_mode & 0o777, store.records.stat().st_mode & 0o777) == (0o700, 0o700)
        assert store.records == tmp_path / "records" and store.path == tmp_path / "abluxx.db"


def test_a_folder_that_cannot_hold_a_store_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    named = f"{tmp_path}/file: cannot be a data folder (File exists: {tmp_path}/file)"
    with pytest.raises(StoreError, match=f"^{re.escape(named)}$"):
        open_store(tmp_path / "file")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "abluxx.db").write_bytes(b"not a database" * 100)
    broken = f"{tmp_path}/d/abluxx.db: not a usable abluxx database (file is not a database)"
    with pytest.raises(StoreError, match=f"^{re.escape(broken)}$"):
        open_store(tmp_path / "d")
    assert _open(tmp_path / "d" / "abluxx.db") == []  # a store refused leaves no connection open to it


def test_a_set_dealt_again_reads_back_with_its_attempt_and_fresh_deck(tmp_path: Path) -> None:
    """A resume plays a set dealt again on its new deck: the slots read back must say which attempt they are."""
    config = _config()
    with open_store(tmp_path) as store:
        tid = _tournament(store)
        before = store.slots(tid)
        store.mark_started(tid, before[0].slot)  # begun, never stored: its set is dealt again
        redeal_interrupted(store, config)
        after = store.slots(tid)
    again = [s for s in after if s.duplicate_set == before[0].duplicate_set]
    assert again and {(s.attempt, s.start_seat) for s in again} == {(1, 0)}
    assert all(s.game_id.endswith("-a1") and s.deck_seed != before[0].deck_seed for s in again)
    assert [s for s in after if s not in again] == [s for s in before if s.duplicate_set != before[0].duplicate_set]


def test_files_an_older_referee_left_readable_are_made_owner_only_when_opened(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        _tournament(store)  # the -wal and -shm exist while a connection is open
        files = [tmp_path / n for n in ("abluxx.db", "abluxx.db-wal", "abluxx.db-shm")]
        for f in files:
            f.chmod(0o644)
        with open_store(tmp_path):
            assert [f.stat().st_mode & 0o777 for f in files] == [0o600] * 3


def _open(path: Path) -> list[str]:
    """This process's open files that are ``path`` or its -wal or -shm."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(str(path)):
                found.append(target)
    return found


def test_a_store_newer_than_the_code_is_refused_naming_its_file(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "abluxx.db") as db:
        db.execute("PRAGMA user_version = 999")
    named = f"{tmp_path / 'abluxx.db'}: the store is at schema version 999, newer than this abluxx knows"
    with pytest.raises(StoreTooNew, match=f"^{re.escape(named)}"):
        open_store(tmp_path)


def test_a_write_waits_for_another_writers_lock_longer_than_sqlites_default(tmp_path: Path) -> None:
    """SQLite gives up on a lock after 5 s by default; the store waits 30 s for another process's commit (a
    tournament writing while the service writes), so a lock held 6 s delays a write but does not fail it."""
    with open_store(tmp_path) as store:
        tid = _tournament(store)
        other = sqlite3.connect(tmp_path / "abluxx.db", isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
        release = threading.Timer(6.0, other.execute, ("COMMIT",))
        release.start()
        try:
            store.finish(tid, {"a": (25.0, 8.0)}, 0)
        finally:
            release.join()
            other.close()
        assert store.tournament(tid).finished_at is not None  # type: ignore[union-attr]


def test_a_store_a_newer_abluxx_upgrades_while_it_opens_is_refused_naming_its_file(tmp_path: Path) -> None:
    """Another process holds the write lock while it writes a newer schema version: this store reads the old
    version first, waits for the lock to migrate, and must then refuse the store instead."""
    path = tmp_path / "abluxx.db"
    with contextlib.closing(sqlite3.connect(path)) as db, db:  # a store of the first release, in WAL mode
        db.execute("PRAGMA journal_mode=WAL")
        for statement in migrations.statements(migrations.MIGRATIONS[0].sql):
            db.execute(statement)
    newer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    newer.execute("BEGIN IMMEDIATE")
    newer.execute(f"PRAGMA user_version = {migrations.LATEST + 1}")
    release = threading.Timer(2.0, newer.execute, ("COMMIT",))
    release.start()
    try:
        named = f"{path}: the store is at schema version {migrations.LATEST + 1}, newer than this abluxx knows"
        with pytest.raises(StoreTooNew, match=f"^{re.escape(named)}"):
            open_store(tmp_path)
    finally:
        release.join()
        newer.close()
    assert _open(path) == []  # refused after it had begun to migrate: its connection is closed all the same
