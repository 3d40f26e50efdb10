"""Tournaments running inside the service (referee/service/runs.py), in this process so mutation testing sees them:
what a tournament's watchers and the site's lists of games being played hear, what a spectator of a game sees
from its opening to its closing (the public view of each decision, no sooner than the delay), a drain that waits
for the games in flight or abandons them at the end of its grace, and the watcher queues and hub on their own."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import TypeVar

import pytest

import referee.service.runs as runs_module
from referee.engine import EndReason, Options, cards_of, deck_from_seed, new_game, public_view
from referee.log import configure
from referee.match.spec import GameResult, GameSpec, SeatStats
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records import read_record
from referee.service import registry
from referee.service.runs import (
    EVERY,
    FELL_BEHIND,
    Hub,
    LiveGame,
    Run,
    Watcher,
    opening,
    public_decision,
    public_events,
)
from referee.service.server import RefereeService
from referee.service.settings import parse
from referee.store import ladder as ladder_store
from referee.store import open_store
from referee.store.health import HealthRow
from referee.store.ladder import LadderEntrant
from referee.wire import options_from_pb
from tests.tournament.test_redeal import _finish, _interrupt

from .test_organiser_caps import FIRST, HOUSE
from .test_tournament_calls import FINISHED, RUNNING, _create, _on, _until_finished, serving

DELAY_MS = 250
T = TypeVar("T")


class _Kept(dict):
    """The service's live games, each kept here too once the run lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.every: dict[str, LiveGame] = {}

    def __setitem__(self, key: str, value: LiveGame) -> None:
        self.every[key] = value
        super().__setitem__(key, value)


def _service(data: Path) -> RefereeService:
    settings = parse({"auth": {"organiser_tokens": [FIRST]},
                      "service": {"spectator_delay_ms": DELAY_MS},
                      "time_control": {"decision_ms": 700, "bank_ms": 3000, "grace_ms": 100}},
                     "<test>", env={})  # fmt: skip
    svc = RefereeService(open_store(data), settings)
    svc.live = _Kept()
    return svc


@contextlib.contextmanager
def _logging() -> Iterator[Callable[[], list[dict]]]:
    """Inside the block, the log lines written so far, as the JSON objects they are."""
    out = io.StringIO()
    configure("info", json=True, stream=out)
    try:
        yield lambda: [json.loads(x) for x in out.getvalue().splitlines()]
    finally:
        configure("warning")


@contextlib.contextmanager
def _logged() -> Iterator[list[dict]]:
    """The log lines written inside the block, once it ends."""
    lines: list[dict] = []
    with _logging() as so_far:
        try:
            yield lines
        finally:
            lines.extend(so_far())


async def _events(w: Watcher) -> list[ref_pb.TournamentEvent]:
    out = []
    while (e := await w.get()) is not None:
        out.append(e)
    return out


def test_watchers_hear_every_game_and_the_end_and_the_lists_hear_only_starts_and_ends(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "heard", deals=2)).tournament_id
        mine, every = svc.hub.subscribe(tid), svc.hub.subscribe(EVERY)
        await _on(svc, "StartTournament", tid)
        await _until_finished(svc, tid)
        heard = await asyncio.wait_for(_events(mine), 30)
        games = svc.store.games(tid)
        kinds = [e.WhichOneof("event") for e in heard]
        started = [e.started for e in heard if e.HasField("started")]
        finished = [e.finished.game.game_id for e in heard if e.HasField("finished")]
        assert sorted(s.game_id for s in started) == sorted(finished) == sorted(g.game_id for g in games)
        by_id = {g.game_id: g for g in games}
        assert all(tuple(s.entrants) == by_id[s.game_id].names and s.slot == by_id[s.game_id].slot for s in started)
        assert heard[-1].tournament.state == FINISHED and kinds.count("tournament") == 1  # the newest state only
        assert svc.hub.watched(tid) and every.queue.qsize() == 2 * len(games)
        listed = [every.queue.get_nowait() for _ in range(2 * len(games))]
        assert [e.WhichOneof("event") for e in listed].count("started") == len(games)
        assert {e.WhichOneof("event") for e in listed} == {"started", "finished"}

    serving(lambda: _service(tmp_path / "data"), body)


def test_a_spectator_sees_each_game_from_its_opening_to_its_closing_no_sooner_than_the_delay(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "seen", deals=1)).tournament_id
        await _on(svc, "StartTournament", tid)
        await _until_finished(svc, tid)
        kept = svc.live.every  # type: ignore[attr-defined]
        games = svc.store.games(tid)
        assert sorted(kept) == sorted(g.game_id for g in games) and svc.live == {}
        for g in games:
            record = read_record(svc.store.data / g.record_path)
            live = kept[g.game_id]
            assert live.done
            items = [item async for item in live.follow(0)]
            first, decisions, last = items[0].opening, items[1:-1], items[-1].closing
            h = record.header
            assert (first.game_id, first.tournament_id, first.start_seat, first.delay_ms) == (
                g.game_id, tid, h.start_seat, DELAY_MS)  # fmt: skip
            assert [p.name for p in first.players] == list(g.names) and [p.seat for p in first.players] == [0, 1]
            assert [p.version for p in first.players] == ["", ""]  # a game names no version before its end
            options = options_from_pb(h.options)
            start = public_view(new_game(deck_from_seed(h.seed), len(g.names), options, h.start_seat))
            assert list(first.market) == cards_of(start.market) and list(first.hand_sizes) == list(start.hand_sizes)
            assert options_from_pb(first.options) == options_from_pb(h.options)
            assert len(decisions) == len(record.decisions)
            for item, d in zip(decisions, record.decisions, strict=True):
                p = item.decision
                assert (p.seq, p.seat, p.kind, p.chosen_by, p.fault) == (d.seq, d.seat, d.kind, d.chosen_by, d.fault)
                assert list(p.events) == public_events(d.events)
            f = record.footer
            assert (last.reason, list(last.scores), list(last.places), list(last.retired)) == (
                f.reason, list(f.scores), list(f.places), list(f.retired))  # fmt: skip
            # followed with the delay: nothing comes sooner than the delay after it happened
            t0 = time.monotonic()
            follower = live.follow(0.3)
            await anext(follower)
            assert time.monotonic() - t0 >= 0.3 - (t0 - live.items[0][0]) - 1e-3
            await follower.aclose()

    serving(lambda: _service(tmp_path / "data"), body)


async def _playing(svc: RefereeService, name: str) -> tuple[str, Run]:
    """A tournament of 30 deals started, once its first game is in flight."""
    tid = (await _create(svc, name, deals=30)).tournament_id
    await _on(svc, "StartTournament", tid)
    run = svc.runs[tid]
    async with asyncio.timeout(60):
        while not run.in_flight:
            await asyncio.sleep(0.01)
    return tid, run


def test_a_drain_waits_for_the_games_in_flight_or_abandons_them_when_its_grace_ends(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        with _logged() as lines:  # from before the run: its logger is bound as it starts
            tid, run = await _playing(svc, "drained")
            flying = sorted(run.in_flight)
            await run.drain(0)  # no grace: the games in flight are abandoned
        (said,) = [x for x in lines if x["event"] == "grace period over; abandoning games in flight"]
        assert (said["tournament"], said["level"], said["games"]) == (tid, "warning", flying)
        kept = svc.live.every  # type: ignore[attr-defined]
        stored = {g.game_id for g in svc.store.games(tid)}
        abandoned = [live for gid, live in kept.items() if gid not in stored]
        assert abandoned and all(live.done for live in abandoned)
        assert run.in_flight == set() and run.task is not None and run.task.done() and not run.taking
        assert (await _on(svc, "GetTournament", tid)).state != FINISHED

    serving(lambda: _service(tmp_path / "data"), body)

    async def patient(svc: RefereeService) -> None:
        tid, run = await _playing(svc, "patient")
        await run.drain(60)  # the games in flight end and are kept; no new one starts
        kept = svc.live.every  # type: ignore[attr-defined]
        assert sorted(kept) == sorted(g.game_id for g in svc.store.games(tid)) and run.in_flight == set()
        t = await _on(svc, "GetTournament", tid)
        assert t.state != FINISHED and 0 < t.finished < t.games

    serving(lambda: _service(tmp_path / "more"), patient)


def _now(read: Awaitable[T]) -> T:
    """What a watcher holds already, read in a loop of its own; 10 s fails a read that would wait for ever."""
    return asyncio.run(asyncio.wait_for(read, 10))


def _game(i: int) -> ref_pb.TournamentEvent:
    return ref_pb.TournamentEvent(finished=ref_pb.GameFinished(game=ref_pb.GameSummary(game_id=f"g{i}")))


def test_a_watcher_holds_up_to_its_limit_and_ends_when_told() -> None:
    w = Watcher(limit=2)
    w.put(_game(1))
    w.put(None)  # the end counts as no game event
    w.put(_game(2))
    assert not w.dropped and w.games == 2
    got = _now(_events(w))
    assert got == [_game(1)] and w.games == 1  # None ended the stream; the game after it still waits
    w.put(_game(3))
    w.put(_game(4))
    assert w.dropped
    w.put(_game(5))  # a dropped watcher hears nothing more
    w.end()  # nor is its FELL_BEHIND replaced
    assert _now(w.get()) is FELL_BEHIND and w.queue.empty()
    ended = Watcher(limit=5)
    ended.put(_game(1))
    ended.put(ref_pb.TournamentEvent(tournament=ref_pb.Tournament(finished=1)))
    ended.end()  # the server stops: what waits is dropped, the stream ends
    assert _now(ended.get()) is None and ended.queue.empty() and not ended.dropped


def test_the_hub_publishes_to_a_tournaments_watchers_and_starts_and_ends_to_every_list() -> None:
    hub = Hub(queue_limit=7)
    a, every = hub.subscribe("t1"), hub.subscribe(EVERY)
    other = hub.subscribe("t2")
    assert a.limit == 7 and hub.watched("t1") and not hub.watched("t3")
    started = ref_pb.TournamentEvent(started=ref_pb.GameStarted(game_id="g1"))
    state = ref_pb.TournamentEvent(tournament=ref_pb.Tournament(finished=1))
    for e in (started, _game(1), state, None):
        hub.publish("t1", e)
    assert a.queue.get_nowait() == started and a.games == 2
    assert [every.queue.get_nowait() for _ in range(2)] == [started, _game(1)] and every.queue.empty()
    assert other.queue.empty()
    hub.unsubscribe("t1", a)
    hub.unsubscribe("t1", a)  # twice, or for a tournament nobody watches, is harmless
    hub.unsubscribe("t9", a)
    assert not hub.watched("t1") and "t1" not in hub.watchers
    second = hub.subscribe("t2")
    hub.unsubscribe("t2", other)
    assert hub.watched("t2")
    hub.close_all()
    assert _now(second.get()) is None and _now(every.get()) is None


def test_a_live_game_is_followed_as_it_goes_each_item_no_sooner_than_the_delay() -> None:
    first = ref_pb.GameWatchEvent(opening=ref_pb.GameOpening(game_id="g"))
    second = ref_pb.GameWatchEvent(closing=ref_pb.GameClosing(scores=[1]))

    async def go() -> None:
        live = LiveGame(first)
        got: list[tuple[float, ref_pb.GameWatchEvent]] = []

        async def follow() -> None:
            async for item in live.follow(0.2):
                got.append((time.monotonic(), item))

        follower = asyncio.ensure_future(follow())
        await asyncio.sleep(0.3)
        assert [i for _, i in got] == [first] and got[0][0] >= live.items[0][0] + 0.2
        live.add(second)  # not done: the follower waits for more
        await asyncio.sleep(0.3)
        assert [i for _, i in got] == [first, second] and got[1][0] >= live.items[1][0] + 0.2
        assert not follower.done()
        live.add(second, done=True)
        await asyncio.wait_for(follower, 10)
        assert len(got) == 3 and live.done
        abandoned = LiveGame(first)
        abandoned.end()
        assert [i async for i in abandoned.follow(0)] == [first] and abandoned.done
        late = LiveGame(first)
        waiting = asyncio.ensure_future(_all(late))
        await asyncio.sleep(0.05)
        late.end()  # a game abandoned while a spectator waits ends its stream
        assert await asyncio.wait_for(waiting, 10) == [first]

    asyncio.run(go())


async def _all(live: LiveGame) -> list[ref_pb.GameWatchEvent]:
    return [item async for item in live.follow(0)]


def test_a_run_that_deals_an_interrupted_set_again_says_so_and_its_standings_leave_the_void_games(
    tmp_path: Path,
) -> None:
    """A set whose game was cut off (a worker died) is dealt again when the run starts: the log says which games
    are void, watchers hear the tournament's state before any game starts, and the standings count the games
    played again, not the void one the board had already counted."""

    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "redealt", deals=2)).tournament_id  # two rotations of each deal: 2 sets
        before = svc.store.slots(tid)
        _finish(svc.store, tid, 0)  # scores (3, 1): a result no real game of the set replaces by chance
        _interrupt(svc.store, tid, 1)
        early = await svc.boards.standings(tid, 1)  # the board has counted the game about to be void
        assert early.games == 1
        watcher = svc.hub.subscribe(tid)
        heard = asyncio.ensure_future(_events(watcher))
        with _logged() as lines:
            await _on(svc, "StartTournament", tid)
            await asyncio.wait_for(asyncio.shield(svc.runs[tid].task), 60)  # type: ignore[arg-type]
        assert (await _on(svc, "GetTournament", tid)).state == FINISHED  # (a run that failed ends as well)
        events = await asyncio.wait_for(heard, 30)
        kinds = [e.WhichOneof("event") for e in events]
        *_, before_games = events[: kinds.index("started")]  # the start's state, then the redeal's
        assert before_games.tournament.state == RUNNING and before_games.tournament.finished == 0  # void: uncounted
        (said,) = [x for x in lines if x["event"] == "interrupted deals dealt again; their games are void"]
        assert said["tournament"] == tid and said["level"] == "warning"
        assert said["void"] == [before[0].game_id, before[1].game_id]
        (done,) = [x for x in lines if x["event"] == "tournament finished"]
        assert (done["tournament"], done["games"], done["level"]) == (tid, 4, "info")  # the void games not counted
        games = svc.store.games(tid)
        last = await svc.boards.standings(tid, len(games))
        assert last.games == len(games) == 4
        for row in last.rows:
            scores = [s.score for g in games for s in g.seats if s.entrant == row.entrant]
            assert row.games == 4 and row.avg_score == pytest.approx(sum(scores) / 4)

    serving(lambda: _service(tmp_path / "data"), body)


def test_a_ladders_watchers_hear_a_health_change_of_its_own_entrants_only(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "healthy", table_size=2, ladder=ref_pb.LadderConfig(open=True))).tournament_id
        plain = (await _create(svc, "plain", deals=30)).tournament_id
        await _on(svc, "StartTournament", tid)
        await _on(svc, "StartTournament", plain)
        assert svc.runs[tid].entrant_names() == {"r", "g"} == svc.runs[plain].entrant_names()
        ladder, other = svc.hub.subscribe(tid), svc.hub.subscribe(plain)
        svc._health_changed("r", HealthRow("r", "down", since=1.0, missed=2, reason="no Hello", probes=3))
        svc._health_changed("nobody", HealthRow("nobody", "down"))
        (told,) = [e for e in _waiting(ladder) if e.HasField("health")]
        assert (told.health.entrant, told.health.health.status, told.health.health.missed) == ("r", "down", 2)
        assert not [e for e in _waiting(other) if e.HasField("health")]  # not a ladder: no health events
        await _on(svc, "StopTournament", tid)
        await _on(svc, "CancelTournament", plain)

    serving(lambda: _service(tmp_path / "data"), body)


def _waiting(w: Watcher) -> list[ref_pb.TournamentEvent]:
    """The events waiting in ``w``'s queue now, without waiting for more."""
    out = []
    while not w.queue.empty():
        item = w.queue.get_nowait()
        if isinstance(item, ref_pb.TournamentEvent):
            out.append(item)
    return out


def test_a_ladder_stopped_while_it_plays_finishes_its_chosen_rounds_and_chooses_no_more(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "stopped", table_size=2, ladder=ref_pb.LadderConfig(open=True))).tournament_id
        await _on(svc, "StartTournament", tid)
        run = svc.runs[tid]
        async with asyncio.timeout(60):
            while run.ladder is None or not run.in_flight:  # choosing rounds, one of them in play
                await asyncio.sleep(0.01)
        assert (await _on(svc, "StopTournament", tid)).state == RUNNING and run.ladder.stopped
        async with asyncio.timeout(60):  # an open ladder told nothing would choose rounds for ever
            await run.task  # type: ignore[misc]
        assert (await _on(svc, "GetTournament", tid)).state == FINISHED and svc.runs == {}

    serving(lambda: _service(tmp_path / "data"), body)


def test_a_spectator_sees_a_decisions_fault_and_who_chose_it() -> None:
    """The built-in bots of the tests above never fault: a decision the fallback made after a timeout, as a
    spectator is sent it."""
    d = rec_pb.DecisionRecord(seq=7, seat=1, kind=pb.DECISION_KIND_DRAW, chosen_by=rec_pb.CHOOSER_FALLBACK,
                              fault=rec_pb.FAULT_KIND_TIMEOUT, fault_detail="no answer within 700 ms")  # fmt: skip
    p = public_decision(d).decision
    assert (p.seq, p.seat, p.kind, p.chosen_by, p.fault) == (7, 1, d.kind, rec_pb.CHOOSER_FALLBACK, d.fault)


def test_an_opening_shows_the_games_options_start_seat_players_and_versions() -> None:
    """What a spectator is told before the first decision, for a game with rule options, a start seat past 0 and
    versioned players (the tournaments above play with neither)."""
    options = Options(draw_one=True, end_on_empty_pile=True)
    o = opening("g7", "t1", ["a", "b", "c"], ["v1", "", "v3"], options, 5, 2, 250).opening
    assert (o.game_id, o.tournament_id, o.start_seat, o.delay_ms) == ("g7", "t1", 2, 250)
    assert options_from_pb(o.options) == options
    assert [(p.seat, p.name, p.version) for p in o.players] == [(0, "a", "v1"), (1, "b", ""), (2, "c", "v3")]
    start = public_view(new_game(deck_from_seed(5), 3, options, 2))
    assert list(o.market) == cards_of(start.market) and list(o.hand_sizes) == list(start.hand_sizes)


class _Outputs:
    """Stands in for the service's HostedBots (whose bots run sandboxed): what a run tells it of each game."""

    def __init__(self) -> None:
        self.told: list[tuple] = []

    def game_started(self, game_id: str, seats: tuple[str, ...]) -> None:
        self.told.append(("started", game_id, tuple(seats)))

    def game_done(self, game_id: str) -> None:
        self.told.append(("done", game_id))


def test_the_hosted_bots_are_told_each_game_as_it_starts_and_ends(tmp_path: Path) -> None:
    """So that an uploaded bot's output while a game ran is kept for that game (service/hosted.py)."""

    async def body(svc: RefereeService) -> None:
        real, svc.hosted = svc.hosted, _Outputs()  # type: ignore[assignment]
        outputs = svc.hosted
        try:
            tid = (await _create(svc, "hosted", deals=1)).tournament_id
            await _on(svc, "StartTournament", tid)
            await _until_finished(svc, tid)
            games = svc.store.games(tid)
            assert sorted(outputs.told) == sorted(
                [("started", g.game_id, g.names) for g in games] + [("done", g.game_id) for g in games]
            )
            for g in games:  # each game's end after its start
                assert outputs.told.index(("started", g.game_id, g.names)) < outputs.told.index(("done", g.game_id))
        finally:
            svc.hosted = real  # the drain closes it

    serving(lambda: _service(tmp_path / "data"), body)


def test_a_spectator_sees_who_retired_at_a_games_closing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in bots never retire: a run's hooks called by the test, as play_slots calls them, for a game whose
    second seat retired."""
    monkeypatch.setattr(Run, "start", lambda self: None)  # no loop of its own: the test is play_slots

    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "retired", deals=1)).tournament_id
        await _on(svc, "StartTournament", tid)
        run, slot = svc.runs[tid], svc.store.slots(tid)[0]
        run.on_start(slot, GameSpec(game_id=slot.game_id, seed=slot.deck_seed, entrants=()))
        live = svc.live[slot.game_id]
        seats = [SeatStats(), SeatStats(retired=True, faults={"timeout": 3})]
        run.on_done(slot, GameResult(slot.game_id, (5, 0), (1, 2), EndReason.EMPTY_HAND, seats, 10, "", None))
        closing = live.items[-1][1].closing
        assert (list(closing.scores), list(closing.places), list(closing.retired)) == ([5, 0], [1, 2], [1])
        assert live.done and slot.game_id not in svc.live and run.in_flight == set()

    serving(lambda: _service(tmp_path / "data"), body)


async def _heard_live(svc: RefereeService, tid: str, key: str) -> list[ref_pb.TournamentEvent]:
    """What a watcher of ``key`` (a tournament's id, or EVERY) subscribed alone hears while ``tid`` plays to its end,
    read as it comes (a state or standings read late is superseded by its newer copy)."""
    w = svc.hub.subscribe(key)
    heard: list[ref_pb.TournamentEvent] = []

    async def read() -> None:
        while isinstance(e := await w.get(), ref_pb.TournamentEvent):
            heard.append(e)

    reader = asyncio.ensure_future(read())
    await _on(svc, "StartTournament", tid)
    await _until_finished(svc, tid)
    svc.hub.unsubscribe(key, w)
    w.end()
    await asyncio.wait_for(reader, 10)
    return heard


def test_a_tournaments_watcher_alone_hears_each_game_end_with_the_standings_and_the_state_after_it(
    tmp_path: Path,
) -> None:
    """No list of the games being played listens here (the test above has one): the tournament's own watcher still
    hears each finished game, then the standings (built before the start, so each game brings them) and the
    tournament's state counting it, while the tournament runs."""

    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "alone", deals=3)).tournament_id  # 6 games, 3 at a time: a state between them
        assert (await _on(svc, "GetStandings", tid)).games == 0
        heard = await _heard_live(svc, tid, tid)
        games = svc.store.games(tid)
        assert all(e.WhichOneof("event") is not None for e in heard)
        finished = [e.finished.game for e in heard if e.HasField("finished")]
        assert sorted(g.game_id for g in finished) == sorted(g.game_id for g in games) and len(games) == 6
        assert {g.tournament_id for g in finished} == {tid}
        standings = [e.standings for e in heard if e.HasField("standings")]
        assert standings and standings[-1].tournament_id == tid and standings[-1].games == len(games)
        assert {r.entrant for r in standings[-1].rows} == {"r", "g"}
        states = [e.tournament for e in heard if e.HasField("tournament")]
        assert states[-1].state == FINISHED
        assert [s for s in states if s.state == RUNNING and 0 < s.finished < len(games)]

    serving(lambda: _service(tmp_path / "data"), body)


def test_the_lists_of_games_being_played_alone_hear_each_game_start_and_end(tmp_path: Path) -> None:
    """No watcher of the tournament listens: the site's lists still hear each game finish, named with its
    tournament, and nothing but starts and ends."""

    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "listed", deals=1)).tournament_id
        heard = await _heard_live(svc, tid, EVERY)
        ids = sorted(g.game_id for g in svc.store.games(tid))
        assert sorted(e.started.game_id for e in heard if e.HasField("started")) == ids
        finished = [e.finished.game for e in heard if e.HasField("finished")]
        assert sorted(g.game_id for g in finished) == ids and {g.tournament_id for g in finished} == {tid}
        assert len(heard) == 2 * len(ids)

    serving(lambda: _service(tmp_path / "data"), body)


def test_a_run_whose_bot_is_away_asks_again_until_a_drain_ends_it_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run resumed while a bot is down does not fault every game of it: it asks the bot again every RETRY_S (here
    0.2 s) for as long as the run takes games, and a drain then ends it without an error in the log."""
    monkeypatch.setattr(runs_module, "RETRY_S", 0.2)

    async def body(svc: RefereeService) -> None:
        svc.registry.add_bot("away", _nowhere(), "alice", "1", "Al", "g1")
        tid = (await _create(svc, "waiting", [{"bot": "away"}, {"policy": "random"}])).tournament_id
        svc.registry.set_state(tid, registry.RUNNING)  # as a server restarted while it ran finds it
        with _logging() as so_far:
            svc.resume_running()
            run = svc.runs[tid]
            async with asyncio.timeout(60):
                while sum(x["event"] == "entrants unreachable; retrying" for x in so_far()) < 3:
                    assert not run.task.done()  # type: ignore[union-attr]
                    await asyncio.sleep(0.05)
            await run.drain(10)  # it stops asking within RETRY_S: no need to abandon it at the grace's end
            lines = so_far()
        retries = [x for x in lines if x["event"] == "entrants unreachable; retrying"]
        assert len(retries) >= 3 and {x["retry_s"] for x in retries} == {0.2}
        assert not [x for x in lines if x["level"] == "error" or x["event"].startswith("grace period over")]
        assert run.task.done() and svc.store.games(tid) == []  # type: ignore[union-attr]

    serving(lambda: _service(tmp_path / "data"), body)


def test_a_run_that_fails_says_so_in_the_log_even_while_it_drains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a run stopped while its bots were away ends quietly: any other failure is an error in the log, naming
    it, also when the server was draining (and the tournament resumes at the next start)."""

    async def broken(*args, hooks: Run, **kwargs) -> None:  # play_slots, failing once the run takes no more games
        while hooks.should_continue():
            await asyncio.sleep(0.01)
        raise RuntimeError("the disk is gone")

    monkeypatch.setattr(runs_module, "play_slots", broken)

    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "broken", deals=1)).tournament_id
        with _logged() as lines:
            await _on(svc, "StartTournament", tid)
            await svc.runs[tid].drain(10)
        (said,) = [x for x in lines if x["level"] == "error"]
        assert said["event"] == "tournament run failed; it resumes at the next start" and said["tournament"] == tid
        assert said["error"] == repr(RuntimeError("the disk is gone"))
        assert (await _on(svc, "GetTournament", tid)).state == RUNNING

    serving(lambda: _service(tmp_path / "data"), body)


def test_a_ladder_whose_games_budget_is_played_finishes(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        ladder = ref_pb.LadderConfig(games=3)
        tid = (await _create(svc, "budget", table_size=2, ladder=ladder)).tournament_id
        await _on(svc, "StartTournament", tid)
        t = await _until_finished(svc, tid)
        assert t.finished == t.games == 3 and len(svc.store.games(tid)) == 3 and svc.runs == {}

    serving(lambda: _service(tmp_path / "data"), body)


def test_a_ladder_seats_no_entrant_the_servers_health_has_down(tmp_path: Path) -> None:
    """The server's bot health, not a ladder's own: an entrant down there is down in every ladder, so a ladder of
    three whose entrant r is down plays its two games without r (the one with the fewest games, who would go
    first)."""

    async def body(svc: RefereeService) -> None:
        entrants = [*HOUSE, {"name": "x", "policy": "random"}]
        ladder = ref_pb.LadderConfig(games=2)
        tid = (await _create(svc, "down", entrants, table_size=2, ladder=ladder)).tournament_id
        svc.health.absent("r", "no Hello")  # no prober runs here (resume_running starts it): it stays down
        await _on(svc, "StartTournament", tid)
        await _until_finished(svc, tid)
        assert [sorted(g.names) for g in svc.store.games(tid)] == [["g", "x"], ["g", "x"]]

    serving(lambda: _service(tmp_path / "data"), body)


def test_a_bot_that_joins_a_running_ladder_is_dialled_at_its_address(tmp_path: Path) -> None:
    """Submitted while the ladder plays (here straight into the store, at an address nothing listens on): the
    ladder dials it there when it seats it, finds it absent, and the server's health marks it down with the dial's
    reason, while the ladder plays on."""

    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "joined", table_size=2, ladder=ref_pb.LadderConfig(open=True))).tournament_id
        await _on(svc, "StartTournament", tid)
        run = svc.runs[tid]
        ladder_store.submit(svc.store, tid, LadderEntrant("new.v1", "alice", "new", 1, address=_nowhere()))
        async with asyncio.timeout(60):
            while svc.health.status("new.v1") == "up":
                assert not run.task.done()  # type: ignore[union-attr]
                await asyncio.sleep(0.05)
        assert "new.v1" not in {n for g in svc.store.games(tid) for n in g.names}
        await _on(svc, "StopTournament", tid)

    serving(lambda: _service(tmp_path / "data"), body)


def _nowhere() -> str:
    """An address on this machine that nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_a_caller_cancelled_while_it_cancels_a_run_is_still_cancelled() -> None:
    """``Run.cancel`` waits for the run's task to end and takes that task's CancelledError in; a cancellation
    of the caller itself (a shutdown, an RPC whose client went away) while it waits must still reach the caller,
    not be taken for the run's."""

    async def go() -> None:
        ending = asyncio.Event()

        async def slow_to_end() -> None:
            try:
                await asyncio.sleep(3600)
            finally:
                await ending.wait()  # the run's games are being abandoned

        run = SimpleNamespace(taking=True, task=asyncio.create_task(slow_to_end()))
        await asyncio.sleep(0)
        caller = asyncio.create_task(Run.cancel(run))  # type: ignore[arg-type]
        await asyncio.sleep(0)  # the caller now waits for the run's task to end
        assert not caller.done()
        caller.cancel()
        ending.set()
        with pytest.raises(asyncio.CancelledError):
            await caller
        assert run.task.cancelled() and run.taking is False

        quiet = SimpleNamespace(taking=True, task=asyncio.create_task(asyncio.sleep(3600)))
        await asyncio.sleep(0)
        await Run.cancel(quiet)  # type: ignore[arg-type]  # the run's own cancellation is taken in
        assert quiet.task.cancelled()

    asyncio.run(go())
