"""The tournament layer with an in-process player (no gRPC): ordering, the store's transaction, standings."""

import asyncio
import functools
import json
from pathlib import Path

import pytest

from referee.engine import EndReason
from referee.match.spec import GameResult, SeatStats
from referee.store import StoreError, open_store
from referee.tournament import schedule
from referee.tournament.config import load
from referee.tournament.runner import TournamentError, run_tournament

from .helpers import config_text, in_process_player

NAMES = ["rnd", "greedy", "counter", "greedy2"]


def run(tmp_path: Path, data: str, concurrency: int, jitter: int | None = None, **top: object):
    cfg_path = tmp_path / "c.toml"
    # rotations unless a test asks otherwise: the counts below are 4 tables x 2 deals x 3 rotations
    settings = {"name": "unit", "seed": 3, "table_size": 3, "deals": 2, "seat_orders": "rotations", **top}
    cfg_path.write_text(config_text(NAMES, **settings))
    cfg = load(cfg_path)
    store = open_store(tmp_path / data)
    player = functools.partial(in_process_player, jitter_seed=jitter)
    out = asyncio.run(run_tournament(cfg, store, player, concurrency=concurrency, progress=False))
    return cfg, store, out


@pytest.mark.parametrize(
    "top,games",
    [({}, 4 * 3 * 2), ({"seat_orders": "across", "table_size": 2, "deals": 4}, 6 * 4)],  # 6 tables, 3 sections
    ids=["rotations", "across"],
)
def test_ratings_are_identical_at_concurrency_1_and_8(tmp_path: Path, top: dict, games: int) -> None:
    # public deals: two data folders play the same decks (with secret keys each would deal its own)
    _, store1, one = run(tmp_path, "d1", 1, public_deals=True, **top)
    _, store8, eight = run(tmp_path, "d8", 8, jitter=1, public_deals=True, **top)
    # the games really finished in another order at concurrency 8 ...
    order1 = [g.game_id for g in sorted(store1.games(one.tournament_id), key=lambda g: g.finished_at)]
    order8 = [g.game_id for g in sorted(store8.games(eight.tournament_id), key=lambda g: g.finished_at)]
    assert order1 != order8
    # ... and the ratings are bit-identical
    assert [(r.entrant, r.mu, r.sigma) for r in one.standings.rows] == [
        (r.entrant, r.mu, r.sigma) for r in eight.standings.rows
    ]
    assert one.standings.games == games


def test_a_finished_run_is_kept_and_standings_files_are_written(tmp_path: Path) -> None:
    cfg, store, out = run(tmp_path, "d", 4)
    assert out.played == 24
    again = asyncio.run(run_tournament(cfg, store, in_process_player, progress=False))
    assert again.played == 0  # nothing replayed, nothing counted twice
    assert len(store.games(cfg.tournament_id)) == 24
    data = json.loads(out.json_path.read_text())
    assert [r["entrant"] for r in data["standings"]] == [r.entrant for r in out.standings.rows]
    assert out.csv_path.read_text().splitlines()[0].startswith("rank,entrant,mu,sigma,mu_minus_3sigma")
    assert store.tournament(cfg.tournament_id).finished_at is not None


def test_standings_add_up(tmp_path: Path) -> None:
    _, _, out = run(tmp_path, "d", 4)
    s = out.standings
    assert sum(r.games for r in s.rows) == 24 * 3
    # duplicate-adjusted scores are relative to each seat's par: over complete duplicate sets they sum to zero
    assert abs(sum(r.dup_avg_score * r.games for r in s.rows)) < 1e-9
    # the leaderboard is ordered by mu - 3 sigma
    assert [r.conservative for r in s.rows] == sorted((r.conservative for r in s.rows), reverse=True)
    # head to head is antisymmetric
    for a in s.head_to_head:
        for b, h in s.head_to_head[a].items():
            assert h["wins"] == s.head_to_head[b][a]["losses"] and h["ties"] == s.head_to_head[b][a]["ties"]
    assert "head to head" in s.table()


def test_a_game_commits_once_or_not_at_all(tmp_path: Path) -> None:
    cfg, store, _ = run(tmp_path, "d", 2)
    tid = cfg.tournament_id
    slot, g = store.slots(tid)[0], store.games(tid)[0]
    counts = lambda: [store.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("games", "results")]  # noqa: E731
    before = counts()
    again = GameResult(slot.game_id, tuple(s.score for s in g.seats), g.places, EndReason.EMPTY_HAND,
                       [SeatStats()] * 3, 1, "", None)  # fmt: skip
    with pytest.raises(StoreError, match="refusing to count it twice"):
        store.save_game(tid, slot, again)
    assert counts() == before
    # a result that breaks half-way through the transaction leaves the slot pending and stores nothing of it
    store.db.execute("DELETE FROM results WHERE game_id = ?", (slot.game_id,))
    store.db.execute("DELETE FROM games WHERE game_id = ?", (slot.game_id,))
    store.db.execute("UPDATE schedule SET done = 0 WHERE game_id = ?", (slot.game_id,))
    broken = GameResult(slot.game_id, again.scores, again.places, EndReason.EMPTY_HAND, [SeatStats()] * 2, 1, "", None)
    with pytest.raises(ValueError):
        store.save_game(tid, slot, broken)
    assert [s.game_id for s in store.slots(tid, pending_only=True)] == [slot.game_id]
    assert store.db.execute("SELECT COUNT(*) FROM games WHERE game_id = ?", (slot.game_id,)).fetchone()[0] == 0
    store.save_game(tid, slot, again)
    assert counts() == before


def test_schedule_in_store_matches_the_pure_schedule(tmp_path: Path) -> None:
    cfg, store, _ = run(tmp_path, "d", 2)
    assert store.slots(cfg.tournament_id) == schedule.build(cfg, store.deal_key(cfg.tournament_id))


def test_a_second_run_of_a_tournament_being_played_is_refused(tmp_path: Path) -> None:
    # two runs at once would play the same pending games, write the same record files and count them twice
    cfg_path = tmp_path / "c.toml"
    cfg_path.write_text(config_text(NAMES, name="twice", seed=3, table_size=3, deals=2))
    cfg = load(cfg_path)
    first, second = open_store(tmp_path / "d"), open_store(tmp_path / "d")
    player = functools.partial(in_process_player, jitter_seed=1)

    async def both() -> None:
        running = asyncio.create_task(run_tournament(cfg, first, player, concurrency=2, progress=False))
        while first.tournament(cfg.tournament_id) is None or not first.slots(cfg.tournament_id, pending_only=True):
            assert not running.done()
            await asyncio.sleep(0.001)
        with pytest.raises(TournamentError, match="being played by another run"):
            await run_tournament(cfg, second, player, concurrency=2, progress=False)
        out = await running
        assert out.standings.games == len(schedule.build(cfg, first.deal_key(cfg.tournament_id)))

    asyncio.run(both())
