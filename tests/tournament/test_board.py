"""The board every surface shows (tournament/board.py), over a real store and real games: head to head leaves out
the pairs that can never meet and keeps those that can; a round robin's games are compared with its schedule."""

from __future__ import annotations

import asyncio
from pathlib import Path

from referee.store import SqliteStore
from referee.store import health as health_store
from referee.tournament.board import board
from referee.tournament.config import parse
from referee.tournament.runner import run_tournament

from .helpers import in_process_player

ENTRANTS = [
    {"name": "a1", "policy": "greedy", "owner": "ann"},
    {"name": "a2", "policy": "random", "owner": "ann"},
    {"name": "b", "policy": "counter"},
    {"name": "c", "policy": "random"},
]


def played(tmp_path: Path, seat_orders: str) -> tuple[SqliteStore, str]:
    config = parse({"name": seat_orders, "table_size": 2, "seat_orders": seat_orders, "entrants": ENTRANTS}, "t")
    store = SqliteStore(tmp_path / seat_orders)
    asyncio.run(run_tournament(config, store, in_process_player, progress=False))
    return store, config.tournament_id


def test_one_owners_entrants_are_no_pair_of_head_to_head_when_they_can_never_meet(tmp_path: Path) -> None:
    store, tid = played(tmp_path, "across")
    b = board(store, tid)
    assert "a2" not in b.head_to_head["a1"] and "a1" not in b.score_diff["a2"]
    assert set(b.head_to_head["a1"]) == {"b", "c"} and set(b.head_to_head["b"]) == {"a1", "a2", "c"}
    assert b.games == b.scheduled == store.tournament(tid).games and b.played() == f"{b.games}/{b.games} games"


def test_with_rotations_they_meet_and_stay_a_pair(tmp_path: Path) -> None:
    store, tid = played(tmp_path, "rotations")
    b = board(store, tid)
    assert sum(b.head_to_head["a1"]["a2"].values()) > 0  # they shared tables: their record is shown


def test_a_down_entrant_is_marked_in_the_table(tmp_path: Path) -> None:
    store, tid = played(tmp_path, "across")
    health_store.set_status(store, "b", "down", "no connection", 1.0)
    b = board(store, tid)
    assert {r.entrant: r.health for r in b.rows} == {"a1": "up", "a2": "up", "b": "down", "c": "up"}
    assert "[down]" in next(line for line in b.table().splitlines() if " b " in line)
