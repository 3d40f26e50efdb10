"""SubmitBot over real gRPC: a good bot is accepted; every kind of bad bot is refused with the check and the
decision that failed, and nothing is stored for it. Bad requests get INVALID_ARGUMENT naming the field."""

from __future__ import annotations

import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest

from referee.cli import main
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

from .helpers import (
    ABLUXX,
    ALICE,
    BOB,
    ORGANISER,
    auth,
    code_of,
    error_of,
    start_bots,
    start_server,
    stub,
    submit,
    write_settings,
)

HELLO = ref_pb.COMPLIANCE_CHECK_HELLO
GAME = ref_pb.COMPLIANCE_CHECK_VALIDATION_GAME

# mode -> (the check that fails, the fault of the decision that fails, words the reason must hold)
BAD = {
    "wrong-version": (HELLO, None, "protocol version 2"),
    "hello-garbage": (HELLO, None, "do not decode"),
    "hello-utf8": (HELLO, None, "do not decode"),
    "hello-nested": (HELLO, None, "do not decode"),
    "hang": (GAME, rec_pb.FAULT_KIND_TIMEOUT, "timeout"),
    "slow": (GAME, rec_pb.FAULT_KIND_TIMEOUT, "timeout"),
    "illegal": (GAME, rec_pb.FAULT_KIND_INVALID, "fault invalid"),
    "out-of-range": (GAME, rec_pb.FAULT_KIND_INVALID, "fault invalid"),
    "bad-seq": (GAME, rec_pb.FAULT_KIND_INVALID, "fault invalid"),
    "garbage": (GAME, rec_pb.FAULT_KIND_MALFORMED, "fault malformed"),
    "huge": (GAME, rec_pb.FAULT_KIND_MALFORMED, "fault malformed"),
    "crash": (GAME, rec_pb.FAULT_KIND_DISCONNECTED, "fault disconnected"),
    "close": (GAME, rec_pb.FAULT_KIND_DISCONNECTED, "fault disconnected"),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submit")
    srv = start_server(folder / "data", write_settings(folder))
    srv.data = folder / "data"  # type: ignore[attr-defined]  # where `abluxx replay` finds its validation games
    yield srv
    srv.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_good_bot_is_accepted_and_a_resubmission_is_a_new_version(server, capsys) -> None:
    s = stub(server.address)
    (bot,) = start_bots(["greedy"])
    try:
        first = submit(s, "greedy-alice", bot.address, ALICE)
        assert first.HasField("entrant"), first.refusal.reason
        e = first.entrant
        assert (e.name, e.version, e.entrant_id, e.owner) == ("greedy-alice", 1, "greedy-alice.v1", "alice")
        assert e.state == ref_pb.ENTRANT_STATE_ACTIVE and e.validation_game_id.startswith("validate-greedy-alice-")
        assert e.bot_version  # from the bot's Hello
        # the validation game can be replayed by its id, as a tournament's games can
        assert main(["replay", e.validation_game_id, "--data", str(server.data)]) == 0
        assert f"game {e.validation_game_id}" in capsys.readouterr().out

        # unchanged (same address, same Hello): refused, naming the version it would repeat; --force makes one
        e = error_of(submit, s, "greedy-alice", bot.address, ALICE)
        assert e.code() == grpc.StatusCode.ALREADY_EXISTS and "greedy-alice.v1" in e.details()
        second = submit(s, "greedy-alice", bot.address, ALICE, force=True).entrant
        assert (second.version, second.entrant_id) == (2, "greedy-alice.v2")
        old = s.GetEntrant(ref_pb.GetEntrantRequest(name="greedy-alice", version=1))
        assert old.state == ref_pb.ENTRANT_STATE_SUPERSEDED
        assert s.GetEntrant(ref_pb.GetEntrantRequest(name="greedy-alice")).version == 2
    finally:
        bot.stop()


def test_every_kind_of_bad_bot_is_refused_with_the_check_and_the_decision(server, tmp_path: Path) -> None:
    s = stub(server.address)
    bots = start_bots([f"bad:{mode}" for mode in BAD])
    try:
        jobs = {mode: (f"bad-{mode}", bot.address) for mode, bot in zip(BAD, bots, strict=True)}
        jobs["unreachable"] = ("bad-unreachable", f"127.0.0.1:{free_port()}")
        with ThreadPoolExecutor(len(jobs)) as pool:
            futures = {mode: pool.submit(submit, s, name, address) for mode, (name, address) in jobs.items()}
            outcomes = {mode: f.result() for mode, f in futures.items()}
    finally:
        for b in bots:
            b.stop()

    for mode, out in outcomes.items():
        assert out.HasField("refusal") and not out.HasField("entrant"), f"{mode} was accepted"
        r = out.refusal
        if mode == "unreachable":
            assert r.check == HELLO and r.reason == "unreachable", r
            continue
        check, fault, words = BAD[mode]
        assert r.check == check, (mode, r)
        assert words in r.reason.lower(), (mode, r.reason)
        if check == GAME:
            # the refusal names the decision: its sequence number, its kind and its fault
            assert r.seq >= 1 and r.fault == fault and r.kind != 0, (mode, r)
            assert f"at decision {r.seq} (" in r.reason and r.game_id in r.reason, r.reason
        if fault == rec_pb.FAULT_KIND_TIMEOUT:  # "within 2191 ms" means little without the clock it was held to
            assert ("the time control: 1000 ms free a decision, a 2000 ms bank a game that a slower decision draws "
                    "on, 500 ms transport grace; the bank left: ") in r.reason, r.reason  # fmt: skip
        else:
            assert "the time control" not in r.reason, r.reason
    # nothing was stored for a refused bot
    listed = {e.name for e in s.ListEntrants(ref_pb.ListEntrantsRequest()).entrants}
    assert not {name for name, _ in jobs.values()} & listed
    assert code_of(s.GetEntrant, ref_pb.GetEntrantRequest(name="bad-hang")) == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(
    ("name", "address", "field"),
    [("", "127.0.0.1:5000", "name"), ("no spaces please", "127.0.0.1:5000", "name"), ("ok", "", "address"),
     ("ok", "localhost", "address"), ("ok", "127.0.0.1:99999", "address")],
)  # fmt: skip
def test_a_bad_submission_is_invalid_argument_naming_the_field(server, name: str, address: str, field: str) -> None:
    s = stub(server.address)
    before = len(s.ListEntrants(ref_pb.ListEntrantsRequest()).entrants)
    err = error_of(submit, s, name, address)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details().startswith(f"{field}:"), err.details()
    assert len(s.ListEntrants(ref_pb.ListEntrantsRequest()).entrants) == before


def test_unknown_ids_are_not_found(server) -> None:
    s = stub(server.address)
    assert code_of(s.GetEntrant, ref_pb.GetEntrantRequest(name="nobody")) == grpc.StatusCode.NOT_FOUND
    assert code_of(s.GetTournament, ref_pb.GetTournamentRequest(tournament_id="nope")) == grpc.StatusCode.NOT_FOUND
    assert code_of(s.GetStandings, ref_pb.GetStandingsRequest(tournament_id="nope")) == grpc.StatusCode.NOT_FOUND
    assert code_of(s.GetGameRecord, ref_pb.GetGameRecordRequest(game_id="nope")) == grpc.StatusCode.NOT_FOUND
    watch = s.WatchGame(ref_pb.WatchGameRequest(game_id="nope"))
    assert code_of(list, watch) == grpc.StatusCode.NOT_FOUND


def test_a_refused_bots_author_sees_why_and_can_fetch_the_validation_game(server, tmp_path: Path) -> None:
    """submit said only "fault invalid at decision 4 (draw)", and `remote record validate-...` was NOT_FOUND: the
    refusal now names the bot's own error text, and its author (and organisers, no one else) may fetch the record."""
    s = stub(server.address)
    (bot,) = start_bots(["bad:error"])
    try:
        out = submit(s, "erring", bot.address, ALICE)
    finally:
        bot.stop()
    r = out.refusal
    assert r.check == GAME and r.fault == rec_pb.FAULT_KIND_INVALID, r
    assert r.reason.endswith(f"at decision {r.seq} ({r.reason.split('(')[1].split(')')[0]}): the bot raised "
                             "KeyError: 7 forged line " + "x" * 176 + "…"), r.reason  # fmt: skip
    record = s.GetGameRecord(ref_pb.GetGameRecordRequest(game_id=r.game_id), metadata=auth(ALICE))
    faulted = next(d for d in record.decisions if d.fault not in (0, rec_pb.FAULT_KIND_REFEREE))  # a strike's
    assert record.header.game_id == r.game_id and faulted.seq == r.seq
    assert faulted.fault_detail.startswith("the bot raised KeyError: 7")  # the author sees the detail
    assert s.GetGameRecord(ref_pb.GetGameRecordRequest(game_id=r.game_id), metadata=auth(ORGANISER)).decisions
    for other in (BOB, None):  # to anyone else it does not exist
        err = error_of(s.GetGameRecord, ref_pb.GetGameRecordRequest(game_id=r.game_id), metadata=auth(other))
        assert err.code() == grpc.StatusCode.NOT_FOUND
    # the CLI a user types, with the author's token
    out_file = tmp_path / "v.abluxx"
    fetched = subprocess.run([*ABLUXX, "remote", "record", r.game_id, "-o", str(out_file), "--server", server.address,
                              "--token", ALICE], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr
    shown = subprocess.run([*ABLUXX, "replay", str(out_file)], capture_output=True, text=True, timeout=120)
    assert "KeyError: 7" in shown.stdout, shown.stdout + shown.stderr
