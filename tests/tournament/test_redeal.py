"""What becomes of a game whose worker died, after the pool voided it (tournament/redeal.py, store/void.py, the
rounds of runner.play_slots), in this process on a real SQLite store (mutation testing sees only in-process calls;
scripts/mutation.py): its duplicate set is dealt again with a fresh deck and new game ids, the set's games so far
are void (kept apart, out of the results), an unfinished game's partial record is deleted, a set dealt again twice
gets the next attempt, and a run stops after 1 + MAX_REDEALS rounds that lost games. The games are played by the
match runner in this process; a game "loses its worker" as the pool reports it (GameLost). The same with real
worker processes killed by a real bot is test_worker_replay.py."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from referee.cli import main
from referee.engine import EndReason
from referee.errors import GameLost
from referee.fleet import match_player
from referee.log import configure
from referee.match.spec import GameResult, GameSpec, SeatStats
from referee.records.paths import record_in
from referee.store import SqliteStore, open_store
from referee.store.void import VoidGame, interrupted_sets, void_games
from referee.tournament import deals, schedule
from referee.tournament.config import parse
from referee.tournament.progress import Progress
from referee.tournament.redeal import redeal_interrupted
from referee.tournament.runner import MAX_REDEALS, GameHooks, TournamentError, _only_run, create_tournament, play_slots

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


def test_an_interrupted_set_is_dealt_again_with_a_fresh_deck_and_its_games_are_void(tmp_path: Path, capsys) -> None:
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
        assert void_games(store, tid) == void  # as stored: the finished one with its result, when it was made void
        assert [g.game_id for g in void] == [before[0].game_id, before[1].game_id]
        assert main(["games", tid, "--data", str(tmp_path / "d")]) == 0
        shown = [ln.split(None, 2)[2] for ln in capsys.readouterr().out.splitlines() if "VOID" in ln]
        finished = f"VOID (finished [3, 1]; its deal was dealt again)  records/{before[0].game_id}.abluxx"
        assert shown == ["VOID (interrupted; its deal was dealt again)  -", finished]  # latest first, as every list
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


class _Hooks(GameHooks):
    def __init__(self) -> None:
        self.redeals: list[list[str]] = []

    def on_redeal(self, void: list[VoidGame]) -> None:
        self.redeals.append([g.game_id for g in void])


@contextlib.asynccontextmanager
async def _losing(records: Path, lose: set[int] | None) -> AsyncIterator:
    """The in-process match player, whose games number ``lose`` (from 1; None: all) lose their worker, as the pool
    reports a worker that died mid-game (GameLost)."""
    async with match_player(records) as play:
        calls: list[str] = []

        async def losing(spec: GameSpec, **options) -> GameResult:
            calls.append(spec.game_id)
            if lose is None or len(calls) in lose:
                raise GameLost(f"game {spec.game_id} lost its worker: test")
            return await play(spec, **options)

        losing.calls = calls  # type: ignore[attr-defined]
        yield losing


def _rounds(tmp_path: Path, lose: set[int] | None, hooks: GameHooks, progress: Progress | None = None,
            deals: int = 1):  # fmt: skip
    cfg = parse({"name": "rounds", "entrants": [{"name": "r", "policy": "random"}, {"name": "g", "policy": "greedy"}],
                 "table_size": 2, "deals": deals, "seed": 4, "seat_orders": "rotations"}, "t.toml")  # fmt: skip
    store = open_store(tmp_path / "d")
    first = create_tournament(store, cfg, "t.toml")

    async def run():
        async with _losing(store.records, lose) as play:
            try:
                return await play_slots(store, cfg, play, {}, 1, progress, hooks), play.calls
            except TournamentError as e:
                return e, play.calls

    outcome, calls = asyncio.run(run())
    return cfg, store, first, outcome, calls


def test_a_round_that_lost_a_game_plays_its_set_again_dealt_afresh(tmp_path: Path) -> None:
    """The first game lost: the other game of its set waits (it is not played on the spent deal), the next round
    deals the set again, both games are played and stored once, and the run reports 2 games played."""
    hooks = _Hooks()
    out, log = io.StringIO(), io.StringIO()
    configure("warning", json=False)  # the progress lines as text on its stream, not as log lines
    progress = Progress(2, stream=out, games_log=log)
    cfg, store, first, outcome, calls = _rounds(tmp_path, {1}, hooks, progress)
    with store:
        games = store.games(cfg.tournament_id)
        assert isinstance(outcome, tuple) and outcome[0] == 2, outcome
        assert calls == [first[0].game_id, *(schedule.game_id(cfg.tournament_id, 0, 0, o, 1) for o in (0, 1))]
        assert hooks.redeals == [[first[0].game_id]]
        assert [g.game_id for g in games] == calls[1:]
    assert out.getvalue().splitlines()[-1].startswith("2/2 games")
    assert [line.split(":")[0] for line in log.getvalue().splitlines()] == [f"finished game {n}/2 {calls[n]}"
                                                                          for n in (1, 2)]  # fmt: skip


def test_a_run_counts_the_games_of_every_round_it_played(tmp_path: Path) -> None:
    """Two sets; the first game of the second is lost after the first set was played: the first round stored 2
    games, the second round plays the second set dealt again, and the run reports all 4 it played."""
    cfg, store, first, outcome, calls = _rounds(tmp_path, {3}, _Hooks(), deals=2)
    with store:
        assert [g.game_id for g in store.games(cfg.tournament_id)] == [first[0].game_id, first[1].game_id, *calls[3:]]
    assert len(calls) == 5 and calls[2] == first[2].game_id
    assert isinstance(outcome, tuple) and outcome[0] == 4, outcome


def test_a_run_whose_games_lose_their_worker_every_round_stops_after_one_plus_max_redeals(tmp_path: Path) -> None:
    hooks = _Hooks()
    cfg, store, _, outcome, calls = _rounds(tmp_path, None, hooks)
    with store:
        assert store.games(cfg.tournament_id) == []
    assert isinstance(outcome, TournamentError)
    rounds = MAX_REDEALS + 1
    assert str(outcome) == f"games of {cfg.tournament_id} lost their worker in {rounds} rounds; the run stopped"
    assert len(calls) == MAX_REDEALS + 1 and len(set(calls)) == len(calls)  # one game a round, each on a new deal
    assert len(hooks.redeals) == MAX_REDEALS


def test_a_tournament_being_played_is_not_played_by_a_second_run(tmp_path: Path) -> None:
    cfg = parse({"name": "locked", "entrants": [{"name": "r", "policy": "random"}, {"name": "g", "policy": "greedy"}],
                 "table_size": 2, "deals": 1, "seed": 4}, "t.toml")  # fmt: skip
    with open_store(tmp_path / "d") as store:
        create_tournament(store, cfg, "t.toml")
        with _only_run(store, cfg.tournament_id), pytest.raises(TournamentError, match="being played by another"):
            asyncio.run(play_slots(store, cfg, lambda spec: pytest.fail("played"), {}, 1))


def test_a_void_finished_game_keeps_its_whole_result_seat_by_seat(tmp_path: Path) -> None:
    """What organisers see of a finished game whose deal was dealt again: how it ended, its decisions, its record
    and each seat's score and place, in seat order."""
    cfg, store = _store(tmp_path)
    tid = cfg.tournament_id
    with store:
        before = store.slots(tid)
        s = before[1]
        store.mark_started(tid, 1)
        record = record_in(store.records, s.game_id)
        record.write_bytes(b"a finished game")
        result = GameResult(s.game_id, (2, 7), (2, 1), EndReason.EXHAUSTED, [SeatStats(), SeatStats()], 31, "", record)
        store.save_game(tid, s, result)
        _interrupt(store, tid, 0)
        (lost, finished) = redeal_interrupted(store, cfg)
        assert (lost.game_id, lost.finished, lost.result) == (before[0].game_id, False, None)
        assert (finished.game_id, finished.slot, finished.finished) == (s.game_id, 1, True)
        record_path = f"records/{s.game_id}.abluxx"
        assert finished.result == {"end_reason": EndReason.EXHAUSTED.value, "decisions": 31, "record": record_path,
                                   "scores": [2, 7], "places": [2, 1]}  # fmt: skip
        assert void_games(store, tid) == [lost, finished]
