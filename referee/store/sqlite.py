"""The SQLite store: entrants, tournaments, the schedule, games, per-seat results and record paths.

The store sits below the tournament (docs/architecture.md): it returns its own row types (``Slot`` is the row of
the schedule, which tournament/schedule.py builds) and says with protocols what it reads from a tournament's
config, so it imports nothing from referee.tournament. A finished game arrives as the match runner's
``GameResult``, from the layer below.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from referee.errors import BadInput
from referee.records.paths import DEFAULT_DATA_DIR, RECORDS
from referee.records.private import private_folder, tighten

from .migrations import migrate, refuse_newer

if TYPE_CHECKING:
    from referee.match.spec import GameResult

DATABASE = "abluxx.db"  # the store's file in the data folder


class StoreError(BadInput):
    """A data folder that cannot hold a store (``--data`` names a file, the database is not ours), or a result
    that does not fit its slot."""

    local = True  # it names files, folders or bot addresses


def private_files(database: Path) -> None:
    """A SQLite database and its ``-wal`` and ``-shm`` (those that exist) made owner-only (0600), by path: never
    through a descriptor, whose close would drop the process's locks on the database (SqliteStore)."""
    for path in (database, database.with_name(database.name + "-wal"), database.with_name(database.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            tighten(path)


class EntrantSpec(Protocol):
    """What the store keeps of an entrant (tournament/config.py's EntrantConfig is one)."""

    @property
    def name(self) -> str: ...
    @property
    def address(self) -> str | None: ...
    @property
    def command(self) -> tuple[str, ...] | None: ...
    @property
    def policy(self) -> str | None: ...


class TournamentSpec(Protocol):
    """What the store keeps of a tournament's config (tournament/config.py's TournamentConfig is one)."""

    @property
    def tournament_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def entrants(self) -> Sequence[EntrantSpec]: ...
    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Slot:
    """One game of the schedule (tournament/schedule.py builds them; the store keeps them)."""

    slot: int  # position in the schedule; ratings apply results in this order
    game_id: str
    table: int  # which table (set of entrants); in "across" mode, which section (tables sharing their deals)
    deal: int  # which deal of that table or section
    order: int  # which seat order of the duplicate set; in "across" mode, which table of the section
    deck_seed: int  # the deck is deck_from_seed(deck_seed); shared by the whole duplicate set; secret (deals.py)
    seats: tuple[str, ...]  # entrant names by seat
    start_seat: int = 0
    attempt: int = 0  # how often its duplicate set was dealt again (store/void.py); 0 for the first deal

    @property
    def duplicate_set(self) -> tuple[int, int]:
        return (self.table, self.deal)


@dataclass(frozen=True)
class TournamentRow:
    id: str
    name: str
    config: dict[str, Any]
    source: str
    created_at: float
    finished_at: float | None
    games: int  # in the schedule
    done: int  # committed


@dataclass(frozen=True)
class SeatRow:
    entrant: str
    score: int
    place: int
    retired: bool
    faults: dict[str, int]
    decision_us: list[int]


@dataclass(frozen=True)
class GameFilter:
    """Which games a list shows (the site's filters): those where ``opponent`` sat, those the entrant ``won`` or
    ``lost`` (``result``: its place 1 or not), those where it faulted (``fault``: "any" or a fault's name); without an
    entrant, a result or fault of any seat."""

    opponent: str | None = None
    result: str = ""  # "", "won" or "lost"
    fault: str = ""  # "", "any" or a fault's name (records.FAULT_PB)

    def seat_condition(self) -> tuple[str, tuple[str, ...]]:
        """The SQL condition on one seat's result row ``r``, and its arguments."""
        parts: list[str] = ["1"]
        args: tuple[str, ...] = ()
        if self.result:
            parts.append("r.place = 1" if self.result == "won" else "r.place > 1")
        if self.fault == "any":
            parts.append("r.faults != '{}'")
        elif self.fault:
            parts.append("COALESCE(json_extract(r.faults, ?), 0) > 0")
            args = (f'$."{self.fault}"',)
        return " AND ".join(parts), args


@dataclass(frozen=True)
class GameRow:
    slot: int
    game_id: str
    table: int
    deal: int
    order: int
    seats: list[SeatRow]  # by seat
    end_reason: str
    decisions: int
    record_path: str | None
    finished_at: float

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.entrant for s in self.seats)

    @property
    def places(self) -> tuple[int, ...]:
        return tuple(s.place for s in self.seats)


class SqliteStore:
    """One connection, used from one thread, opened once and kept until the process is done with the store (the
    tournament's event loop; the service's reader thread has its own). Other processes may read at the same time:
    WAL mode lets readers see the last commit while a tournament writes.

    **Why nothing but SQLite may open the database file.** SQLite's locks are POSIX advisory locks, and closing
    *any* descriptor on a file drops every such lock the process holds on it. SQLite's own connections know this
    and defer each other's closes, but a descriptor opened and closed outside SQLite (``open``, ``os.open``, a
    copy) silently unlocks the process's connections. The next process to open the folder (``abluxx standings``)
    then believes it is alone, checkpoints and removes the ``-wal``, and this process goes on committing into a
    deleted WAL that a kill loses. So: modes are set on the path (``chmod``), never through a descriptor; and each
    thread keeps its one connection (``open_store``) rather than opening and closing more."""

    def __init__(self, data: str | Path = DEFAULT_DATA_DIR) -> None:
        self.data = Path(data)
        self.records = self.data / RECORDS
        # Owner-only (docs/security.md): the store holds the deal keys and the records hold decks still to be played.
        for folder in (self.data, self.records):
            private_folder(folder)
        self.path = self.data / DATABASE
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        self._rows_mark: tuple[int, int] = (-1, -1)  # tournament(): the database's state its rows were read in
        self._rows: dict[str, TournamentRow | None] = {}
        try:  # a store that cannot be opened (too new, not a database, locked) leaves no connection open
            self._prepare()
        except BaseException:
            self.db.close()
            raise

    def _prepare(self) -> None:
        refuse_newer(self.db, self.path)  # before anything is written to it, the journal mode included
        # SQLite gives the -wal and -shm files the database file's mode: that one is made owner-only first.
        private_files(self.path)
        self.db.execute("PRAGMA journal_mode=WAL")
        # A process killed at any moment loses nothing committed with NORMAL in WAL mode; only power loss could.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        migrate(self.db, self.path)
        private_files(self.path)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tournaments --------------------------------------------------------------------------------------------

    def create_tournament(self, config: TournamentSpec, slots: list[Slot], source: str, key: bytes | None) -> None:
        """The tournament, its deal key (None only with public deals), its entrants and its whole schedule, in one
        transaction."""
        tid = config.tournament_id
        with self._tx():
            self.db.execute(
                "INSERT INTO tournaments (id, name, config, source, created_at) VALUES (?, ?, ?, ?, ?)",
                (tid, config.name, json.dumps(config.to_json()), source, time.time()),
            )
            if key is not None:
                self.db.execute("INSERT INTO deal_keys VALUES (?, ?)", (tid, key))
            self.db.executemany(
                "INSERT INTO entrants VALUES (?, ?, ?, ?, ?)",
                [(tid, e.name, e.address, json.dumps(list(e.command)) if e.command else None, e.policy)
                 for e in config.entrants],
            )  # fmt: skip
            self.insert_slots(tid, slots)

    def insert_slots(self, tid: str, slots: list[Slot]) -> None:
        """Rows of the schedule, inside a transaction the caller holds (a ladder adds its rounds with it)."""
        self.db.executemany(
            "INSERT INTO schedule (tournament_id, slot, game_id, table_no, deal, seat_order, deck_seed, seats,"
            " start_seat) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(tid, s.slot, s.game_id, s.table, s.deal, s.order, s.deck_seed, json.dumps(s.seats), s.start_seat)
             for s in slots],
        )  # fmt: skip

    def deal_key(self, tid: str) -> bytes | None:
        """The tournament's secret deal key; None for public deals, or a tournament stored before deal keys."""
        row = self.db.execute("SELECT key FROM deal_keys WHERE tournament_id = ?", (tid,)).fetchone()
        return bytes(row[0]) if row else None

    def tournament(self, tid: str) -> TournamentRow | None:
        """One tournament with its counts, read again only once the database changed (any connection's commit,
        or this one's own writes): every page and gRPC call reads it, and its two counts cost each of its games."""
        mark = (self.db.execute("PRAGMA data_version").fetchone()[0], self.db.total_changes)
        if mark != self._rows_mark:
            self._rows_mark, self._rows = mark, {}
        if tid not in self._rows:
            rows = self._tournaments("WHERE t.id = ?", (tid,))
            self._rows[tid] = rows[0] if rows else None
        return self._rows[tid]

    def tournaments(self) -> list[TournamentRow]:
        """All tournaments, oldest first."""
        return self._tournaments("", ())

    def _tournaments(self, where: str, args: tuple) -> list[TournamentRow]:
        q = f"""SELECT t.id, t.name, t.config, t.source, t.created_at, t.finished_at,
                       (SELECT COUNT(*) FROM schedule s WHERE s.tournament_id = t.id),
                       (SELECT COUNT(*) FROM schedule s WHERE s.tournament_id = t.id AND s.done = 1)
                FROM tournaments t {where} ORDER BY t.created_at, t.id"""
        return [TournamentRow(r[0], r[1], json.loads(r[2]), r[3], r[4], r[5], r[6], r[7])
                for r in self.db.execute(q, args)]  # fmt: skip

    def finish(self, tid: str, ratings: dict[str, tuple[float, float]], games: int) -> None:
        """Mark the tournament finished and keep a snapshot of its ratings (derived data, for quick reading)."""
        with self._tx():
            self.db.execute("UPDATE tournaments SET finished_at = ? WHERE id = ?", (time.time(), tid))
            self.db.execute("DELETE FROM ratings WHERE tournament_id = ?", (tid,))
            self.db.executemany(
                "INSERT INTO ratings VALUES (?, ?, ?, ?, ?)",
                [(tid, name, mu, sigma, games) for name, (mu, sigma) in ratings.items()],
            )

    # -- schedule and games -------------------------------------------------------------------------------------

    def slots(self, tid: str, pending_only: bool = False) -> list[Slot]:
        q = ("SELECT slot, game_id, table_no, deal, seat_order, deck_seed, seats, start_seat, attempt FROM schedule"
             " WHERE tournament_id = ?" + (" AND done = 0" if pending_only else "") + " ORDER BY slot")  # fmt: skip
        return [Slot(r[0], r[1], r[2], r[3], r[4], r[5], tuple(json.loads(r[6])), r[7], r[8])
                for r in self.db.execute(q, (tid,))]  # fmt: skip

    def mark_started(self, tid: str, slot: int) -> None:
        """The game of ``slot`` is about to begin: from now on its deal may be seen, and an interruption voids it."""
        self.db.execute("UPDATE schedule SET started = 1 WHERE tournament_id = ? AND slot = ?", (tid, slot))

    def save_game(self, tid: str, slot: Slot, result: GameResult) -> None:
        """A finished game: its result, its record's path and its slot, committed together or not at all."""
        if result.game_id != slot.game_id:
            raise StoreError(f"result for {result.game_id} does not belong to slot {slot.slot} ({slot.game_id})")
        record = None
        if result.record_path is not None:
            p = Path(result.record_path)
            try:
                record = str(p.resolve().relative_to(self.data.resolve()))
            except ValueError:
                record = str(p)
        with self._tx():
            cur = self.db.execute(
                "UPDATE schedule SET done = 1 WHERE tournament_id = ? AND slot = ? AND done = 0", (tid, slot.slot)
            )
            if cur.rowcount != 1:
                raise StoreError(f"game {slot.game_id} is not a pending slot of {tid}: refusing to count it twice")
            self.db.execute(
                "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (result.game_id, tid, slot.slot, result.end_reason.name.lower(), result.decisions,
                 result.final_digest, record, result.referee_faults, time.time()),
            )  # fmt: skip
            self.db.executemany(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(result.game_id, seat, name, result.scores[seat], result.places[seat], int(st.retired),
                  json.dumps(st.faults, sort_keys=True), json.dumps(st.decision_us))
                 for seat, (name, st) in enumerate(zip(slot.seats, result.seats, strict=True))],
            )  # fmt: skip

    def games(self, tid: str) -> list[GameRow]:
        """The tournament's finished games in schedule order (the order ratings apply them in)."""
        return self._games("g.tournament_id = ?", (tid,))

    def recent_games(
        self, tid: str, before: int | None, limit: int, entrant: str | None = None, only: GameFilter | None = None
    ) -> list[GameRow]:
        """A page of ``tid``'s finished games, the latest slot first: up to ``limit`` of those before slot ``before``
        (all when None), only ``entrant``'s when given, and only those ``only`` lets through. It costs the page (and
        the games a filter passes over), not the tournament (the web site's lists)."""
        q = "SELECT g.game_id FROM games g WHERE g.tournament_id = ?"
        args: tuple = (tid,)
        if before is not None:
            q += " AND g.slot < ?"
            args += (before,)
        seat = "SELECT 1 FROM results r WHERE r.game_id = g.game_id"
        for name in (entrant, only.opponent if only else None):
            if name is not None:
                q += f" AND EXISTS ({seat} AND r.entrant = ?)"
                args += (name,)
        if only is not None and (only.result or only.fault):
            whose, whom = (" AND r.entrant = ?", (entrant,)) if entrant is not None else ("", ())
            cond, more = only.seat_condition()
            q += f" AND EXISTS ({seat}{whose} AND {cond})"
            args += (*whom, *more)
        ids = [r[0] for r in self.db.execute(q + " ORDER BY g.slot DESC LIMIT ?", (*args, limit))]
        marks = ", ".join("?" * len(ids))
        return sorted(self._games(f"g.game_id IN ({marks})", tuple(ids)), key=lambda g: -g.slot) if ids else []

    def game(self, game_id: str) -> GameRow | None:
        """One finished game."""
        found = self._games("g.game_id = ?", (game_id,))
        return found[0] if found else None

    def _games(self, where: str, args: tuple) -> list[GameRow]:
        q = f"""SELECT g.slot, g.game_id, s.table_no, s.deal, s.seat_order, g.end_reason, g.decisions, g.record_path,
                       g.finished_at, r.seat, r.entrant, r.score, r.place, r.retired, r.faults, r.decision_us
                FROM games g JOIN schedule s ON s.game_id = g.game_id JOIN results r ON r.game_id = g.game_id
                WHERE {where} ORDER BY g.slot, r.seat"""
        out: list[GameRow] = []
        for r in self.db.execute(q, args):
            if not out or out[-1].game_id != r[1]:
                out.append(GameRow(r[0], r[1], r[2], r[3], r[4], [], r[5], r[6], r[7], r[8]))
            out[-1].seats.append(SeatRow(r[10], r[11], r[12], bool(r[13]), json.loads(r[14]), json.loads(r[15])))
        return out

    def deal_in_play(self, deck_seed: int, game_id: str) -> int:
        """How many games other than ``game_id`` still have the deck ``deck_seed`` to play (or are playing it), in
        any tournament of this store, counting a ladder's deal set that more tables may still join as one: while there
        are any, its deck is secret. A cancelled or interrupted
        tournament's games count, since it may be resumed."""
        q = """SELECT (SELECT COUNT(*) FROM schedule WHERE deck_seed = ? AND done = 0 AND game_id != ?)
                    + (SELECT COUNT(*) FROM ladder_deals WHERE deck_seed = ? AND closed = 0)"""
        return self.db.execute(q, (deck_seed, game_id, deck_seed)).fetchone()[0]

    def record_file(self, stored: str | None) -> Path | None:
        """The file of a game's record from its stored path (GameRow.record_path: relative to the data folder, or
        absolute); None for a game stored without one."""
        if stored is None:
            return None
        p = Path(stored)
        return p if p.is_absolute() else self.data / p

    def _tx(self) -> _Transaction:
        return _Transaction(self.db)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def open_store(data: str | Path = DEFAULT_DATA_DIR) -> SqliteStore:
    """The store in data folder ``data`` (created if missing)."""
    try:
        return SqliteStore(data)
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{Path(data) / DATABASE}: not a usable abluxx database ({e})") from None
    except OSError as e:  # e.g. --data names a file
        raise StoreError(f"{data}: cannot be a data folder ({e.strerror}: {e.filename})") from None
