"""A ladder's own rows in the store: its entrants (who joined at which choice, who left), its choices, the
results in the order it saw them, and its deal sets.

A ladder is a tournament (the ``tournaments`` row, its deal key, ``schedule`` and ``games``) whose schedule grows a
choice at a time: ``add_choice`` stores a choice's slots, its ``ladder_rounds`` row (what it was chosen from: the
results seen, the idle entrants in the order considered, the free slots) and its deal sets in one transaction, so
a resume finds every choice that was made, plays it as it was chosen, and never chooses it again; and
``tournament/ladder_run.py``'s ``replay`` recomputes every stored choice from these rows. (The table keeps its
old name: a ladder stored before continuous choices has one row per round, without the what-from columns.)
These functions are how anything above the store (the ladder runner, the service, a web site) reads and changes
a ladder's state.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace

from .sqlite import Slot, SqliteStore, StoreError


@dataclass(frozen=True)
class LadderEntrant:
    name: str
    owner: str
    bot: str
    version: int = 1
    joined_round: int = 0  # the first choice it may be seated in
    left_round: int | None = None  # the first choice it is no longer seated in
    address: str | None = None
    policy: str | None = None
    command: tuple[str, ...] | None = None
    games_at_once: int = 1  # games it may play at a time

    def present(self, choice: int) -> bool:
        """Seated (or seatable) in choice ``choice``."""
        return self.joined_round <= choice and (self.left_round is None or choice < self.left_round)


@dataclass(frozen=True)
class RoundRow:
    """A stored choice (a round, in ladders stored before choices: then the what-from fields are None)."""

    round: int
    first_slot: int
    games: int
    chosen_at: float
    results_seen: int | None = None
    idle: tuple[str, ...] | None = None
    free: int | None = None
    tables: tuple[tuple[str, ...], ...] | None = None
    in_flight: int | None = None
    rule: int | None = None  # the pairing rule that made it (``tournament.ladder.RULES``); None: stored before rules
    # the draw probability of the ratings it was chosen from; None: stored before it was kept (then 0.05,
    # ``rating.DRAW_PROBABILITY_BEFORE``)
    draw_probability: float | None = None


@dataclass(frozen=True)
class ResultRow:
    seq: int
    slot: int
    seats: tuple[str, ...]
    places: tuple[int, ...]


def _db(store: SqliteStore) -> sqlite3.Connection:
    """The store's connection: its ladder tables are made by the numbered migrations (store/migrations.py 4, 7)."""
    return store.db


_COLUMNS = "name, owner, bot, version, joined_round, left_round, address, policy, command, games_at_once"


def entrants(store: SqliteStore, tid: str) -> list[LadderEntrant]:
    """Every entrant the ladder ever had (every version), in the order they joined."""
    q = f"SELECT {_COLUMNS} FROM ladder_entrants WHERE tournament_id = ? ORDER BY joined_round, rowid"
    return [
        LadderEntrant(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], tuple(json.loads(r[8])) if r[8] else None, r[9])
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
            f"INSERT OR IGNORE INTO ladder_entrants (tournament_id, {_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [(tid, e.name, e.owner, e.bot, e.version, e.joined_round, e.left_round, e.address, e.policy,
              json.dumps(list(e.command)) if e.command else None, e.games_at_once) for e in new],
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
            f"INSERT OR IGNORE INTO ladder_entrants (tournament_id, {_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (tid, e.name, e.owner, e.bot, e.version, e.joined_round, None, e.address, e.policy, None, e.games_at_once),
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
    """A round of a ladder stored before choices, or a test's: its slots and its row, nothing of what it was
    chosen from (``add_choice``)."""
    add_choice(store, tid, Choice(round_no, slots))


@dataclass(frozen=True)
class Choice:
    """A choice to store: its number, its slots, what it was chosen from, and its deal sets' changes (sets opened:
    (deal, deck seed); sets closed, full)."""

    number: int
    slots: list[Slot]
    results_seen: int | None = None
    idle: tuple[str, ...] | None = None
    free: int | None = None
    tables: tuple[tuple[str, ...], ...] | None = None
    opened: tuple[tuple[int, int], ...] = ()
    closed: tuple[int, ...] = ()
    in_flight: int | None = None
    rule: int | None = None
    draw_probability: float | None = None  # of the ratings it was chosen from


def add_choice(store: SqliteStore, tid: str, c: Choice) -> None:
    """A choice: its slots, its row and its deal sets, in one transaction. Refused unless it is the next choice and
    its slots follow the schedule's last one, so no choice is stored twice."""
    db = _db(store)
    with store._tx():
        if next_round(store, tid) != c.number:
            raise StoreError(f"choice {c.number} of ladder {tid} is not its next one: refusing to store it twice")
        first = next_slot(store, tid)
        if c.slots and c.slots[0].slot != first:
            raise StoreError(f"choice {c.number} of ladder {tid} starts at slot {c.slots[0].slot}, not {first}")
        store.insert_slots(tid, c.slots)
        db.execute(
            "INSERT INTO ladder_rounds (tournament_id, round, first_slot, games, chosen_at, results_seen, idle, free,"
            " tables, in_flight, rule, draw_probability) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (tid, c.number, first, len(c.slots), time.time(), c.results_seen,
             None if c.idle is None else json.dumps(c.idle), c.free,
             None if c.tables is None else json.dumps(c.tables), c.in_flight, c.rule, c.draw_probability),
        )  # fmt: skip
        db.executemany("INSERT INTO ladder_deals VALUES (?, ?, ?, 0)", [(tid, d, seed) for d, seed in c.opened])
        db.executemany("UPDATE ladder_deals SET closed = 1 WHERE tournament_id = ? AND deal = ?",
                       [(tid, d) for d in c.closed])  # fmt: skip


def next_slot(store: SqliteStore, tid: str) -> int:
    """The number the ladder's next slot takes (slots of absent tables are gone: numbers are never reused)."""
    row = _db(store).execute("SELECT MAX(slot) FROM schedule WHERE tournament_id = ?", (tid,)).fetchone()
    return 0 if row[0] is None else row[0] + 1


def rounds(store: SqliteStore, tid: str) -> list[RoundRow]:
    """The ladder's choices (or rounds) so far, in order."""
    q = ("SELECT round, first_slot, games, chosen_at, results_seen, idle, free, tables, in_flight, rule,"
         " draw_probability FROM ladder_rounds WHERE tournament_id = ? ORDER BY round")  # fmt: skip
    return [
        RoundRow(r[0], r[1], r[2], r[3], r[4], None if r[5] is None else tuple(json.loads(r[5])), r[6],
                 None if r[7] is None else tuple(tuple(t) for t in json.loads(r[7])), r[8], r[9], r[10])
        for r in _db(store).execute(q, (tid,))
    ]  # fmt: skip


def add_result(store: SqliteStore, tid: str, r: ResultRow) -> None:
    """A result as the ladder saw it, after the game's own commit (``load_results`` mends a kill in between)."""
    _db(store).execute("INSERT OR IGNORE INTO ladder_results VALUES (?, ?, ?, ?, ?)",
                       (tid, r.seq, r.slot, json.dumps(r.seats), json.dumps(r.places)))  # fmt: skip


def results(store: SqliteStore, tid: str) -> list[ResultRow]:
    """The results in the order the ladder saw them. A game committed and not yet logged (the referee was killed
    between the two) is logged now, in the order the games finished: no choice can have seen it."""
    db = _db(store)
    q = "SELECT seq, slot, seats, places FROM ladder_results WHERE tournament_id = ? ORDER BY seq"
    seen = [ResultRow(r[0], r[1], tuple(json.loads(r[2])), tuple(json.loads(r[3]))) for r in db.execute(q, (tid,))]
    logged = {r.slot for r in seen}
    for g in store.games(tid):
        if g.slot not in logged:
            seen.append(ResultRow(len(seen), g.slot, g.names, g.places))
            add_result(store, tid, seen[-1])
    return seen


def close_deals(store: SqliteStore, tid: str, deal: int | None = None) -> None:
    """No more tables join deal set ``deal`` (None: every set of the ladder, as a resume does)."""
    q = "UPDATE ladder_deals SET closed = 1 WHERE tournament_id = ?"
    _db(store).execute(q if deal is None else q + " AND deal = ?", (tid,) if deal is None else (tid, deal))


def drop_absent(store: SqliteStore, tid: str, slot: int) -> None:
    """The slot of a table that did not play because a seat's bot could not be reached at its start (no bot was
    sent anything of its deal): it leaves the schedule; its choice's row still names the table."""
    _db(store).execute("DELETE FROM schedule WHERE tournament_id = ? AND slot = ? AND done = 0", (tid, slot))


def latest_versions(all_entrants: Iterable[LadderEntrant]) -> set[str]:
    """The names of each bot's latest version (per owner and bot): what a ladder's standings show by default."""
    latest: dict[tuple[str, str], LadderEntrant] = {}
    for e in all_entrants:
        key = (e.owner, e.bot)
        if key not in latest or e.version > latest[key].version:
            latest[key] = e
    return {e.name for e in latest.values()}
