"""The server's loop and its standings cache (issue 20 item 6): CreateTournament with 200,000 games built and
stored the schedule on the event loop, so health checks waited seconds; and a few cheap GetStandings evicted a big
tournament's standings, whose rebuild then cost seconds each time."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.service.reads import MAX_TALLIES, Boards, Reader
from referee.store import SqliteStore
from referee.tournament.config import parse
from referee.tournament.runner import create_tournament

from .helpers import ORGANISER, auth, config, start_server, stub, write_settings
from .test_reads import POLICIES, _big_store


def test_health_answers_while_a_200000_game_tournament_is_created(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    try:
        s = stub(srv.address)
        health = health_pb2_grpc.HealthStub(grpc.insecure_channel(srv.address))
        health.Check(health_pb2.HealthCheckRequest(), timeout=30)
        four = [{"name": f"p{i}", "policy": "random"} for i in range(4)]
        big = config("huge", four, deals=50_000, table_size=4, seat_orders="rotations")  # 4 orders: 200,000 games
        box: dict = {}

        def create() -> None:
            box["start"] = time.monotonic()
            box["t"] = s.CreateTournament(ref_pb.CreateTournamentRequest(config=big), metadata=auth(ORGANISER),
                                          timeout=600)  # fmt: skip
            box["end"] = time.monotonic()

        thread = threading.Thread(target=create)
        thread.start()
        answered = []
        while thread.is_alive():
            health.Check(health_pb2.HealthCheckRequest(), timeout=600)
            answered.append(time.monotonic())
            time.sleep(0.01)
        thread.join()
        assert box["t"].games == 200_000
        # no timing bound: only that health kept answering during the second half of the call (on the loop, the
        # build held every answer until the call's end)
        half = box["start"] + (box["end"] - box["start"]) / 2
        assert sum(half < t < box["end"] for t in answered) >= 3, (box["end"] - box["start"], len(answered))
    finally:
        srv.stop()


def test_reads_of_many_small_tournaments_do_not_evict_a_big_ones_standings(tmp_path: Path) -> None:
    data = tmp_path / "data"
    big = _big_store(data, 600)
    small = []
    with SqliteStore(data) as store:
        for i in range(MAX_TALLIES + 2):
            cfg = parse({"name": f"small{i}", "entrants": POLICIES}, "test")
            create_tournament(store, cfg, source="test")
            small.append(cfg.tournament_id)

    async def reads() -> int:
        reader = Reader(data)
        with SqliteStore(data) as store:
            boards = Boards(reader, store)
            try:
                assert (await boards.standings(big, 600)).games == 600
                for tid in small:  # cheap reads, more tournaments than the cache holds
                    await boards.standings(tid, 0)
                assert (await boards.standings(big, 600)).games == 600
                return boards.builds
            finally:
                reader.close()

    assert asyncio.run(reads()) == 1 + len(small)  # the big one built once
