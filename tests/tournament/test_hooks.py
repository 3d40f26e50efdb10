"""play_slots' hooks, the way the service uses them: games announced as they start and end, a stop that lets the
games in flight finish, a resume that plays only the rest, and each decision as it is made."""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from referee.fleet import match_player
from referee.match.spec import GameResult, GameSpec
from referee.store import SqliteStore, open_store
from referee.tournament import schedule
from referee.tournament.config import TournamentConfig, load
from referee.tournament.runner import GameHooks, TournamentError, create_tournament, play_slots, run_tournament
from referee.tournament.schedule import Slot

from .helpers import config_text, in_process_player

NAMES = ["rnd", "greedy", "counter", "greedy2"]


def setup(tmp_path: Path, data: str = "d") -> tuple[TournamentConfig, SqliteStore]:
    cfg_path = tmp_path / "c.toml"
    cfg_path.write_text(config_text(NAMES, name="hooks", seed=5, table_size=3, deals=2, seat_orders="rotations"))
    cfg = load(cfg_path)
    store = open_store(tmp_path / data)
    create_tournament(store, cfg, "test")
    return cfg, store


class Recorder(GameHooks):
    """Keeps what the hooks were told; stops taking games after ``stop_after`` have started."""

    def __init__(self, store: SqliteStore, tid: str, stop_after: int | None = None) -> None:
        self.store, self.tid, self.stop_after = store, tid, stop_after
        self.started: list[str] = []
        self.done: dict[str, GameResult | None] = {}
        self.stored_when_done: dict[str, bool] = {}
        self.in_flight = 0
        self.most_in_flight = 0
        self.deals_in_flight: list[tuple[int, int]] = []
        self.one_deal_twice_at_once = False  # with rotations, two games of one deal ran at the same time

    def should_continue(self) -> bool:
        return self.stop_after is None or len(self.started) < self.stop_after

    def on_start(self, slot: Slot, spec: GameSpec) -> None:
        assert spec.game_id == slot.game_id and tuple(e.name for e in spec.entrants) == slot.seats
        self.started.append(slot.game_id)
        self.one_deal_twice_at_once |= slot.duplicate_set in self.deals_in_flight
        self.deals_in_flight.append(slot.duplicate_set)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def on_done(self, slot: Slot, result: GameResult | None) -> None:
        self.in_flight -= 1
        self.deals_in_flight.remove(slot.duplicate_set)
        self.done[slot.game_id] = result
        self.stored_when_done[slot.game_id] = any(g.game_id == slot.game_id for g in self.store.games(self.tid))


def test_each_game_is_announced_once_and_is_stored_when_its_end_is(tmp_path: Path) -> None:
    cfg, store = setup(tmp_path)
    hooks = Recorder(store, cfg.tournament_id)
    with store:
        player = in_process_player(store.records, jitter_seed=2)

        async def go():
            async with player as play:
                return await play_slots(store, cfg, play, {}, 4, hooks=hooks)

        played, _ = asyncio.run(go())
        every = [s.game_id for s in store.slots(cfg.tournament_id)]
        assert played == len(every) == 24
        assert sorted(hooks.started) == sorted(every)  # each once
        # the rotations of one deal share their players: they never run at once (the next table's deal goes first)
        assert not hooks.one_deal_twice_at_once and hooks.started != every
        assert sorted(hooks.done) == sorted(every) and all(r is not None for r in hooks.done.values())
        assert all(hooks.stored_when_done.values())  # a watcher told a game is over can read it at once
        assert hooks.most_in_flight == 4 and hooks.in_flight == 0


def test_a_stop_lets_the_games_in_flight_finish_and_a_resume_plays_only_the_rest(tmp_path: Path) -> None:
    cfg, store = setup(tmp_path)
    tid = cfg.tournament_id
    hooks = Recorder(store, tid, stop_after=7)

    async def go(h: GameHooks | None):
        async with in_process_player(store.records, jitter_seed=4) as play:
            return await play_slots(store, cfg, play, {}, 3, hooks=h)

    with store:
        played, _ = asyncio.run(go(hooks))
        assert played == len(hooks.started) == 7  # no game started after the stop; the 7 in flight finished
        assert len(store.games(tid)) == 7 and all(r is not None for r in hooks.done.values())
        rest = [s.game_id for s in store.slots(tid, pending_only=True)]
        assert len(rest) == 24 - 7 and not set(rest) & set(hooks.started)

        again = Recorder(store, tid)
        played, ratings = asyncio.run(go(again))
        assert played == 24 - 7 and sorted(again.started) == sorted(rest)
        # the same ratings as a tournament played in one go (with the same deal key, so on the same decks)
        key = store.deal_key(tid)
        fresh = open_store(tmp_path / "straight")
        fresh.create_tournament(cfg, schedule.build(cfg, key), "test", key)
        straight = asyncio.run(run_tournament(cfg, fresh, in_process_player, progress=False))
        assert [(r.entrant, r.mu, r.sigma) for r in straight.standings.rows] == [
            (n, r.mu, r.sigma) for n, r in ratings.leaderboard()
        ]


def test_a_referee_failure_ends_the_game_for_the_hooks_and_stores_nothing_of_it(tmp_path: Path) -> None:
    cfg, store = setup(tmp_path)
    tid = cfg.tournament_id
    hooks = Recorder(store, tid)
    broken = store.slots(tid)[2].game_id

    @contextlib.asynccontextmanager
    async def failing_player(records: Path) -> AsyncIterator:
        async with in_process_player(records) as play:

            async def maybe_fail(spec: GameSpec) -> GameResult:
                if spec.game_id == broken:
                    raise RuntimeError("the referee broke")
                return await play(spec)

            yield maybe_fail

    async def go():
        async with failing_player(store.records) as play:
            return await play_slots(store, cfg, play, {}, 1, hooks=hooks)

    with store:
        with pytest.raises(TournamentError, match=f"game {broken} failed in the referee"):
            asyncio.run(go())
        assert hooks.done[broken] is None and not hooks.stored_when_done[broken]
        assert broken in [s.game_id for s in store.slots(tid, pending_only=True)]
        assert len(store.games(tid)) == 2  # the run stopped at the failure


class Spectator(GameHooks):
    def __init__(self) -> None:
        self.seen: dict[str, list[int]] = {}

    def on_start(self, slot: Slot, spec: GameSpec):
        seqs = self.seen.setdefault(slot.game_id, [])
        return lambda d: seqs.append(d.seq)


def test_on_decision_hears_every_decision_of_the_real_match_runner(tmp_path: Path) -> None:
    cfg, store = setup(tmp_path)
    tid = cfg.tournament_id
    spectator = Spectator()

    async def go():
        async with match_player(store.records) as play:
            return await play_slots(store, cfg, play, {}, 4, hooks=spectator)

    with store:
        asyncio.run(go())
        games = store.games(tid)
        assert len(games) == 24 and sorted(spectator.seen) == sorted(g.game_id for g in games)
        for g in games:
            seqs = spectator.seen[g.game_id]
            assert len(seqs) == g.decisions and seqs == sorted(seqs)  # every decision, in the order made
