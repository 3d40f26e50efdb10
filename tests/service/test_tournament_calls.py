"""The service's tournament calls (referee/service/tournaments.py) called in this process, on a real store with a
stand-in for the gRPC call's context (test_organiser_caps.py's), so that mutation testing sees them
(scripts/mutation.py): the server reaches them from its own process in the other tests here. What an organiser
sees: a config's bots filled in with their addresses and owners and the server's time control, each refusal with
its status and the field it names, and the lifecycle (created, running, paused, finished, cancelled) and its
refusals; what a reader sees: Get and List with their pages."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.service.registry import RETIRED
from referee.service.server import RefereeService
from referee.service.settings import parse
from referee.store import open_store

from .helpers import config
from .test_organiser_caps import FIRST, HOUSE, SECOND, Context, Refused

AUTHOR = "alice-token"
CREATED, RUNNING = ref_pb.TOURNAMENT_STATE_CREATED, ref_pb.TOURNAMENT_STATE_RUNNING
PAUSED, FINISHED = ref_pb.TOURNAMENT_STATE_PAUSED, ref_pb.TOURNAMENT_STATE_FINISHED
CANCELLED = ref_pb.TOURNAMENT_STATE_CANCELLED


def _service(data: Path, max_open: int = 10) -> RefereeService:
    settings = parse({"auth": {"organiser_tokens": [FIRST, SECOND], "authors": {"alice": AUTHOR}},
                      "service": {"max_open_tournaments": max_open, "spectator_delay_ms": 0},
                      "time_control": {"decision_ms": 700, "bank_ms": 3000, "grace_ms": 100}},
                     "<test>", env={})  # fmt: skip
    return RefereeService(open_store(data), settings)


def serving(make: Callable[[], RefereeService], body: Callable[[RefereeService], Awaitable[None]]) -> None:
    """``body`` on the service ``make`` builds on a loop of its own, drained and closed after."""

    async def run() -> None:
        svc = make()
        try:
            await body(svc)
        finally:
            await svc.drain(5)
            svc.reader.close()

    asyncio.run(run())


def _run(tmp_path: Path, body: Callable[[RefereeService], Awaitable[None]], max_open: int = 10) -> None:
    serving(lambda: _service(tmp_path / "data", max_open), body)


def _create(svc: RefereeService, name: str, entrants: list[dict] = HOUSE, token: str = FIRST, **fields):
    return svc.CreateTournament(ref_pb.CreateTournamentRequest(config=config(name, entrants, **fields)),
                                Context(token))  # fmt: skip


async def _refused(call: Awaitable[object]) -> Refused:
    with pytest.raises(Refused) as refused:
        await call
    return refused.value


def _on(svc: RefereeService, call: str, tid: str, token: str = FIRST):
    request = getattr(ref_pb, f"{call}Request")(tournament_id=tid)
    return getattr(svc, call)(request, Context(token))


async def _until_finished(svc: RefereeService, tid: str) -> ref_pb.Tournament:
    """The finished tournament; fails at once if its run ended without finishing it (a failed run resumes only at
    the next start, so waiting longer would only reach the time bound)."""
    async with asyncio.timeout(120):
        while (t := await _on(svc, "GetTournament", tid)).state != FINISHED:
            run = svc.runs.get(tid)
            if run is not None and run.task is not None and run.task.done():  # finishing would have let it go
                t = await _on(svc, "GetTournament", tid)
                assert t.state == FINISHED, f"the run of {tid} failed"
            await asyncio.sleep(0.05)
    return t


def test_a_config_gets_its_bots_addresses_and_owners_and_the_servers_time_control(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        svc.registry.add_bot("ag", "127.0.0.1:7001", "alice", "1", "Al", "g1")
        svc.registry.add_bot("ag", "127.0.0.1:7002", "alice", "2", "Al", "g2")  # its current version plays
        entrants = [
            {"bot": "ag"},
            {"name": "mine", "bot": "ag"},
            {"policy": "greedy"},
            {"name": "r", "policy": "random"},
        ]
        t = await _create(svc, "filled", entrants, time_control=ref_pb.TimeControlConfig(bank_ms=5000))
        assert t.state == CREATED and t.created_by == "organiser1" and t.games > 0
        cfg = json.loads(t.config_json)
        assert [(e["name"], e.get("address"), e.get("owner")) for e in cfg["entrants"]] == [
            ("ag", "127.0.0.1:7002", "alice"), ("mine", "127.0.0.1:7002", "alice"), ("greedy", None, None),
            ("r", None, None)]  # fmt: skip
        assert cfg["time_control"] == {"decision_ms": 700, "bank_ms": 5000, "grace_ms": 100}
        assert svc.registry.linked(t.tournament_id) == {"ag": ("ag", 2), "mine": ("ag", 2)}
        assert svc.registry.state(t.tournament_id) == ("created", "organiser1")
        plain = await _create(svc, "plain")
        assert json.loads(plain.config_json)["time_control"] == {"decision_ms": 700, "bank_ms": 3000, "grace_ms": 100}

    _run(tmp_path, body)


@pytest.mark.parametrize(
    ("entrants", "fields", "code", "words"),
    [
        ([{"bot": "nobody"}, {"policy": "random"}], {}, grpc.StatusCode.NOT_FOUND,
         "config.entrants[0].bot: no bot 'nobody' on this server"),
        ([{"policy": "random"}, {"bot": "old"}], {}, grpc.StatusCode.FAILED_PRECONDITION,
         "config.entrants[1].bot: bot 'old' is retired"),
        ([{"policy": "random"}, {"name": "x"}], {}, grpc.StatusCode.INVALID_ARGUMENT,
         "config.entrants[1]: give one of bot, address or policy"),
        (HOUSE, {"table_size": 9}, grpc.StatusCode.INVALID_ARGUMENT, "config.table_size: "),
        (HOUSE, {"name": ""}, grpc.StatusCode.INVALID_ARGUMENT, "config.name: must not be empty"),
        ([], {}, grpc.StatusCode.INVALID_ARGUMENT, "config.entrants: missing: list at least 2 entrants"),
        ([{"address": "127.0.0.1:9"}, {"policy": "random"}], {}, grpc.StatusCode.INVALID_ARGUMENT,
         "config.entrants[0].name: entrant 1 has no name"),
    ],
)  # fmt: skip
def test_a_bad_config_is_refused_naming_the_field(tmp_path: Path, entrants, fields, code, words: str) -> None:
    async def body(svc: RefereeService) -> None:
        svc.registry.add_bot("old", "127.0.0.1:7001", "alice", "1", "Al", "g1")
        svc.registry.retire_bot("old", 1)
        request = ref_pb.CreateTournamentRequest(config=config(fields.pop("name", "bad"), entrants, **fields))
        refused = await _refused(svc.CreateTournament(request, Context(FIRST)))
        assert refused.code == code and refused.details.startswith(words), refused
        assert svc.store.tournaments() == [] and svc.registry.open_tournaments_of("organiser1") == 0

    _run(tmp_path, body)


def test_create_is_refused_without_a_config_to_an_author_twice_and_while_draining(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        missing = await _refused(svc.CreateTournament(ref_pb.CreateTournamentRequest(), Context(FIRST)))
        assert (missing.code, missing.details) == (grpc.StatusCode.INVALID_ARGUMENT, "config: missing")
        author = await _refused(_create(svc, "mine", token=AUTHOR))
        assert author.code == grpc.StatusCode.PERMISSION_DENIED and "only an organiser may create" in author.details
        t = await _create(svc, "once")
        again = await _refused(_create(svc, "once", token=SECOND))
        assert again.code == grpc.StatusCode.ALREADY_EXISTS and t.tournament_id in again.details
        assert svc.registry.state(t.tournament_id) == ("created", "organiser1")
        await svc.drain(1)
        late = await _refused(_create(svc, "late"))
        assert late.code == grpc.StatusCode.UNAVAILABLE and "shutting down" in late.details
        for call in ("StartTournament", "CancelTournament", "PauseTournament", "StopTournament"):
            assert (await _refused(_on(svc, call, t.tournament_id))).code == grpc.StatusCode.UNAVAILABLE

    _run(tmp_path, body)


def test_the_cap_counts_the_callers_open_tournaments_up_to_the_limit(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        first = await _create(svc, "one")
        await _create(svc, "two")
        over = await _refused(_create(svc, "three"))
        assert over.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert over.details.startswith("you have 2 tournaments created or running, the limit per organiser")
        assert (await _create(svc, "theirs", token=SECOND)).created_by == "organiser2"
        await _on(svc, "CancelTournament", first.tournament_id)
        assert (await _create(svc, "three")).state == CREATED

    _run(tmp_path, body, max_open=2)


def test_a_tournament_runs_to_its_end_once_and_then_refuses_to_start_or_cancel(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        t = await _create(svc, "played")
        tid = t.tournament_id
        started = await _on(svc, "StartTournament", tid)
        assert started.state == RUNNING and list(svc.runs) == [tid]
        again = await _on(svc, "StartTournament", tid)
        assert again.state == RUNNING and list(svc.runs) == [tid]
        done = await _until_finished(svc, tid)
        assert done.finished == done.games == t.games and svc.runs == {}
        for call in ("StartTournament", "CancelTournament"):
            refused = await _refused(_on(svc, call, tid))
            assert (refused.code, refused.details) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                       f"tournament {tid} is finished")  # fmt: skip
        assert (await _on(svc, "GetTournament", tid)).state == FINISHED

    _run(tmp_path, body)


def test_a_cancelled_tournament_stays_cancelled(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "cancelled")).tournament_id
        author = await _refused(_on(svc, "CancelTournament", tid, AUTHOR))
        assert author.code == grpc.StatusCode.PERMISSION_DENIED and "cancel a tournament" in author.details
        assert (await _on(svc, "CancelTournament", tid)).state == CANCELLED
        assert (await _on(svc, "CancelTournament", tid)).state == CANCELLED
        refused = await _refused(_on(svc, "StartTournament", tid))
        assert (refused.code, refused.details) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                   f"tournament {tid} is cancelled")  # fmt: skip
        assert svc.runs == {} and (await _on(svc, "GetTournament", tid)).state == CANCELLED

    _run(tmp_path, body)


def test_a_running_tournament_is_cancelled_and_its_run_ends(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "stopped", deals=30)).tournament_id
        await _on(svc, "StartTournament", tid)
        cancelled = await _on(svc, "CancelTournament", tid)
        assert cancelled.state == CANCELLED and svc.runs == {}
        t = await _on(svc, "GetTournament", tid)
        assert t.state == CANCELLED and t.finished < t.games

    _run(tmp_path, body)


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_a_start_whose_bot_does_not_answer_or_whose_deal_key_is_gone_is_refused(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "far", [{"name": "far", "address": _closed_port()}, *HOUSE])).tournament_id
        refused = await _refused(_on(svc, "StartTournament", tid))
        assert refused.code == grpc.StatusCode.FAILED_PRECONDITION
        assert refused.details.startswith(f"tournament {tid} did not start: ") and "far" in refused.details
        assert (await _on(svc, "GetTournament", tid)).state == CREATED and svc.runs == {}
        keyed = (await _create(svc, "keyed")).tournament_id
        svc.store.db.execute("DELETE FROM deal_keys WHERE tournament_id = ?", (keyed,))
        nokey = await _refused(_on(svc, "StartTournament", keyed))
        assert nokey.code == grpc.StatusCode.FAILED_PRECONDITION and "deal key" in nokey.details
        assert str(svc.store.path) not in nokey.details  # the data folder is the log's to know, not the caller's
        assert (await _on(svc, "GetTournament", keyed)).state == CREATED and svc.runs == {}

    _run(tmp_path, body)


def test_a_ladder_is_paused_resumed_and_stopped(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        ladder = ref_pb.LadderConfig(open=True)
        tid = (await _create(svc, "lad", table_size=2, ladder=ladder)).tournament_id
        paused = await _on(svc, "PauseTournament", tid)
        assert paused.state == PAUSED and (await _on(svc, "PauseTournament", tid)).state == PAUSED
        assert svc.registry.state(tid) == ("paused", "organiser1")
        resumed = await _on(svc, "StartTournament", tid)
        assert resumed.state == RUNNING and list(svc.runs) == [tid]
        assert (await _on(svc, "PauseTournament", tid)).state == PAUSED and svc.runs == {}
        stopped = await _on(svc, "StopTournament", tid)
        assert stopped.state == FINISHED and (await _on(svc, "StopTournament", tid)).state == FINISHED
        refused = await _refused(_on(svc, "PauseTournament", tid))
        assert (refused.code, refused.details) == (grpc.StatusCode.FAILED_PRECONDITION, f"ladder {tid} is finished")
        other = (await _create(svc, "lad2", table_size=2, ladder=ladder)).tournament_id
        await _on(svc, "CancelTournament", other)
        for call in ("PauseTournament", "StopTournament"):
            refused = await _refused(_on(svc, call, other))
            assert (refused.code, refused.details) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                       f"ladder {other} is cancelled")  # fmt: skip

    _run(tmp_path, body)


def test_a_running_ladder_stopped_plays_what_it_chose_then_finishes(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "run", table_size=2, ladder=ref_pb.LadderConfig(open=True))).tournament_id
        await _on(svc, "StartTournament", tid)
        assert (await _on(svc, "StopTournament", tid)).state == RUNNING  # it ends its rounds first
        assert (await _until_finished(svc, tid)).state == FINISHED and svc.runs == {}

    _run(tmp_path, body)


def test_only_a_ladder_is_paused_or_stopped(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        tid = (await _create(svc, "plain")).tournament_id
        for call in ("PauseTournament", "StopTournament"):
            refused = await _refused(_on(svc, call, tid))
            assert refused.code == grpc.StatusCode.FAILED_PRECONDITION
            assert refused.details == f"tournament {tid} is not a ladder: only a ladder is paused or stopped"
            author = await _refused(_on(svc, call, tid, AUTHOR))
            assert author.code == grpc.StatusCode.PERMISSION_DENIED
        assert (await _on(svc, "GetTournament", tid)).state == CREATED

    _run(tmp_path, body)


def test_tournaments_are_got_and_listed_a_page_at_a_time(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        tids = [(await _create(svc, f"n{i}")).tournament_id for i in range(3)]
        got = await _on(svc, "GetTournament", tids[1], AUTHOR)
        assert (got.tournament_id, got.name, got.state) == (tids[1], "n1", CREATED)
        assert (await _refused(_on(svc, "GetTournament", "nope"))).code == grpc.StatusCode.NOT_FOUND
        assert (await _refused(_on(svc, "GetTournament", ""))).code == grpc.StatusCode.INVALID_ARGUMENT
        first = await svc.ListTournaments(ref_pb.ListTournamentsRequest(page_size=2), Context(AUTHOR))
        assert [t.tournament_id for t in first.tournaments] == tids[:2] and first.next_page_token == "2"
        rest = await svc.ListTournaments(ref_pb.ListTournamentsRequest(page_size=2, page_token="2"), Context(AUTHOR))
        assert [t.tournament_id for t in rest.tournaments] == tids[2:] and rest.next_page_token == ""
        whole = await svc.ListTournaments(ref_pb.ListTournamentsRequest(page_size=3), Context(FIRST))
        assert [t.tournament_id for t in whole.tournaments] == tids and whole.next_page_token == ""

    _run(tmp_path, body)


def test_a_retired_bots_entries_stay_and_each_tournament_keeps_its_creator(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        svc.registry.add_bot("ag", "127.0.0.1:7001", "alice", "1", "Al", "g1")
        mine = await _create(svc, "mine", [{"bot": "ag"}, {"policy": "random"}])
        theirs = await _create(svc, "theirs", token=SECOND)
        assert svc.registry.state(mine.tournament_id)[1] == "organiser1"
        assert svc.registry.state(theirs.tournament_id)[1] == "organiser2"
        svc.registry.retire_bot("ag", 1)
        assert svc.registry.bot("ag").state == RETIRED  # type: ignore[union-attr]
        assert svc.registry.linked(mine.tournament_id) == {"ag": ("ag", 1)}  # its entry stays with what it played

    _run(tmp_path, body)


def test_a_config_with_several_mistakes_has_each_named_on_its_own_line(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        refused = await _refused(_create(svc, "many", table_size=9, deals=-1))
        assert refused.code == grpc.StatusCode.INVALID_ARGUMENT
        assert refused.details.splitlines()[1:] == ["  config: table_size: 9 is out of range (2 to 5)",
                                                    "  config: deals: -1 is out of range (1 to 100000)"]  # fmt: skip
        assert svc.store.tournaments() == []

    _run(tmp_path, body)
