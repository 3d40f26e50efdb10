"""The compliance check a submitted bot goes through (referee/service/submit.py), called in this process so that
mutation testing sees it (scripts/mutation.py); test_submit.py checks the same through a spawned server. The bots
are real processes (tests/fixtures/bad_bots.py, ``abluxx bot greedy``), and a gRPC server in the test answers Hello
with the status each test chooses. What an author sees: a Hello failure in generic words, a validation game's
refusal naming the decision, its fault and the time control, the record kept with its owner beside it, and their
refusals listed latest first."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
from pathlib import Path

import grpc
import pytest
from structlog.testing import capture_logs

from referee.match.spec import TimeControl
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records import read_record
from referee.records.paths import record_in
from referee.service.settings import Settings
from referee.service.submit import (
    Passed,
    Refused,
    _time_words,
    check_bot,
    check_hello,
    owner_of,
    refusals_of,
)

from .helpers import start_bot

pytestmark = pytest.mark.usefixtures("every_log_level")  # tests/conftest.py: capture_logs sees info events

HELLO, GAME = ref_pb.COMPLIANCE_CHECK_HELLO, ref_pb.COMPLIANCE_CHECK_VALIDATION_GAME
# Generous for the good answers a validation game needs before its fault (a loaded machine can hold a bot's answer
# for a second), and short enough that a hanging bot is refused in 3.5 s
TC = TimeControl(decision_ms=2000, bank_ms=1000, grace_ms=500)


def _settings(**fields) -> Settings:
    return Settings(time_control=TC, **fields)


class _Abort(grpc.GenericRpcHandler):
    """A gRPC server's handler whose every method ends with ``code`` (UNIMPLEMENTED: no Bot service at all)."""

    def __init__(self, code: grpc.StatusCode) -> None:
        self.code = code

    def service(self, details):
        if self.code == grpc.StatusCode.UNIMPLEMENTED:
            return None

        async def abort(request, context) -> bytes:
            await context.abort(self.code, "the far end's own words")
            return b""

        return grpc.unary_unary_rpc_method_handler(abort)


async def _hello_from(code: grpc.StatusCode) -> ref_pb.Refusal:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([_Abort(code)])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        with capture_logs() as logs:
            out = await check_hello(f"127.0.0.1:{port}")
    finally:
        await server.stop(None)
    assert isinstance(out, ref_pb.Refusal) and out.check == HELLO, out
    (said,) = [e for e in logs if e["event"] == "Hello failed"]
    assert said["address"] == f"127.0.0.1:{port}" and said["service"] == "referee" and said["log_level"] == "info"
    assert said["error"]
    return out


@pytest.mark.parametrize(
    ("code", "reason"),
    [(grpc.StatusCode.UNAVAILABLE, "unreachable"), (grpc.StatusCode.DEADLINE_EXCEEDED, "unreachable"),
     (grpc.StatusCode.UNIMPLEMENTED, "not an abluxxen bot"), (grpc.StatusCode.PERMISSION_DENIED, "Hello refused"),
     (grpc.StatusCode.INTERNAL, "Hello refused")],
)  # fmt: skip
def test_a_hello_that_fails_is_refused_in_generic_words_and_the_far_ends_go_to_the_log(code, reason) -> None:
    out = asyncio.run(_hello_from(code))
    assert out.reason == reason and "far end" not in out.reason


def test_nothing_listening_is_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = asyncio.run(check_hello(f"127.0.0.1:{port}"))
    assert isinstance(out, ref_pb.Refusal) and (out.check, out.reason) == (HELLO, "unreachable")


def test_a_reply_that_is_not_a_bots_says_why_in_the_referees_words(tmp_path: Path) -> None:
    bot = start_bot("bad:wrong-version")
    try:
        out = asyncio.run(check_bot("old", bot.address, _settings(), tmp_path / "v", "alice"))
    finally:
        bot.stop()
    assert isinstance(out, ref_pb.Refusal) and out.check == HELLO
    assert out.reason == "not an abluxxen bot: it speaks protocol version 2; the referee speaks 1"
    assert not (tmp_path / "v").exists()  # no validation game was played


def test_a_good_bot_passes_after_a_validation_game_kept_with_its_owner(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "validation"
    bot = start_bot("greedy")
    try:
        out = asyncio.run(_check("mine", bot.address, folder, "alice", validation_opponents=("counter", "random")))
    finally:
        bot.stop()
    assert isinstance(out, Passed), out
    assert out.hello.name == "greedy" and out.hello.protocol_version == bot_pb.PROTOCOL_VERSION_1
    prefix, hexpart = out.game_id[: len("validate-mine-")], out.game_id[len("validate-mine-") :]
    assert prefix == "validate-mine-" and len(hexpart) == 8 and int(hexpart, 16) >= 0
    record = read_record(record_in(folder, out.game_id))
    assert record.complete
    assert [(p.name, p.address) for p in record.header.players] == [
        ("mine", bot.address), ("counter-1", ""), ("random-2", "")]  # fmt: skip
    assert not any(d.fault for d in record.decisions)
    assert owner_of(folder, out.game_id) == "alice" and refusals_of(folder, "alice") == []
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


async def _check(name: str, address: str, folder: Path, owner: str | None, **settings) -> ref_pb.Refusal | Passed:
    """check_bot, and no task of it left behind: the validation game and the wait for its first fault are over."""
    more = {} if owner is None else {"owner": owner}
    out = await check_bot(name, address, _settings(**settings), folder, **more)
    left = [t.get_coro().__qualname__ for t in asyncio.all_tasks() if not t.done()]
    assert not {"play_game", "Event.wait"} & set(left), left
    return out


def _refused(mode: str, folder: Path, *extra: str, owner: str | None = "alice") -> ref_pb.Refusal:
    bot = start_bot(f"bad:{mode}", *extra)
    try:
        with capture_logs() as logs:
            out = asyncio.run(_check(mode, bot.address, folder, owner))
    finally:
        bot.stop()
    assert isinstance(out, ref_pb.Refusal) and out.check == GAME, out
    record = read_record(record_in(folder, out.game_id))
    assert record.header.game_id == out.game_id and record.header.max_strikes == 1
    tc = record.header.time_control
    assert (tc.decision_ms, tc.bank_ms, tc.grace_ms) == (TC.decision_ms, TC.bank_ms, TC.grace_ms)
    # the first fault that costs a strike: on a loaded machine the referee's own stalls come first (no strike)
    faulted = next(d for d in record.decisions if d.seat == 0 and d.fault not in (0, rec_pb.FAULT_KIND_REFEREE))
    assert (faulted.seq, faulted.kind, faulted.fault) == (out.seq, out.kind, out.fault)
    (said,) = [e for e in logs if e["event"] == "validation game fault"]
    assert (said["bot"], said["game_id"], said["seq"], said["service"], said["detail"]) == (
        mode, out.game_id, out.seq, "referee", faulted.fault_detail)  # fmt: skip
    assert said["fault"] in out.reason
    kind = {1: "play", 2: "take_or_decline", 3: "reclaim_or_discard", 4: "draw", 5: "draw_one"}[out.kind]
    tail = f": {faulted.fault_detail}" if faulted.fault_detail else ""
    words = _time_words(TC, faulted.bank_left_ms) if out.fault == rec_pb.FAULT_KIND_TIMEOUT else ""
    assert (
        out.reason
        == f"validation game {out.game_id}: fault {said['fault']} at decision {out.seq} ({kind}){tail}{words}"
    )
    return out


def test_an_invalid_answer_refuses_the_bot_naming_the_decision_and_its_error(tmp_path: Path) -> None:
    folder = tmp_path / "v"
    out = _refused("error", folder, "--after", "2")
    assert out.fault == rec_pb.FAULT_KIND_INVALID and out.seq > 3 and out.kind != 0
    assert ": the bot raised KeyError: 7" in out.reason and "the time control" not in out.reason
    (refusal,) = refusals_of(folder, "alice")
    assert (refusal.game_id, refusal.bot, refusal.reason, refusal.seq) == (out.game_id, "error", out.reason, out.seq)
    assert owner_of(folder, out.game_id) == "alice"


def test_a_timeout_names_the_time_control_and_the_bank_left(tmp_path: Path) -> None:
    out = _refused("hang", tmp_path / "v")
    assert out.fault == rec_pb.FAULT_KIND_TIMEOUT and out.reason.endswith(_time_words(TC, 0))
    assert _time_words(TC, 0) == (
        "; the time control: 2000 ms free a decision, a 1000 ms bank a game that a slower decision draws on, 500 ms "
        "transport grace; the bank left: 0 ms (empty: every decision now has its free time and the grace only)"
    )
    assert _time_words(TC, 150) == (
        "; the time control: 2000 ms free a decision, a 1000 ms bank a game that a slower decision draws on, 500 ms "
        "transport grace; the bank left: 150 ms"
    )


def test_a_bot_that_goes_away_is_refused_and_one_submitted_with_no_owner_has_none(tmp_path: Path) -> None:
    out = _refused("crash", tmp_path / "v", owner=None)
    assert out.fault == rec_pb.FAULT_KIND_DISCONNECTED
    assert owner_of(tmp_path / "v", out.game_id) is None


def _write_refusal(folder: Path, game_id: str, owner: str | None, said: object, at: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if owner is not None:
        record_in(folder, game_id).with_suffix(".owner").write_text(owner + "\n")
    path = record_in(folder, game_id).with_suffix(".refusal")
    path.write_text(said if isinstance(said, str) else json.dumps(said))
    os.utime(path, (at, at))


def test_refusals_are_an_owners_alone_the_latest_first_and_a_damaged_one_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "v"
    assert refusals_of(folder, "alice") == []  # no folder yet
    _write_refusal(folder, "validate-a-1", "alice", {"bot": "a", "reason": "old", "seq": 4}, 1000)
    _write_refusal(folder, "validate-a-2", "alice", {"bot": "a", "reason": "new", "seq": 9}, 3000)
    _write_refusal(folder, "validate-a-3", "alice", {"bot": "a", "reason": "no seq"}, 2000)
    _write_refusal(folder, "validate-a-4", "alice", {"bot": "a", "reason": "odd seq", "seq": "7"}, 1500)
    _write_refusal(folder, "validate-b-1", "bob", {"bot": "b", "reason": "bob's", "seq": 2}, 5000)
    _write_refusal(folder, "validate-a-5", "alice", "{not json", 6000)
    _write_refusal(folder, "validate-a-6", "alice", {"reason": "no bot"}, 6000)
    _write_refusal(folder, "validate-a-7", None, {"bot": "a", "reason": "nobody's"}, 6000)
    (folder / "other-1.refusal").write_text(json.dumps({"bot": "x", "reason": "not a validation game"}))
    assert refusals_of(folder, "alice") == [
        Refused("validate-a-2", "a", "new", 3000, 9),
        Refused("validate-a-3", "a", "no seq", 2000, 0),
        Refused("validate-a-4", "a", "odd seq", 1500, 0),
        Refused("validate-a-1", "a", "old", 1000, 4),
    ]
    assert [r.reason for r in refusals_of(folder, "bob")] == ["bob's"]


def test_owner_of_a_game_with_no_owner_file_or_an_empty_one_is_none(tmp_path: Path) -> None:
    tmp_path.joinpath("validate-x-1.owner").write_text("  bob \n")
    tmp_path.joinpath("validate-x-2.owner").write_text("\n")
    assert owner_of(tmp_path, "validate-x-1") == "bob"
    assert owner_of(tmp_path, "validate-x-2") is None
    assert owner_of(tmp_path, "validate-x-3") is None
    assert owner_of(tmp_path, "validate-x/1") is None  # an id no game can have: no such game, not a lost record
    assert owner_of(tmp_path, "validate-..") is None
