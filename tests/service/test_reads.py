"""Reads that grow with the store do not stall the server: standings are kept up to date once per finished game,
whatever the number of watchers, and heavy reads run off the event loop so health keeps answering."""

from __future__ import annotations

import asyncio
import random
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.engine import EndReason
from referee.match.spec import GameResult, SeatStats
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.rating import Ratings
from referee.service import settings as settings_mod
from referee.service.server import serve
from referee.store import SqliteStore
from referee.tournament.config import parse
from referee.tournament.runner import create_tournament, standings_of

from .helpers import ORGANISER, auth, config, start_server, stub, write_settings

POLICIES = [{"name": f"p{i}", "policy": p} for i, p in enumerate(["random", "greedy", "counter", "random"])]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_watchers_cost_one_standings_update_per_game_not_a_recount(tmp_path: Path, monkeypatch) -> None:
    """Issue 11 item 5: each finished game made a watched tournament recount every stored game (TrueSkill over all
    of them), so watching 1,200 games took 20 times as long. Counted here in TrueSkill updates, in a real server
    (in this process, so they can be counted) with five watchers: about one per game, not one per game so far."""
    updates = 0
    real_add = Ratings.add

    def counting_add(self, seats, places) -> None:
        nonlocal updates
        updates += 1
        real_add(self, seats, places)

    monkeypatch.setattr(Ratings, "add", counting_add)
    settings = settings_mod.parse({"auth": {"organiser_tokens": [ORGANISER]}}, "test", env={})
    port = _free_port()
    loop_ready = threading.Event()
    box: dict = {}

    def server() -> None:
        async def main() -> None:
            box["loop"], box["stop"] = asyncio.get_running_loop(), asyncio.Event()
            loop_ready.set()
            await serve(tmp_path / "data", "127.0.0.1", port, settings, stop=box["stop"])

        asyncio.run(main())

    thread = threading.Thread(target=server, daemon=True)
    thread.start()
    loop_ready.wait(30)
    try:
        s = stub(f"127.0.0.1:{port}")
        grpc.channel_ready_future(grpc.insecure_channel(f"127.0.0.1:{port}")).result(timeout=30)
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=config("watched", POLICIES, deals=40,
                               concurrency=4)), metadata=auth(ORGANISER), timeout=30)  # fmt: skip
        assert t.games == 240
        streams = [s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=t.tournament_id), timeout=300)
                   for _ in range(5)]  # fmt: skip
        for st in streams:
            next(st)  # subscribed
        before = updates
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))
        with ThreadPoolExecutor(5) as pool:
            seen = list(pool.map(list, streams))
        for events in seen:
            counts = [e.standings.games for e in events if e.WhichOneof("event") == "standings"]
            # every watcher had the standings as they grew, ending with all 240 games (one that lags is sent only
            # the newest: runs.Watcher)
            assert counts == sorted(set(counts)) and counts[-1] == 240
        final = s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=t.tournament_id), timeout=30)
        assert final == [e.standings for e in seen[0] if e.WhichOneof("event") == "standings"][-1]
        # the runner's own ratings (240), the final standings (240), the tally's (240), and its full fits made
        # again off the loop each time the games since the last reach 5% of them: every game again at each, about
        # 20 times the games in all (docs/ratings.md); a recount per game was 240 * 241 / 2 = 28,920
        assert updates - before <= 25 * 240, updates - before
    finally:
        box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(60)


def _big_store(data: Path, games: int) -> str:
    """A finished tournament of ``games`` stored games, written straight into the store (no play: the results
    are made up, which is all standings need)."""
    rng = random.Random(7)
    cfg = parse({"name": "big", "deals": -(-games // 6), "entrants": POLICIES}, "test")  # 6 tables a deal
    with SqliteStore(data) as store:
        slots = create_tournament(store, cfg, source="test")[:games]
        for slot in slots:
            scores = (rng.randint(-20, 30), rng.randint(-20, 30))
            places = (1, 2) if scores[0] >= scores[1] else (2, 1)
            seats = [SeatStats({"timeout": 1} if rng.random() < 0.05 else {}, [rng.randint(50, 900) for _ in range(20)])
                     for _ in range(2)]  # fmt: skip
            store.save_game(cfg.tournament_id, slot, GameResult(slot.game_id, scores, places,
                            EndReason.EMPTY_HAND, seats, 40, "", None))  # fmt: skip
    return cfg.tournament_id


def test_health_answers_while_ten_clients_read_the_standings_of_a_big_store(tmp_path: Path) -> None:
    """Issue 11 item 6: GetStandings computed on the event loop (about 0.15 ms per stored game), so ten at once on
    a big store held every other call, health checks included, for many seconds."""
    tid = _big_store(tmp_path / "data", 12_000)
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    try:
        s = stub(srv.address)
        health = health_pb2_grpc.HealthStub(grpc.insecure_channel(srv.address))
        SERVING = health_pb2.HealthCheckResponse.SERVING
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=30).status == SERVING
        with ThreadPoolExecutor(10) as pool:
            reads = [pool.submit(s.GetStandings, ref_pb.GetStandingsRequest(tournament_id=tid), timeout=300)
                     for _ in range(10)]  # fmt: skip
            for _ in range(3):  # a generous deadline: the point is that it answers at all while they run
                got = health.Check(health_pb2.HealthCheckRequest(), timeout=5)
                assert got.status == SERVING
            answers = [r.result() for r in reads]
        with SqliteStore(tmp_path / "data") as store:
            local = standings_of(store, tid)
        for a in answers:
            assert a.games == 12_000
            assert [(r.entrant, r.games, r.wins, r.mu) for r in a.rows] == [
                (r.entrant, r.games, r.wins, r.mu) for r in local.rows
            ]
    finally:
        srv.stop()


def test_standings_kept_game_by_game_in_any_order_equal_a_recount(tmp_path: Path) -> None:
    """The tally the service keeps (games added as they finish, out of schedule order) gives exactly the standings
    a recount of the store gives, ratings included (they apply games in schedule order)."""
    from referee.tournament.standings import Tally, compute

    tid = _big_store(tmp_path / "data", 300)
    with SqliteStore(tmp_path / "data") as store:
        games = store.games(tid)
        names = [e["name"] for e in store.tournament(tid).config["entrants"]]
    order = list(games)
    random.Random(3).shuffle(order)
    tally = Tally(tid, names, 300)
    for i, g in enumerate(order):
        tally.add(g)
        if i in (0, 57, 150):
            assert tally.standings() == compute(tid, names, sorted(order[: i + 1], key=lambda x: x.slot), 300)
    assert tally.standings() == compute(tid, names, games, 300)
