"""The store's schema as numbered migrations: every table of ``abluxx.db`` and every change to one, in order.

A store records the last migration applied in SQLite's ``user_version`` (0 in a new file, and in a store written
before migrations were numbered) and each migration's row in ``schema_migrations``. ``migrate`` applies the
pending ones in one transaction when the store is opened; a store whose version is above the last one here was
written by newer code and is refused before anything is written to it.

**Adding one** is one line at the end of ``MIGRATIONS``: the next number, a few words on what it is for, and its
SQL, e.g. ``Migration(7, "bot health", "CREATE TABLE entrant_health (...)")``. Never edit a migration that a
release has applied: stores in the field have it already; change a table with a new one.

Migrations 1 to 7 are the history of the schema before they were numbered. A store from that time (version 0)
has some of their tables already, so they are written to apply to it as well: ``IF NOT EXISTS``, and columns that
are added only where missing (``Migration.columns``).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from referee.errors import BadInput


class StoreTooNew(BadInput):
    """The store was written by newer code than this: it is left as it is."""

    local = True  # it names the data folder


@dataclass(frozen=True)
class Migration:
    number: int
    name: str
    sql: str  # statements separated by ';'
    columns: tuple[tuple[str, str], ...] = ()  # (table, column definition) added when the column is missing


_FIRST = """
CREATE TABLE IF NOT EXISTS schema_migrations (number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tournaments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    config TEXT NOT NULL,          -- the checked config, as JSON
    source TEXT NOT NULL,          -- where it came from (the TOML file's path)
    created_at REAL NOT NULL,
    finished_at REAL               -- NULL while games remain
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
CREATE TABLE IF NOT EXISTS ratings (
    tournament_id TEXT NOT NULL,
    entrant TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    games INTEGER NOT NULL,        -- how many games the snapshot covers
    PRIMARY KEY (tournament_id, entrant)
);
"""

_SERVICE = """
CREATE TABLE IF NOT EXISTS service_entrants (
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    address TEXT NOT NULL,
    owner TEXT NOT NULL,
    bot_version TEXT NOT NULL,
    bot_author TEXT NOT NULL,
    state TEXT NOT NULL,             -- active, superseded, retired
    submitted_at REAL NOT NULL,
    validation_game TEXT NOT NULL,
    PRIMARY KEY (name, version)
);
CREATE TABLE IF NOT EXISTS service_tournaments (
    id TEXT PRIMARY KEY,             -- tournaments.id in the store
    state TEXT NOT NULL,             -- created, running, finished, cancelled
    created_by TEXT NOT NULL,
    changed_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS service_tournament_bots (
    tournament_id TEXT NOT NULL,
    entrant TEXT NOT NULL,           -- the name in the tournament's standings
    bot TEXT NOT NULL,               -- service_entrants.name
    version INTEGER NOT NULL,        -- service_entrants.version
    PRIMARY KEY (tournament_id, entrant)
);
"""

_DEAL_KEYS = """
CREATE TABLE IF NOT EXISTS deal_keys (
    tournament_id TEXT PRIMARY KEY REFERENCES tournaments(id),
    key BLOB NOT NULL              -- the secret the decks come from (tournament/deals.py); never leaves the store
);
CREATE INDEX IF NOT EXISTS schedule_by_deck ON schedule (deck_seed, done);
"""

_LADDER = """
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

_PROGRESS = "CREATE INDEX IF NOT EXISTS schedule_done ON schedule (tournament_id, done)"

_VOID = """
CREATE TABLE IF NOT EXISTS void_games (
    game_id TEXT PRIMARY KEY,      -- a game of a deal that was dealt again: out of the results and ratings
    tournament_id TEXT NOT NULL,
    slot INTEGER NOT NULL,
    attempt INTEGER NOT NULL,      -- the attempt of its deal that it played
    finished INTEGER NOT NULL,     -- 1: played to its end before its deal was void; 0: interrupted
    seats TEXT NOT NULL,           -- JSON list of entrant names by seat
    result TEXT,                   -- JSON: end_reason, decisions, scores, places, record path (finished games)
    voided_at REAL NOT NULL
);
"""
_VOID_COLUMNS = (
    ("schedule", "started INTEGER NOT NULL DEFAULT 0"),  # 1 once its game began: bots may have seen the deal
    ("schedule", "attempt INTEGER NOT NULL DEFAULT 0"),  # how often its duplicate set was dealt again
)

_LADDER_CHOICES = """
CREATE TABLE IF NOT EXISTS ladder_results (  -- every result in the order the ladder saw it, void ones too
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    seq INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    seats TEXT NOT NULL,           -- JSON list of names by seat
    places TEXT NOT NULL,          -- JSON list of places by seat
    PRIMARY KEY (tournament_id, seq)
);
CREATE TABLE IF NOT EXISTS ladder_deals (  -- a ladder's deal set: its tables share one secret deck (store/ladder.py)
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    deal INTEGER NOT NULL,
    deck_seed INTEGER NOT NULL,
    closed INTEGER NOT NULL DEFAULT 0,  -- 1: no more tables join it (its deck may be revealed once all are done)
    PRIMARY KEY (tournament_id, deal)
);
CREATE INDEX IF NOT EXISTS ladder_deals_open ON ladder_deals (deck_seed, closed);
"""
_LADDER_CHOICE_COLUMNS = (
    ("ladder_entrants", "games_at_once INTEGER NOT NULL DEFAULT 1"),  # games it may play at a time
    ("ladder_rounds", "results_seen INTEGER"),  # how many of ladder_results the choice's ratings were fitted to
    ("ladder_rounds", "idle TEXT"),  # JSON list of the idle, available entrants in the order considered
    ("ladder_rounds", "free INTEGER"),  # the most tables it could seat (free slots, the budget)
    ("ladder_rounds", "tables TEXT"),  # JSON list of the tables chosen (seat order), absent ones included
    ("ladder_rounds", "in_flight INTEGER"),  # games in flight when it kept ended tables apart; 0: it did not
)

_HEALTH = """
CREATE TABLE IF NOT EXISTS entrant_health (  -- a ladder entrant's health (store/health.py, docs/bot-health.md)
    name TEXT PRIMARY KEY,         -- the name it plays under (a service bot's version: bot.vN)
    status TEXT NOT NULL,          -- up | down | suspended
    since REAL NOT NULL,           -- unix time of the last change of status
    missed INTEGER NOT NULL DEFAULT 0,  -- games it would have been seated in but was down
    reason TEXT NOT NULL DEFAULT '',
    probes INTEGER NOT NULL DEFAULT 0   -- failed Hello probes since it went down
);
"""

# store/ratings.py: each leaderboard's kept fit (docs/ratings.md)
_RATING_FITS = """
CREATE TABLE IF NOT EXISTS rating_fits (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    entrant TEXT NOT NULL,
    pi REAL NOT NULL,              -- the entrant's marginal: 1 / sigma^2 of the per-entrant fit
    tau REAL NOT NULL,             -- mu / sigma^2
    widen REAL NOT NULL,           -- the joint sigma over the per-entrant one at the last full fit
    PRIMARY KEY (tournament_id, entrant)
);
CREATE TABLE IF NOT EXISTS rating_fit_marks (
    tournament_id TEXT PRIMARY KEY REFERENCES tournaments(id),
    games INTEGER NOT NULL,        -- the games the fit covers: how many,
    slots INTEGER NOT NULL,        -- the sum of their slots,
    squares INTEGER NOT NULL       -- and of their slots squared
);
"""

# store/sessions.py: the site's sign-ins, so that signing out or revoking a token ends them (docs/web.md)
_SITE_SESSIONS = """
CREATE TABLE IF NOT EXISTS site_sessions (
    id_hash TEXT PRIMARY KEY,      -- SHA-256 of the cookie's session id (the id itself is never stored)
    principal TEXT NOT NULL,       -- the author's name, or organiser / organiserN
    organiser INTEGER NOT NULL,
    token_hash TEXT NOT NULL,      -- SHA-256 of the token signed in with: a token no longer known ends it
    created REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS site_sessions_principal ON site_sessions (principal, created);
"""

# the standings a service last showed, kept so that a restart shows them at once (store/standings.py); a store from
# before it keeps them from its first open on (its first build reads every game, as before)
_KEPT_STANDINGS = """
CREATE TABLE IF NOT EXISTS kept_standings (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    shown TEXT NOT NULL,           -- '' for every entrant's rows, else the JSON list of the entrants shown
    games INTEGER NOT NULL,        -- the games they count: how many,
    slots INTEGER NOT NULL,        -- the sum of their slots,
    squares INTEGER NOT NULL,      -- and of their slots squared (as rating_fit_marks)
    body TEXT NOT NULL,            -- the standings as JSON, the pair figures only for pairs that met
    PRIMARY KEY (tournament_id, shown)
);
"""

# the pairing rule that made a ladder choice (referee/tournament/ladder.py, RULES); NULL: one stored before rules
# were numbered, made by the first rule (blocks), so that ``ladder_run.replay`` makes it again as it was made
_RULE = "rule INTEGER"
_AT_ONCE = "games_at_once INTEGER NOT NULL DEFAULT 0"  # asked at submission; 0: each ladder's own
_COMMAND = "command TEXT"  # an uploaded bot's command line (JSON list), run in the sandbox; NULL: a bot at an address
# the ratings' draw probability became 0.01 (referee/rating): every kept fit was of 0.05, so it goes, and each
# leaderboard is fitted again at its first read, off the loop, as in a store from before fits were kept (its kept
# standings, of 0.05, are shown until then, as after any restart); a ladder choice keeps the draw probability of
# the ratings it read (NULL: 0.05), so ``ladder_run.replay`` makes every older choice again as it was made
_DRAW = "DELETE FROM rating_fits;\nDELETE FROM rating_fit_marks;\n"
_CHOICE_DRAW = "draw_probability REAL"

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "tournaments, schedule, games and results", _FIRST),
    Migration(2, "the service's bots and tournament states", _SERVICE),
    Migration(3, "secret deal keys", _DEAL_KEYS),
    Migration(4, "ladders", _LADDER),
    Migration(5, "a tournament's progress from an index", _PROGRESS),
    Migration(6, "void deals", _VOID, _VOID_COLUMNS),
    Migration(7, "ladder choices without rounds", _LADDER_CHOICES, _LADDER_CHOICE_COLUMNS),
    Migration(8, "bot health", _HEALTH),
    Migration(9, "games a service bot asks to play at once", "", (("service_entrants", _AT_ONCE),)),
    Migration(10, "kept rating fits", _RATING_FITS),
    Migration(11, "uploaded bots' commands", "", (("service_entrants", _COMMAND),)),
    Migration(12, "the site's sessions", _SITE_SESSIONS),
    Migration(13, "kept standings", _KEPT_STANDINGS),
    Migration(14, "ladder pairing rules", "", (("ladder_rounds", _RULE),)),
    Migration(15, "ratings of the draw probability 0.01", _DRAW, (("ladder_rounds", _CHOICE_DRAW),)),
)  # fmt: skip
LATEST = MIGRATIONS[-1].number


def version(db: sqlite3.Connection) -> int:
    """The last migration applied to the store behind ``db`` (0: none, or a store from before they were numbered)."""
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def refuse_newer(db: sqlite3.Connection, where: object) -> None:
    """Raise StoreTooNew, naming ``where``, when the store was written by newer code; it reads, never writes."""
    found = version(db)
    if found > LATEST:
        raise StoreTooNew(
            f"{where}: the store is at schema version {found}, newer than this abluxx knows ({LATEST}): "
            "upgrade abluxx to open it (the store was left as it is)"
        )


def migrate(db: sqlite3.Connection, where: object) -> list[int]:
    """Apply the pending migrations to ``db`` (a connection in autocommit mode) in one transaction; return their
    numbers. Another process may be migrating the same store: the version is read again under the write lock."""
    refuse_newer(db, where)
    if version(db) == LATEST:
        return []
    db.execute("BEGIN IMMEDIATE")
    try:
        refuse_newer(db, where)
        done = [_apply(db, m) for m in MIGRATIONS if m.number > version(db)]
        db.execute(f"PRAGMA user_version = {LATEST}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return done


def _apply(db: sqlite3.Connection, m: Migration) -> int:
    for statement in statements(m.sql):
        db.execute(statement)
    for table, column in m.columns:
        if column.split()[0] not in {r[1] for r in db.execute(f"PRAGMA table_info({table})")}:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
    db.execute("INSERT OR REPLACE INTO schema_migrations VALUES (?, ?, ?)", (m.number, m.name, time.time()))
    return m.number


def statements(sql: str) -> list[str]:
    """``sql`` cut into its statements (``executescript`` would commit the transaction they belong in)."""
    out: list[str] = []
    pending = ""
    for line in sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            out.append(pending.strip())
            pending = ""
    if pending.strip():
        out.append(pending.strip())
    return out
