"""What the service keeps beside the tournament store, in the same SQLite file: submitted bot versions, and each
tournament's lifecycle (created, running, finished, cancelled) and which bot versions it uses.

The tournament store (referee.store) keeps configs, schedules, games and results; this module reads and writes
its own tables (made by the store's migration 2, store/migrations.py) and the store's through its connection.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass

from referee.rating import rate
from referee.store import SqliteStore, TournamentRow
from referee.store import ladder as ladder_store

CREATED, RUNNING, FINISHED, CANCELLED = "created", "running", "finished", "cancelled"
PAUSED = "paused"  # a ladder an organiser paused: StartTournament resumes it
ACTIVE, SUPERSEDED, RETIRED = "active", "superseded", "retired"


@dataclass(frozen=True)
class BotVersion:
    name: str
    version: int
    address: str
    owner: str
    bot_version: str
    bot_author: str
    state: str
    submitted_at: float
    validation_game: str
    games_at_once: int = 0  # games it asked to play at once in a ladder; 0: each ladder's games_at_once
    command: str | None = None  # an uploaded bot's command line (JSON list), run in the sandbox (service/hosted.py)

    @property
    def entrant_id(self) -> str:
        return f"{self.name}.v{self.version}"


class Registry:
    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.db = store.db

    @contextlib.contextmanager
    def _tx(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- bots ---------------------------------------------------------------------------------------------------

    def bots(self, active_only: bool = False) -> list[BotVersion]:
        where = "WHERE state = 'active'" if active_only else ""
        rows = self.db.execute(f"SELECT * FROM service_entrants {where} ORDER BY submitted_at DESC, name, version DESC")
        return [BotVersion(*r) for r in rows]

    def bots_page(
        self, active_only: bool, before: int | None, limit: int, every: bool = True
    ) -> list[tuple[int, BotVersion]]:
        """Up to ``limit`` bot versions, newest first, each with its row number; only those older than the row
        ``before`` when given (a page that follows another, unmoved by submissions made meanwhile); without
        ``every``, each bot's latest version only (no superseded one)."""
        where = ["state = 'active'"] if active_only else [] if every else [f"state != '{SUPERSEDED}'"]
        args: list[int] = []
        if before is not None:
            where.append("rowid < ?")
            args.append(before)
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        rows = self.db.execute(f"SELECT rowid, * FROM service_entrants {clause} ORDER BY rowid DESC LIMIT ?",
                               (*args, limit))  # fmt: skip
        return [(r[0], BotVersion(*r[1:])) for r in rows]

    def versions(self, name: str) -> list[BotVersion]:
        """Every version of the bot ``name``, the newest first."""
        rows = self.db.execute("SELECT * FROM service_entrants WHERE name = ? ORDER BY version DESC", (name,))
        return [BotVersion(*r) for r in rows]

    def linked(self, tid: str) -> dict[str, tuple[str, int]]:
        """Entrant name -> (bot, version) for the submitted bots tournament ``tid`` plays."""
        return {e: bv for (t, e), bv in bot_links(self.store, tid).items()}

    def entries(self, name: str) -> list[tuple[str, str, int]]:
        """(tournament id, entrant name, version) for each tournament the bot ``name`` plays in."""
        return sorted((t, e, v) for (t, e), (b, v) in bot_links(self.store).items() if b == name)

    def active_bots_of(self, owner: str) -> int:
        """How many bots ``owner`` has whose current version is active."""
        return self.db.execute(
            "SELECT COUNT(DISTINCT name) FROM service_entrants WHERE owner = ? AND state = 'active'", (owner,)
        ).fetchone()[0]

    def open_tournaments_of(self, created_by: str) -> int:
        """Tournaments ``created_by`` made that are created, running or paused."""
        return self.db.execute(
            "SELECT COUNT(*) FROM service_tournaments WHERE created_by = ? AND state IN (?, ?, ?)",
            (created_by, CREATED, RUNNING, PAUSED),
        ).fetchone()[0]

    def bot(self, name: str, version: int = 0) -> BotVersion | None:
        if version:
            r = self.db.execute("SELECT * FROM service_entrants WHERE name = ? AND version = ?", (name, version))
        else:
            r = self.db.execute("SELECT * FROM service_entrants WHERE name = ? ORDER BY version DESC LIMIT 1", (name,))
        row = r.fetchone()
        return BotVersion(*row) if row else None

    def add_bot(
        self,
        name: str,
        address: str,
        owner: str,
        bot_version: str,
        bot_author: str,
        game_id: str,
        games_at_once: int = 0,
        command: str | None = None,
    ) -> BotVersion:
        """The next version of ``name``; the older ones are superseded, in the same transaction."""
        with self._tx():
            latest = self.db.execute("SELECT MAX(version) FROM service_entrants WHERE name = ?", (name,)).fetchone()
            version = (latest[0] or 0) + 1
            self.db.execute(
                "UPDATE service_entrants SET state = ? WHERE name = ? AND state = ?", (SUPERSEDED, name, ACTIVE)
            )
            self.db.execute(
                "INSERT INTO service_entrants VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    name,
                    version,
                    address,
                    owner,
                    bot_version,
                    bot_author,
                    ACTIVE,
                    time.time(),
                    game_id,
                    games_at_once,
                    command,
                ),
            )
        found = self.bot(name, version)
        assert found is not None
        return found

    def retire_bot(self, name: str, version: int) -> None:
        with self._tx():
            self.db.execute(
                "UPDATE service_entrants SET state = ? WHERE name = ? AND version = ?", (RETIRED, name, version)
            )

    # -- tournaments --------------------------------------------------------------------------------------------

    def add_tournament(self, tid: str, created_by: str, bots: dict[str, tuple[str, int]]) -> None:
        with self._tx():
            self.db.execute(
                "INSERT INTO service_tournaments VALUES (?, ?, ?, ?)", (tid, CREATED, created_by, time.time())
            )
            self.db.executemany(
                "INSERT INTO service_tournament_bots VALUES (?, ?, ?, ?)",
                [(tid, entrant, b, v) for entrant, (b, v) in bots.items()],
            )

    def tournament_ids(self, start: int, limit: int) -> list[str]:
        """Stored tournaments' ids, oldest first (the store's order), from position ``start``."""
        rows = self.db.execute("SELECT id FROM tournaments ORDER BY created_at, id LIMIT ? OFFSET ?", (limit, start))
        return [r[0] for r in rows]

    def state(self, tid: str, stored: TournamentRow | None = None) -> tuple[str, str]:
        """(state, created_by) of a stored tournament (``stored``: its row, if the caller has read it). One made by
        ``abluxx tournament run`` in the same data folder has no row here: it is finished, or created (the service
        may start, and so resume, it)."""
        row = self.db.execute("SELECT state, created_by FROM service_tournaments WHERE id = ?", (tid,)).fetchone()
        if row:
            return row[0], row[1]
        t = stored or self.store.tournament(tid)
        return (FINISHED if t is not None and t.finished_at is not None else CREATED), "cli"

    def set_state(self, tid: str, state: str) -> None:
        with self._tx():
            self.db.execute(
                "INSERT INTO service_tournaments VALUES (?, ?, 'cli', ?) "
                "ON CONFLICT (id) DO UPDATE SET state = excluded.state, changed_at = excluded.changed_at",
                (tid, state, time.time()),
            )

    def running(self) -> list[str]:
        return [
            r[0]
            for r in self.db.execute(
                "SELECT id FROM service_tournaments WHERE state = ? ORDER BY changed_at", (RUNNING,)
            )
        ]

    # -- games --------------------------------------------------------------------------------------------------

    def game_location(self, game_id: str) -> tuple[str, str | None] | None:
        """(tournament id, record path relative to the data folder) of a finished game."""
        row = self.db.execute("SELECT tournament_id, record_path FROM games WHERE game_id = ?", (game_id,)).fetchone()
        return (row[0], row[1]) if row else None

    def scheduled_game(self, game_id: str) -> tuple[str, int, int, int] | None:
        """(tournament id, slot, deck seed, done) of a game in any schedule."""
        row = self.db.execute(
            "SELECT tournament_id, slot, deck_seed, done FROM schedule WHERE game_id = ?", (game_id,)
        ).fetchone()
        return (row[0], row[1], row[2], row[3]) if row else None


def health_address(store: SqliteStore, registry: Registry, name: str) -> str | None:
    """The address an entrant plays at, by the name it plays under: a submitted version's (``bot.vN``), or a
    ladder's file entrant's; None for one the referee does not dial (a built-in policy, a command)."""
    bot, _, version = name.rpartition(".v")
    if bot and version.isdigit() and (found := registry.bot(bot, int(version))) is not None:
        return found.address
    for t in store.tournaments():
        if "ladder" in t.config:
            for e in ladder_store.entrants(store, t.id):
                if e.name == name and e.address:
                    return e.address
    return None


def bot_links(store: SqliteStore, tid: str | None = None) -> dict[tuple[str, str], tuple[str, int]]:
    """(tournament id, entrant name) -> (bot, version) for every submitted bot version a tournament (``tid``, or
    every one) plays: those its config names, and those that joined an open ladder (``name.vN``)."""
    rows = store.db.execute("SELECT * FROM service_tournament_bots WHERE ? IS NULL OR tournament_id = ?", (tid, tid))
    links = {(t, e): (b, v) for t, e, b, v in rows}
    joined = """SELECT l.tournament_id, l.name, l.bot, l.version FROM ladder_entrants l
                JOIN service_entrants s ON s.name = l.bot AND s.version = l.version
                WHERE l.name = l.bot || '.v' || l.version AND (? IS NULL OR l.tournament_id = ?)"""
    try:
        for t, e, b, v in store.db.execute(joined, (tid, tid)):
            links.setdefault((t, e), (b, v))
    except sqlite3.OperationalError:  # no ladder yet: its table is made with the first (store/ladder.py)
        pass
    return links


def bot_ratings(store: SqliteStore) -> dict[tuple[str, int], tuple[float, float, int]]:
    """(name, version) -> (mu, sigma, games) over every game a submitted bot version played on this server,
    fitted to all of them at once. A new version is a new player."""
    links = bot_links(store)
    if not links:
        return {}
    games: list[tuple[tuple[str, ...], tuple[int, ...]]] = []
    keys: set[str] = set()
    played: dict[str, int] = {}
    for t in store.tournaments():
        if not any(tid == t.id for tid, _ in links):
            continue
        for g in store.games(t.id):
            seats = tuple(
                f"{b}\0{v}" if (b, v) != ("", 0) else f"{t.id}\0{n}"
                for n in g.names
                for b, v in [links.get((t.id, n), ("", 0))]
            )
            keys.update(seats)
            for s in seats:
                played[s] = played.get(s, 0) + 1
            games.append((seats, g.places))
    ratings = rate(sorted(keys), games)
    out = {}
    for b, v in set(links.values()):
        key = f"{b}\0{v}"
        if key in keys:
            r = ratings.get(key)
            out[(b, v)] = (r.mu, r.sigma, played[key])
    return out
