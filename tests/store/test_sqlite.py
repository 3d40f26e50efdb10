"""The tournament store on a real SQLite file: the site's pages of recent games, and a store written by an older
version (before void deals) that opens and reads as it was."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from referee.store import open_store
from tests.web.conftest import save_tournament

# The store's schema before void deals (commit bbf6d08): its schedule has no `started` and no `attempt` column, and
# there is no void_games table. Written here as that version wrote it, so the test holds whatever the migration.
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tournaments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    config TEXT NOT NULL,          -- the checked config, as JSON
    source TEXT NOT NULL,          -- where it came from (the TOML file's path)
    created_at REAL NOT NULL,
    finished_at REAL               -- NULL while games remain
);
CREATE TABLE IF NOT EXISTS deal_keys (
    tournament_id TEXT PRIMARY KEY REFERENCES tournaments(id),
    key BLOB NOT NULL              -- the secret the decks come from (tournament/deals.py); never leaves the store
);
CREATE TABLE IF NOT EXISTS entrants (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    name TEXT NOT NULL,
    address TEXT,
    command TEXT,                  -- JSON list of argv
    policy TEXT,
    PRIMARY KEY (tournament_id, name)
);
CREATE TABLE IF NOT EXISTS schedule (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    slot INTEGER NOT NULL,
    game_id TEXT NOT NULL UNIQUE,
    table_no INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    seat_order INTEGER NOT NULL,
    deck_seed INTEGER NOT NULL,
    seats TEXT NOT NULL,           -- JSON list of entrant names by seat
    start_seat INTEGER NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tournament_id, slot)
);
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY REFERENCES schedule(game_id),
    tournament_id TEXT NOT NULL,
    slot INTEGER NOT NULL,
    end_reason TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    final_digest TEXT NOT NULL,
    record_path TEXT,              -- relative to the data folder when inside it
    referee_faults INTEGER NOT NULL,
    finished_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    game_id TEXT NOT NULL REFERENCES games(game_id),
    seat INTEGER NOT NULL,
    entrant TEXT NOT NULL,
    score INTEGER NOT NULL,
    place INTEGER NOT NULL,
    retired INTEGER NOT NULL,
    faults TEXT NOT NULL,          -- JSON {kind: count}
    decision_us TEXT NOT NULL,     -- JSON list of the bot's time per decision
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX IF NOT EXISTS games_by_tournament ON games (tournament_id, slot);
CREATE INDEX IF NOT EXISTS schedule_by_deck ON schedule (deck_seed, done);
CREATE INDEX IF NOT EXISTS schedule_done ON schedule (tournament_id, done);  -- a tournament's progress, from the index
CREATE TABLE IF NOT EXISTS ratings (
    tournament_id TEXT NOT NULL,
    entrant TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    games INTEGER NOT NULL,        -- how many games the snapshot covers
    PRIMARY KEY (tournament_id, entrant)
);
"""

SCHEDULE = "tournament_id, slot, game_id, table_no, deal, seat_order, deck_seed, seats, start_seat, done"


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[Path, str]:
    """18 games of 3 entrants, two to a table (3 pairs x 3 deals x 2 seat orders), in a real store."""
    return save_tournament(tmp_path_factory.mktemp("store"), ("ada", "bob", "cyd"), table_size=2, deals=3)


def test_recent_games_are_the_latest_page_first_and_older_pages_follow(stored) -> None:
    data, tid = stored
    with open_store(data) as store:
        every = [g.slot for g in store.games(tid)]
        assert len(every) == 18
        latest = store.recent_games(tid, None, 4)
        assert [g.slot for g in latest] == sorted(every, reverse=True)[:4]
        older = store.recent_games(tid, latest[-1].slot, 4)
        assert [g.slot for g in older] == sorted(every, reverse=True)[4:8]
        bobs = store.recent_games(tid, None, 3, entrant="bob")
        assert [g.slot for g in bobs] == sorted((g.slot for g in store.games(tid) if "bob" in g.names),
                                                reverse=True)[:3]  # fmt: skip
        assert store.recent_games(tid, min(every), 4) == []


def _older_store(new: Path, old: Path) -> None:
    """``old``: a store made with the older schema's SQL, holding what the store in ``new`` holds."""
    old.mkdir(mode=0o700)
    db = sqlite3.connect(old / "abluxx.db", isolation_level=None)
    db.executescript(OLD_SCHEMA)
    db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    db.execute("ATTACH DATABASE ? AS new", (str(new / "abluxx.db"),))
    for table in ("tournaments", "deal_keys", "entrants", "games", "results", "ratings"):
        db.execute(f"INSERT INTO main.{table} SELECT * FROM new.{table}")
    db.execute(f"INSERT INTO main.schedule ({SCHEDULE}) SELECT {SCHEDULE} FROM new.schedule")
    db.execute("DETACH DATABASE new")
    db.close()
    (old / "records").symlink_to(new / "records")


def test_a_store_from_before_void_deals_opens_and_reads_its_games_with_their_attempt(stored, tmp_path) -> None:
    data, tid = stored
    with open_store(data) as store:
        slots, games = store.slots(tid), store.games(tid)
    _older_store(data, tmp_path / "old")
    with open_store(tmp_path / "old") as store:
        assert store.slots(tid) == slots  # every slot, its attempt 0: its set was never dealt again
        assert {s.attempt for s in store.slots(tid)} == {0}
        assert store.games(tid) == games
        store.mark_started(tid, slots[0].slot)  # a game beginning on the older store is marked as any other
