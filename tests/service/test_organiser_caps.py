"""The open-tournament cap per organiser, on the service called in this process (the layer alone: a real store,
a stand-in for the gRPC call's context): it counts the caller's tournaments being created, not another
organiser's, and a paused ladder still counts as open."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import grpc
import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.service.server import RefereeService
from referee.service.settings import parse
from referee.store import open_store

from .helpers import auth, config

FIRST, SECOND = "first-organiser-token", "second-organiser-token"
HOUSE = [{"name": "r", "policy": "random"}, {"name": "g", "policy": "greedy"}]


class Refused(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code, self.details = code, details


class Context:
    """What the service reads of a gRPC call's context: its metadata and peer; ``abort`` raises Refused."""

    def __init__(self, token: str) -> None:
        self.metadata = auth(token)

    def invocation_metadata(self) -> list[tuple[str, str]]:
        return self.metadata

    def peer(self) -> str:
        return "ipv4:127.0.0.1:50000"

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise Refused(code, details)


def service(data: Path, max_open: int) -> RefereeService:
    settings = parse({"auth": {"organiser_tokens": [FIRST, SECOND]},
                      "service": {"max_open_tournaments": max_open}}, "<test>", env={})  # fmt: skip
    return RefereeService(open_store(data), settings)


def create(svc: RefereeService, token: str, name: str, **fields) -> ref_pb.Tournament:
    request = ref_pb.CreateTournamentRequest(config=config(name, HOUSE, **fields))
    return svc.CreateTournament(request, Context(token))


async def over_the_cap(svc: RefereeService, token: str, name: str, **fields) -> None:
    with pytest.raises(Refused) as refused:
        await create(svc, token, name, **fields)
    assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.value
    assert "limit per organiser" in refused.value.details


def test_another_organisers_tournament_being_created_leaves_the_callers_room(tmp_path: Path) -> None:
    """The second organiser's tournament is still being built (its schedule waits on the reader thread, held by
    the test) when the first creates one: with a cap of 1, that is the first's only tournament, so it is made."""

    async def run() -> None:
        svc = service(tmp_path / "data", max_open=1)
        held, go = threading.Event(), threading.Event()
        blocker = asyncio.ensure_future(svc.reader.run(lambda store: (held.set(), go.wait(60))))
        await asyncio.to_thread(held.wait, 60)
        theirs = asyncio.ensure_future(create(svc, SECOND, "theirs"))
        async with asyncio.timeout(60):
            while "organiser2" not in svc.creating.values():
                await asyncio.sleep(0.01)
            mine = asyncio.ensure_future(create(svc, FIRST, "mine"))
            while not mine.done() and len(svc.creating) < 2:  # its checks, until it waits on the reader too
                await asyncio.sleep(0.01)
        go.set()
        await blocker
        assert (await theirs).state == ref_pb.TOURNAMENT_STATE_CREATED
        assert (await mine).state == ref_pb.TOURNAMENT_STATE_CREATED
        await over_the_cap(svc, FIRST, "mine", seed=2)  # each now has one: the cap holds for each
        svc.reader.close()

    asyncio.run(run())


def test_a_paused_ladder_counts_toward_the_open_tournament_cap(tmp_path: Path) -> None:
    async def run() -> None:
        svc = service(tmp_path / "data", max_open=1)
        ladder = await create(svc, FIRST, "ladder", table_size=2, ladder=ref_pb.LadderConfig(open=True))
        paused = await svc.PauseTournament(ref_pb.PauseTournamentRequest(tournament_id=ladder.tournament_id),
                                           Context(FIRST))  # fmt: skip
        assert paused.state == ref_pb.TOURNAMENT_STATE_PAUSED
        await over_the_cap(svc, FIRST, "another")
        await svc.CancelTournament(ref_pb.CancelTournamentRequest(tournament_id=ladder.tournament_id), Context(FIRST))
        assert (await create(svc, FIRST, "another")).state == ref_pb.TOURNAMENT_STATE_CREATED  # cancelled: room again
        svc.reader.close()

    asyncio.run(run())
