"""Void deals: a deal seen is a deal spent (docs/tournaments.md, "Interrupted games").

A game's slot is marked started (``SqliteStore.mark_started``) before its bots are dealt anything. A slot that was
started and is not done was interrupted (the referee was killed, its worker died, a drain abandoned it): its bots
may have seen part of the deal, and anyone may have read the finished games of its duplicate set. Playing the
deal again would hand them cards they already know, so the whole set is dealt again with a fresh deck (the
tournament layer derives it from the deal key with the next attempt number). In one transaction ``redeal``
moves the set's games to ``void_games``, where they stay for organisers to see but out of the results, the
ratings and the standings, and gives the set's slots their new deck, attempt and game ids.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from .sqlite import Slot, SqliteStore


@dataclass(frozen=True)
class VoidGame:
    game_id: str
    slot: int
    attempt: int
    finished: bool  # played to its end before its deal was void (else interrupted)
    seats: list[str]
    result: dict[str, Any] | None  # end_reason, decisions, scores, places, record (finished games)
    voided_at: float


def interrupted_sets(store: SqliteStore, tid: str) -> list[tuple[int, int]]:
    """The duplicate sets (table, deal) of ``tid`` with a game that began and was not stored."""
    q = "SELECT DISTINCT table_no, deal FROM schedule WHERE tournament_id = ? AND started = 1 AND done = 0"
    return sorted((r[0], r[1]) for r in store.db.execute(q, (tid,)))


def _finished_result(store: SqliteStore, game_id: str) -> dict[str, Any]:
    q = "SELECT end_reason, decisions, record_path FROM games WHERE game_id = ?"
    g = store.db.execute(q, (game_id,)).fetchone()
    seats = store.db.execute("SELECT score, place FROM results WHERE game_id = ? ORDER BY seat", (game_id,)).fetchall()
    return {"end_reason": g[0], "decisions": g[1], "record": g[2],
            "scores": [r[0] for r in seats], "places": [r[1] for r in seats]}  # fmt: skip


def redeal(store: SqliteStore, tid: str, slots: list[Slot]) -> list[VoidGame]:
    """Deal the sets of ``slots`` again: each is a slot of the schedule (by number) with its new deck seed, game id
    and attempt. Their sets' stored games and begun games become void; the slots are pending and unstarted again.
    Returns the games made void."""
    now = time.time()
    void: list[VoidGame] = []
    with store._tx():
        for new in slots:
            row = store.db.execute(
                "SELECT game_id, attempt, seats, started, done FROM schedule WHERE tournament_id = ? AND slot = ?",
                (tid, new.slot),
            ).fetchone()
            old_id, attempt, seats, started, done = row
            if started or done:
                result = _finished_result(store, old_id) if done else None
                void.append(VoidGame(old_id, new.slot, attempt, bool(done), json.loads(seats), result, now))
                store.db.execute(
                    "INSERT INTO void_games VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (old_id, tid, new.slot, attempt, int(done), seats, json.dumps(result) if result else None, now),
                )
                store.db.execute("DELETE FROM results WHERE game_id = ?", (old_id,))
                store.db.execute("DELETE FROM games WHERE game_id = ?", (old_id,))
            store.db.execute(
                "UPDATE schedule SET game_id = ?, deck_seed = ?, attempt = ?, started = 0, done = 0"
                " WHERE tournament_id = ? AND slot = ?",
                (new.game_id, new.deck_seed, new.attempt, tid, new.slot),
            )
    return void


def void_games(store: SqliteStore, tid: str) -> list[VoidGame]:
    """The void games of ``tid``, in the order they were made void, then by slot."""
    q = ("SELECT game_id, slot, attempt, finished, seats, result, voided_at FROM void_games WHERE tournament_id = ?"
         " ORDER BY voided_at, slot, attempt")  # fmt: skip
    return [VoidGame(r[0], r[1], r[2], bool(r[3]), json.loads(r[4]), json.loads(r[5]) if r[5] else None, r[6])
            for r in store.db.execute(q, (tid,))]  # fmt: skip
