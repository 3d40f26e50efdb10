"""Watchers are bounded (issue 11 item 10): Watch* streams are capped per client and in total, and a tournament
watcher that falls too far behind is dropped with RESOURCE_EXHAUSTED rather than buffered without end. Real
streams on a real server."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import grpc

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc

from .helpers import ALICE, BOB, ORGANISER, auth, config, error_of, start_bots, start_server, stub, write_settings

HOUSE = [{"name": f"p{i}", "policy": p} for i, p in enumerate(["random", "greedy", "counter", "random"])]
RESOURCE_EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED


def _first_event_error(s, tid: str, token: str | None) -> grpc.RpcError:
    return error_of(lambda: next(s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=tid),
                                                   metadata=auth(token), timeout=30)))  # fmt: skip


def test_watch_streams_are_capped_per_client_and_in_total(tmp_path: Path) -> None:
    extra = "max_watchers = 5\nmax_watchers_per_client = 3\n"
    settings = write_settings(tmp_path)
    settings.write_text(settings.read_text().replace("[service]\n", "[service]\n" + extra))
    srv = start_server(tmp_path / "data", settings)
    try:
        s = stub(srv.address)
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=config("never", HOUSE)), metadata=auth(ORGANISER))
        request = ref_pb.WatchTournamentRequest(tournament_id=t.tournament_id)  # never started: streams stay open

        def watch(token: str | None):
            stream = s.WatchTournament(request, metadata=auth(token), timeout=120)
            next(stream)  # open and counted
            return stream

        anonymous = [watch(None) for _ in range(3)]
        err = _first_event_error(s, t.tournament_id, None)
        assert err.code() == RESOURCE_EXHAUSTED and "limit per client" in err.details(), err.details()
        # a game spectator stream counts too
        err = error_of(lambda: next(s.WatchGame(ref_pb.WatchGameRequest(game_id="x"), timeout=30)))
        assert err.code() == RESOURCE_EXHAUSTED

        alices = [watch(ALICE) for _ in range(2)]  # another client: 5 streams in all, the server's limit
        err = _first_event_error(s, t.tournament_id, BOB)
        assert err.code() == RESOURCE_EXHAUSTED and "5 watchers already" in err.details(), err.details()

        anonymous.pop().cancel()  # a closed stream frees its place
        for _ in range(50):
            try:
                anonymous.append(watch(BOB))
                break
            except grpc.RpcError as e:
                assert e.code() == RESOURCE_EXHAUSTED
        else:
            raise AssertionError("a closed stream never freed its place")
        for stream in anonymous + alices:
            stream.cancel()
    finally:
        srv.stop()


def test_a_watcher_that_does_not_read_is_dropped_and_the_others_go_on(tmp_path: Path) -> None:
    settings = write_settings(tmp_path)
    settings.write_text(settings.read_text().replace("[service]\n", "[service]\nwatch_queue = 64\n"))
    srv = start_server(tmp_path / "data", settings)
    # bots over gRPC: their games leave the event loop free between decisions, so a reading watcher keeps up
    bots = start_bots(["greedy", "counter"])
    try:
        s = stub(srv.address)
        field = [{"name": "g", "address": bots[0].address}, {"name": "c", "address": bots[1].address}, *HOUSE[:2]]
        c = config("flood", field, deals=80, concurrency=8)  # 480 games, some 2,000 events
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
        request = ref_pb.WatchTournamentRequest(tournament_id=t.tournament_id)
        # a client that grants the server window only as it reads (no BDP probing, a small window)
        options = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 1024)]
        slow = ref_grpc.RefereeStub(grpc.insecure_channel(srv.address, options=options))
        idle = slow.WatchTournament(request, timeout=600)
        next(idle)  # subscribed; it reads nothing more until the tournament is over
        reader = s.WatchTournament(request, timeout=600)
        next(reader)
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))
        events = list(reader)  # a watcher that reads gets everything, to the end
        assert events[-1].tournament.state == ref_pb.TOURNAMENT_STATE_FINISHED
        assert sum(e.WhichOneof("event") == "finished" for e in events) == 480

        got = 0
        try:
            for _ in idle:
                got += 1
        except grpc.RpcError as e:
            assert e.code() == RESOURCE_EXHAUSTED and "fell more than 64 events behind" in e.details(), e.details()
        else:
            raise AssertionError(f"the idle watcher was never dropped ({got} events)")
        assert got < 2000
    finally:
        for bot in bots:
            bot.stop()
        srv.stop()


def test_a_client_that_stops_taking_messages_loses_its_stream_and_its_place(tmp_path: Path) -> None:
    """A watcher whose client grants no more flow-control window cannot even be sent a status: its stream is
    ended once a message has waited watch_write_timeout_s, so it does not hold its place under the caps for ever."""
    settings = write_settings(tmp_path)
    extra = "max_watchers_per_client = 1\nwatch_write_timeout_s = 2\n"
    settings.write_text(settings.read_text().replace("[service]\n", "[service]\n" + extra))
    srv = start_server(tmp_path / "data", settings)
    try:
        s = stub(srv.address)
        c = config("stall", HOUSE, deals=40, concurrency=8)
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
        request = ref_pb.WatchTournamentRequest(tournament_id=t.tournament_id)
        options = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 1024)]
        stalled = ref_grpc.RefereeStub(grpc.insecure_channel(srv.address, options=options))
        stream = stalled.WatchTournament(request, timeout=600)
        next(stream)  # then it takes nothing more
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))
        for _ in range(600):  # the same client (one address, no token) asks for its place back
            try:
                again = s.WatchTournament(request, timeout=60)
                next(again)
                again.cancel()
                break
            except grpc.RpcError as e:
                assert e.code() == RESOURCE_EXHAUSTED and "limit per client" in e.details(), e.details()
                time.sleep(0.1)
        else:
            raise AssertionError("the stalled stream kept its place")
        stream.cancel()
    finally:
        srv.stop()


def test_a_lagging_watcher_gets_the_newest_state_once_and_in_order() -> None:
    """A watcher behind a fast tournament: each game event waits (and counts against the limit); the tournament's
    state and standings wait only as their newest copy, sent after the events that came before it."""
    from referee.service.runs import FELL_BEHIND, Watcher

    def state(games: int) -> ref_pb.TournamentEvent:
        return ref_pb.TournamentEvent(tournament=ref_pb.Tournament(finished=games))

    def game(i: int) -> ref_pb.TournamentEvent:
        return ref_pb.TournamentEvent(finished=ref_pb.GameFinished(game=ref_pb.GameSummary(game_id=f"g{i}")))

    async def drain(w: Watcher) -> list:
        out = []
        while not w.queue.empty():
            out.append(await w.get())
        return out

    w = Watcher(limit=3)
    for i in range(3):
        w.put(game(i))
        w.put(state(i + 1))
        w.put(ref_pb.TournamentEvent(standings=ref_pb.Standings(games=i + 1)))
    sent = asyncio.run(asyncio.wait_for(drain(w), 10))  # all of it waits already: 10 s fails a get that never ends
    assert [e.WhichOneof("event") for e in sent] == ["finished", "finished", "finished", "tournament", "standings"]
    assert sent[3].tournament.finished == 3 and sent[4].standings.games == 3
    for i in range(4):  # state events never count; the fourth waiting game event drops the watcher
        w.put(game(i))
        w.put(state(9))
    assert w.dropped and asyncio.run(asyncio.wait_for(drain(w), 10)) == [FELL_BEHIND]
