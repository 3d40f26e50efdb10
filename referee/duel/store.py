"""Where duels are kept: ``<data>/duels.db``, a SQLite file beside the tournaments' ``abluxx.db``.

A duel's settings are stored when it starts; each finished pair (its two games' results, record files and deck
seed) commits in one transaction after both records are written and synced, so an interrupted duel loses at most
the pairs in flight, and ``abluxx duel --resume ID`` plays on from the stored ones. The deck seeds are secret
(fresh random bits per pair) and never leave the store.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.records.private import private_folder
from referee.store.sqlite import StoreError, private_files

DUELS_DB = "duels.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS duels (
    id TEXT PRIMARY KEY,
    settings TEXT NOT NULL,        -- DuelSettings as JSON
    created_at REAL NOT NULL,
    finished_at REAL,              -- NULL while the duel may go on
    verdict TEXT,                  -- "H1", "H0", "inconclusive"; NULL while it goes on
    gauntlet TEXT,                 -- the gauntlet it is one duel of (abluxx gauntlet), else NULL
    verdict_pairs INTEGER          -- the pairs the verdict counts (H1/H0: the first crossing); NULL with it
);
CREATE TABLE IF NOT EXISTS pairs (
    duel_id TEXT NOT NULL REFERENCES duels(id),
    pair INTEGER NOT NULL,
    deck_seed INTEGER NOT NULL,    -- secret: the deal both games of the pair played
    seat INTEGER NOT NULL,         -- the candidate's seat in its game
    games TEXT NOT NULL,           -- JSON: per game, its id, record file, seat names, scores, places, retired seats
    diff REAL NOT NULL,            -- candidate minus baseline, score points per game on the same cards
    place_diff REAL NOT NULL,      -- baseline's place minus candidate's (positive: the candidate placed better)
    finished_at REAL NOT NULL,
    PRIMARY KEY (duel_id, pair)
);
"""


_DUEL_COLUMNS = "id, settings, created_at, finished_at, verdict, verdict_pairs"


@dataclass(frozen=True)
class PairRow:
    pair: int
    deck_seed: int
    seat: int
    games: list[dict[str, Any]]
    diff: float
    place_diff: float


@dataclass(frozen=True)
class DuelRow:
    id: str
    settings: dict[str, Any]
    created_at: float
    finished_at: float | None
    verdict: str | None
    verdict_pairs: int | None = None


class DuelStore:
    """The duels of one data folder (a context manager that closes the connection): one connection per process,
    kept for the duel or gauntlet, and nothing but SQLite opens the file (the store's docstring says why)."""

    def __init__(self, data: Path) -> None:
        self.data = Path(data)
        if self.data.exists() and not self.data.is_dir():
            raise StoreError(f"{self.data}: cannot be a data folder (it is a file)")
        try:
            private_folder(self.data)
            self.path = self.data / DUELS_DB
            self.db = sqlite3.connect(self.path, isolation_level=None)
            private_files(self.path)  # it holds the duels' secret deals: owner-only, like abluxx.db
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(_SCHEMA)
            if "verdict_pairs" not in {r[1] for r in self.db.execute("PRAGMA table_info(duels)")}:  # older file
                self.db.execute("ALTER TABLE duels ADD COLUMN verdict_pairs INTEGER")
            private_files(self.path)
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"{self.data}: cannot open the duel store: {e}") from None

    def __enter__(self) -> DuelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def create(self, duel_id: str, settings: dict[str, Any], gauntlet: str | None = None) -> None:
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute(
                "INSERT INTO duels (id, settings, created_at, gauntlet) VALUES (?, ?, ?, ?)",
                (duel_id, json.dumps(settings), time.time(), gauntlet),
            )

    def gauntlet(self, gauntlet_id: str) -> list[DuelRow]:
        """The duels of a gauntlet, in the order they were created (the field's order)."""
        rows = self.db.execute(
            f"SELECT {_DUEL_COLUMNS} FROM duels WHERE gauntlet = ? ORDER BY rowid",
            (gauntlet_id,),
        )
        return [DuelRow(r[0], json.loads(r[1]), r[2], r[3], r[4], r[5]) for r in rows]

    def duel(self, duel_id: str) -> DuelRow | None:
        row = self.db.execute(
            f"SELECT {_DUEL_COLUMNS} FROM duels WHERE id = ?", (duel_id,)
        ).fetchone()
        return None if row is None else DuelRow(row[0], json.loads(row[1]), row[2], row[3], row[4], row[5])

    def duels(self) -> list[DuelRow]:
        rows = self.db.execute(f"SELECT {_DUEL_COLUMNS} FROM duels ORDER BY created_at")
        return [DuelRow(r[0], json.loads(r[1]), r[2], r[3], r[4], r[5]) for r in rows]

    def save_pair(self, duel_id: str, row: PairRow) -> None:
        """One finished pair, in one transaction (its records are already on disk)."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute(
                "INSERT INTO pairs (duel_id, pair, deck_seed, seat, games, diff, place_diff, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (duel_id, row.pair, row.deck_seed, row.seat, json.dumps(row.games), row.diff, row.place_diff,
                 time.time()),
            )  # fmt: skip

    def pairs(self, duel_id: str) -> list[PairRow]:
        rows = self.db.execute(
            "SELECT pair, deck_seed, seat, games, diff, place_diff FROM pairs WHERE duel_id = ? ORDER BY pair",
            (duel_id,),
        )
        return [PairRow(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5]) for r in rows]

    def update_settings(self, duel_id: str, settings: dict[str, Any]) -> None:
        """A resume with a new game budget: the duel goes on (or stands) under it."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute(
                "UPDATE duels SET settings = ?, finished_at = NULL, verdict = NULL, verdict_pairs = NULL WHERE id = ?",
                (json.dumps(settings), duel_id),
            )

    def finish(self, duel_id: str, verdict: str, pairs: int) -> None:
        """The duel's verdict and the pairs it counts (for H1 or H0, the first pair count that crossed a bound)."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute(
                "UPDATE duels SET finished_at = ?, verdict = ?, verdict_pairs = ? WHERE id = ?",
                (time.time(), verdict, pairs, duel_id),
            )
