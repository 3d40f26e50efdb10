"""What becomes of a game whose worker died, after the pool voided it (tournament/redeal.py, store/void.py), in this
process on a real SQLite store (mutation testing sees only in-process calls; scripts/mutation.py): its duplicate
set is dealt again with a fresh deck and new game ids, the set's games so far are void (kept apart, out of the
results), an unfinished game's partial record is deleted, and a set dealt again twice gets the next attempt."""

from __future__ import annotations

import io
import json
from pathlib import Path

from referee.engine import EndReason
from referee.log import configure
from referee.match.spec import GameResult, SeatStats
from referee.records.paths import record_in
from referee.store import SqliteStore, open_store
from referee.store.void import interrupted_sets, void_games
from referee.tournament import deals, schedule
from referee.tournament.config import parse
from referee.tournament.redeal import redeal_interrupted

KEY = bytes(range(32))


def _store(tmp_path: Path, public: bool = False):
    cfg = parse({"name": "rd", "entrants": [{"name": n, "policy": "random"} for n in ("a", "b")], "table_size": 2,
                 "deals": 2, "seed": 9, "seat_orders": "rotations", "public_deals": public}, "t.toml")  # fmt: skip
    slots = schedule.build(cfg, None if public else KEY)
    store = open_store(tmp_path / "d")
    store.create_tournament(cfg, slots, "t.toml", None if public else KEY)
    return cfg, store


def _finish(store: SqliteStore, tid: str, slot: int) -> None:
    s = store.slots(tid)[slot]
    store.mark_started(tid, slot)
    record = record_in(store.records, s.game_id)
    record.write_bytes(b"a finished game")
    result = GameResult(s.game_id, (3, 1), (1, 2), EndReason.EMPTY_HAND, [SeatStats(), SeatStats()], 10, "", record)
    store.save_game(tid, s, result)


def _interrupt(store: SqliteStore, tid: str, slot: int) -> Path:
    """The game of ``slot`` began and its worker died: marked started, a partial record, nothing stored."""
    store.mark_started(tid, slot)
    partial = record_in(store.records, store.slots(tid)[slot].game_id)
    partial.write_bytes(b"part of a game")
    return partial


def test_an_interrupted_set_is_dealt_again_with_a_fresh_deck_and_its_games_are_void(tmp_path: Path) -> None:
    cfg, store = _store(tmp_path)
    tid = cfg.tournament_id
    with store:
        before = store.slots(tid)
        assert [s.duplicate_set for s in before] == [(0, 0), (0, 0), (0, 1), (0, 1)]
        _finish(store, tid, 0)
        partial = _interrupt(store, tid, 1)  # set (0, 0): one game finished, one lost with its worker
        _finish(store, tid, 2)  # set (0, 1): one game finished, one not begun: not interrupted
        finished_record = record_in(store.records, before[0].game_id)
        assert interrupted_sets(store, tid) == [(0, 0)]
        out = io.StringIO()
        configure("info", json=True, stream=out)
        try:
            void = redeal_interrupted(store, cfg)
        finally:
            configure("warning")
        assert [(g.game_id, g.slot, g.attempt, g.finished) for g in void] == [
            (before[0].game_id, 0, 0, True), (before[1].game_id, 1, 0, False)]  # fmt: skip
        assert void[0].seats == list(before[0].seats) and void[0].result is not None
        assert void[0].result["scores"] == [3, 1] and void[1].result is None
        after = store.slots(tid)
        for s in after[:2]:
            assert s.attempt == 1 and s.game_id == schedule.game_id(tid, s.table, s.deal, s.order, 1)
            assert s.deck_seed == deals.deck_seed(KEY, tid, 0, 0, 1) != before[0].deck_seed
            assert s.seats == before[s.slot].seats
        assert after[2:] == before[2:]  # the other set keeps its deck and its finished game
        assert [s.slot for s in store.slots(tid, pending_only=True)] == [0, 1, 3]
        assert [g.slot for g in store.games(tid)] == [2]
        assert [g.game_id for g in void_games(store, tid)] == [before[0].game_id, before[1].game_id]
        assert not partial.exists() and finished_record.exists()  # a finished void game's record stays to be seen
        assert interrupted_sets(store, tid) == []
        (line,) = [json.loads(x) for x in out.getvalue().splitlines()]
        assert line["event"] == "interrupted deals dealt again with fresh decks; their games are void"
        assert line["tournament"] == tid and line["sets"] == [[0, 0]] and line["level"] == "warning"
        assert line["void_games"] == [before[0].game_id, before[1].game_id]

        # lost again: the next attempt, another fresh deck; nothing interrupted: nothing changes
        _interrupt(store, tid, 0)
        again = redeal_interrupted(store, cfg)
        assert [(g.game_id, g.attempt, g.finished) for g in again] == [(after[0].game_id, 1, False)]
        twice = store.slots(tid)
        assert [s.attempt for s in twice] == [2, 2, 0, 0]
        assert {s.deck_seed for s in twice[:2]} == {deals.deck_seed(KEY, tid, 0, 0, 2)}
        assert twice[1].game_id == schedule.game_id(tid, 0, 0, 1, 2)
        assert redeal_interrupted(store, cfg) == [] and store.slots(tid) == twice


def test_public_deals_are_dealt_again_from_the_seed(tmp_path: Path) -> None:
    cfg, store = _store(tmp_path, public=True)
    tid = cfg.tournament_id
    with store:
        _interrupt(store, tid, 3)
        void = redeal_interrupted(store, cfg)
        assert [(g.slot, g.finished) for g in void] == [(3, False)]
        s = store.slots(tid)
        assert [x.attempt for x in s] == [0, 0, 1, 1]
        assert {x.deck_seed for x in s[2:]} == {deals.deck_seed(deals.PublicDeals(cfg.seed), tid, 0, 1, 1)}
