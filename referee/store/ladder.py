"""A ladder's own rows in the store: its entrants (who joined at which round, who left) and its rounds.

A ladder is a tournament (the ``tournaments`` row, its deal key, ``schedule`` and ``games``) whose schedule grows a
round at a time: ``add_round`` stores a chosen round's slots and its ``ladder_rounds`` row in one transaction, so
a resume finds every round that was chosen, plays it as it was chosen, and never chooses it again. These
functions are how anything above the store (the ladder runner, the service, a web site) reads and changes a
ladder's state.
"""

from __future__ import annotations

import json
import sqlite3
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, replace

from .sqlite import Slot, SqliteStore, StoreError

LADDER_SCHEMA = """
CREATE TABLE IF NOT EXISTS ladder_entrants (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    name TEXT NOT NULL,            -- the name it plays under (a service bot's version: bot.vN)
    owner TEXT NOT NULL,           -- two entrants of one owner never share a table
    bot TEXT NOT NULL,             -- the bot across its versions
    version INTEGER NOT NULL,
    joined_round INTEGER NOT NULL, -- the first round it may be seated in
    left_round INTEGER,            -- the first round it is no longer seated in (withdrawn or a newer version)
    address TEXT,
    policy TEXT,
    command TEXT,                  -- JSON list of argv
    PRIMARY KEY (tournament_id, name)
);
CREATE TABLE IF NOT EXISTS ladder_rounds (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    round INTEGER NOT NULL,
    first_slot INTEGER NOT NULL,
    games INTEGER NOT NULL,
    chosen_at REAL NOT NULL,
    PRIMARY KEY (tournament_id, round)
);
"""


@dataclass(frozen=True)
class LadderEntrant:
    name: str
    owner: str
    bot: str
    version: int = 1
    joined_round: int = 0
    left_round: int | None = None
    address: str | None = None
    policy: str | None = None
    command: tuple[str, ...] | None = None

    def present(self, round_no: int) -> bool:
        """Seated (or seatable) in round ``round_no``."""
        return self.joined_round <= round_no and (self.left_round is None or round_no < self.left_round)


@dataclass(frozen=True)
class RoundRow:
    round: int
    first_slot: int
    games: int
    chosen_at: float


_ready: weakref.WeakSet[SqliteStore] = weakref.WeakSet()


def _db(store: SqliteStore) -> sqlite3.Connection:
    if store not in _ready:
        store.db.executescript(LADDER_SCHEMA)
        _ready.add(store)
    return store.db


_COLUMNS = "name, owner, bot, version, joined_round, left_round, address, policy, command"


def entrants(store: SqliteStore, tid: str) -> list[LadderEntrant]:
    """Every entrant the ladder ever had (every version), in the order they joined."""
    q = f"SELECT {_COLUMNS} FROM ladder_entrants WHERE tournament_id = ? ORDER BY joined_round, rowid"
    return [
        LadderEntrant(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], tuple(json.loads(r[8])) if r[8] else None)
        for r in _db(store).execute(q, (tid,))
    ]


def next_round(store: SqliteStore, tid: str) -> int:
    """The round the ladder will choose next: an entrant that joins now is first seated in it."""
    row = _db(store).execute("SELECT MAX(round) FROM ladder_rounds WHERE tournament_id = ?", (tid,)).fetchone()
    return 0 if row[0] is None else row[0] + 1


def join(store: SqliteStore, tid: str, new: Iterable[LadderEntrant]) -> None:
    """The entrants of a ladder's file, at round 0 (again on each resume: those stored already are kept)."""
    _db(store)
    with store._tx():
        store.db.executemany(
            f"INSERT OR IGNORE INTO ladder_entrants (tournament_id, {_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [(tid, e.name, e.owner, e.bot, e.version, e.joined_round, e.left_round, e.address, e.policy,
              json.dumps(list(e.command)) if e.command else None) for e in new],
        )  # fmt: skip


def submit(store: SqliteStore, tid: str, new: LadderEntrant) -> LadderEntrant:
    """A submitted bot version joins at the next round (``new.joined_round`` is set to it). Its owner's earlier
    versions of the same bot in this ladder leave at that round: they are no longer seated, and keep their games
    and ratings."""
    _db(store)
    with store._tx():
        at = next_round(store, tid)
        store.db.execute(
            "UPDATE ladder_entrants SET left_round = ? WHERE tournament_id = ? AND bot = ? AND owner = ?"
            " AND left_round IS NULL",
            (at, tid, new.bot, new.owner),
        )
        e = replace(new, joined_round=at, left_round=None)
        store.db.execute(
            f"INSERT OR IGNORE INTO ladder_entrants (tournament_id, {_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (tid, e.name, e.owner, e.bot, e.version, e.joined_round, None, e.address, e.policy, None),
        )
    return e


def withdraw(store: SqliteStore, tid: str, bot: str, owner: str) -> int | None:
    """Every present version of ``owner``'s ``bot`` is seated in no round from the next one on; returns that round,
    or None when none was present. Its games stay."""
    _db(store)
    with store._tx():
        at = next_round(store, tid)
        cur = store.db.execute(
            "UPDATE ladder_entrants SET left_round = ? WHERE tournament_id = ? AND bot = ? AND owner = ?"
            " AND left_round IS NULL",
            (at, tid, bot, owner),
        )
    return at if cur.rowcount else None


def add_round(store: SqliteStore, tid: str, round_no: int, slots: list[Slot]) -> None:
    """A chosen round: its slots and its row, in one transaction. Refused unless it is the next round and its
    slots follow the schedule's last one, so no round is stored twice."""
    _db(store)
    with store._tx():
        if next_round(store, tid) != round_no:
            raise StoreError(f"round {round_no} of ladder {tid} is not its next round: refusing to store it twice")
        first = store.db.execute("SELECT COUNT(*) FROM schedule WHERE tournament_id = ?", (tid,)).fetchone()[0]
        if slots and slots[0].slot != first:
            raise StoreError(f"round {round_no} of ladder {tid} starts at slot {slots[0].slot}, not {first}")
        store.insert_slots(tid, slots)
        store.db.execute(
            "INSERT INTO ladder_rounds VALUES (?, ?, ?, ?, ?)", (tid, round_no, first, len(slots), time.time())
        )


def rounds(store: SqliteStore, tid: str) -> list[RoundRow]:
    """The ladder's rounds so far, in order."""
    q = "SELECT round, first_slot, games, chosen_at FROM ladder_rounds WHERE tournament_id = ? ORDER BY round"
    return [RoundRow(*r) for r in _db(store).execute(q, (tid,))]


def latest_versions(all_entrants: Iterable[LadderEntrant]) -> set[str]:
    """The names of each bot's latest version (per owner and bot): what a ladder's standings show by default."""
    latest: dict[tuple[str, str], LadderEntrant] = {}
    for e in all_entrants:
        key = (e.owner, e.bot)
        if key not in latest or e.version > latest[key].version:
            latest[key] = e
    return {e.name for e in latest.values()}
