"""What the match runner (referee/match/runner.py) tells the seats at the start, writes in the record, logs and
returns: the GameStart each bot gets (its seat, the players, its time), a seat retired before its first decision
and why, a bot process's end named in its fault, a retired seat placed last whatever its score, and a record that
verifies with the salt and the retired seats in its footer. Scripted in-process seats, as in test_runner_clock.py;
real bots over gRPC: test_faults.py."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest

from referee.engine import RULES_VERSION, Options, deck_from_seed
from referee.log import configure
from referee.match import EntrantRef, GameSpec, TimeControl, exits, play_game
from referee.match import runner as match_runner
from referee.match.builtin import BuiltinSeat
from referee.match.seats import SeatError
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as game_pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records import commitment, read_record, verify_record
from referee.wire import options_pb

from .test_runner_clock import TC, Scripted, Stalled, fault

F = rec_pb
SALT = bytes(range(16))


class Seat(Scripted):
    """A Scripted seat that keeps its GameStart and the seq of each request, and can fail its start."""

    def __init__(self, name: str, script: dict[int, Any] | None = None, fail_start: BaseException | None = None,
                 fail_connect: BaseException | None = None) -> None:  # fmt: skip
        super().__init__(name, script)
        self.starts: list[bot_pb.GameStart] = []
        self.seqs: list[int] = []
        self.fail_start, self.fail_connect = fail_start, fail_connect

    async def connect(self) -> None:
        if self.fail_connect is not None:
            raise self.fail_connect
        await super().connect()

    async def start(self, start: bot_pb.GameStart) -> None:
        self.starts.append(start)
        if self.fail_start is not None:
            raise self.fail_start
        await super().start(start)

    async def decide(self, request: bytes, seq: int, allowance_s: float) -> Any:
        self.seqs.append(seq)
        return await super().decide(request, seq, allowance_s)


def _spec(seed: int = 11, n: int = 2, **kw: Any) -> GameSpec:
    entrants = tuple(EntrantRef(f"s{i}", policy="greedy") for i in range(n))
    return GameSpec("g", seed, entrants, **{"time_control": TC, **kw})


def _game(spec: GameSpec, seats: list[Any], monkeypatch, **kw: Any) -> Any:
    monkeypatch.setattr(match_runner, "lag_monitor", lambda: Stalled(0.0))
    return asyncio.run(play_game(spec, seats, **kw))


def test_each_seat_is_told_its_seat_the_players_and_its_time(monkeypatch) -> None:
    tc = TimeControl(decision_ms=700, bank_ms=9000, grace_ms=40)
    spec = _spec(n=3, time_control=tc, start_seat=2, options=Options(draw_one=True))
    seats = [Seat(f"s{i}") for i in range(3)]
    seats[1].version = "v-two"
    _game(spec, seats, monkeypatch, salt=SALT)
    deck = deck_from_seed(11)
    for i, seat in enumerate(seats):
        (start,) = seat.starts
        assert start.seat == i and start.game_id == "g" and start.start_seat == 2
        assert [(p.seat, p.name, p.version) for p in start.players] == [
            (0, "s0", seats[0].version), (1, "s1", "v-two"), (2, "s2", seats[2].version)]  # fmt: skip
        assert (start.time_control.decision_ms, start.time_control.bank_ms, start.time_control.grace_ms) == (
            700, 9000, 40)  # fmt: skip
        assert start.options.draw_one and not start.options.end_on_empty_pile
        assert start.options == options_pb(spec.options) and start.rules_version == RULES_VERSION
        assert start.deck_commitment == commitment(SALT, deck)
        assert seat.seqs == [r.seq for r in seat.requests] and seat.seqs  # each request's seq, as the seat is asked


@pytest.mark.parametrize(
    ("where", "error", "kind", "detail"),
    [("connect", OSError("no route"), F.FAULT_KIND_UNREACHABLE, "could not connect: OSError: no route"),
     ("start", SeatError(F.FAULT_KIND_MALFORMED, "bad GameStart reply"), F.FAULT_KIND_MALFORMED, "bad GameStart reply"),
     ("start", RuntimeError("policy bug"), F.FAULT_KIND_UNREACHABLE, "could not start: RuntimeError: policy bug")],
)  # fmt: skip
def test_a_seat_that_fails_before_its_first_decision_retires_with_why(monkeypatch, where, error, kind, detail) -> None:
    """Its first decision's record names the fault, the fallback plays it throughout, it places last; the other
    seat plays on, and only seats still playing are started."""
    seats = [Seat("s0", **{f"fail_{where}": error}), Seat("s1")]
    records: list[rec_pb.DecisionRecord] = []
    result = _game(_spec(), seats, monkeypatch,
                   on_decision=lambda b: records.append(rec_pb.DecisionRecord.FromString(b)))  # fmt: skip
    mine = [d for d in records if d.seat == 0]
    assert (mine[0].fault, mine[0].fault_detail, mine[0].retired) == (kind, detail, True)
    assert all(d.chosen_by == F.CHOOSER_FALLBACK for d in mine) and seats[0].requests == []
    assert result.seats[0].retired and list(result.places) == [2, 1] and seats[1].requests
    assert len(seats[0].starts) == (where == "start") and len(seats[1].starts) == 1


def test_a_bot_process_that_ended_is_named_in_its_fault(monkeypatch) -> None:
    """A seat whose stream broke for good (a fatal DISCONNECTED): the fault says how its local process ended. Its
    answers before carry no fault words."""
    address = "127.0.0.1:9"
    seats = [Seat("s0", {3: fault(F.FAULT_KIND_DISCONNECTED, "stream closed", fatal=True)}), Seat("s1")]
    seats[0].address = address
    exits.watch(address)
    exits.exited(address, "the bot's process exited with code 7")
    records: list[rec_pb.DecisionRecord] = []
    try:
        _game(_spec(), seats, monkeypatch, on_decision=lambda b: records.append(rec_pb.DecisionRecord.FromString(b)))
    finally:
        exits.forget(address)
    mine = [d for d in records if d.seat == 0]
    assert [d.fault_detail for d in mine[:2]] == ["", ""]
    assert mine[2].fault_detail == "the bot's process exited with code 7 (stream closed)" and mine[2].retired


def test_a_fallback_seat_is_never_asked_and_its_moves_are_its_own(monkeypatch) -> None:
    seats = [BuiltinSeat.from_policy("f", "fallback", 1), Seat("s1")]
    records: list[rec_pb.DecisionRecord] = []
    result = _game(_spec(), seats, monkeypatch,
                   on_decision=lambda b: records.append(rec_pb.DecisionRecord.FromString(b)))  # fmt: skip
    mine = [d for d in records if d.seat == 0]
    assert mine and all(d.chosen_by == F.CHOOSER_BOT and d.fault == 0 for d in mine)
    assert not result.seats[0].retired and result.seats[0].faults == {}


def test_the_record_holds_the_game_its_players_times_and_who_retired(monkeypatch, tmp_path) -> None:
    """Seed 35: seat 0 leads 15 to 9 when its stream drops at its last decision; retired, it places last. The
    record (without an on_decision) verifies, its header names the players as their seats said, its footer reveals
    the salt and names the retired seat; the result says the same."""
    seats = [Seat("s0", {1: {"transport_us": 777}, 16: fault(F.FAULT_KIND_DISCONNECTED, "gone", fatal=True)}),
             Seat("s1")]  # fmt: skip
    seats[1].author, seats[1].address, seats[1].transport = "Ada", "127.0.0.1:8", "stream"
    seats[1].kind = F.SEAT_KIND_REMOTE
    tc = TimeControl(decision_ms=1000, bank_ms=500, grace_ms=45)
    spec = _spec(35, time_control=tc, start_seat=0, max_strikes=5, tournament_id="t-1")
    path = tmp_path / "g.rec"
    result = _game(spec, seats, monkeypatch, record_path=path, salt=SALT)
    record = read_record(path)
    verify_record(record)
    h = record.header
    assert (h.game_id, h.tournament_id, h.seed, h.start_seat, h.max_strikes) == ("g", "t-1", 35, 0, 5)
    assert list(h.deck) == list(deck_from_seed(35)) and h.commitment == commitment(SALT, deck_from_seed(35))
    assert (h.time_control.decision_ms, h.time_control.bank_ms, h.time_control.grace_ms) == (1000, 500, 45)
    assert h.options == options_pb(spec.options)
    assert [(p.seat, p.name, p.version, p.author, p.address, p.kind, p.transport) for p in h.players] == [
        (0, "s0", seats[0].version, seats[0].author, seats[0].address, seats[0].kind, seats[0].transport),
        (1, "s1", seats[1].version, "Ada", "127.0.0.1:8", F.SEAT_KIND_REMOTE, "stream")]  # fmt: skip
    mine = [d for d in record.decisions if d.seat == 0]
    assert mine[0].transport_us == 777 and mine[15].retired and mine[15].fault == F.FAULT_KIND_DISCONNECTED
    end = record.footer
    assert end.salt == SALT and list(end.retired) == [0]
    assert list(end.scores) == [15, 9] and list(end.places) == [2, 1]  # the leader retired: last
    assert result.record_path == path and result.game_id == "g" and result.decisions == len(record.decisions)
    assert (list(result.scores), list(result.places)) == ([15, 9], [2, 1])
    assert result.final_digest == end.final_digest and result.end_reason.value == "empty_hand"
    assert end.reason == game_pb.END_REASON_EMPTY_HAND
    assert result.referee_faults == 0


@pytest.mark.parametrize("options", [Options(draw_one=True), Options(end_on_empty_pile=True)])
def test_the_record_replays_with_the_games_options_and_first_seat(monkeypatch, tmp_path, options) -> None:
    path = tmp_path / "g.rec"
    spec = _spec(11, start_seat=1, options=options)
    _game(spec, [Seat("s0"), Seat("s1")], monkeypatch, record_path=path)
    record = read_record(path)
    assert record.header.start_seat == 1 and record.decisions[0].seat == 1
    assert record.header.options == options_pb(options)
    verify_record(record)  # replayed with the header's options and first seat


def test_the_game_over_and_its_faults_are_logged_with_the_game_and_the_bot(monkeypatch) -> None:
    out = io.StringIO()
    configure("debug", json=True, stream=out)
    try:
        spec = GameSpec("g-log", 11, (EntrantRef("s0", address="127.0.0.1:7"), EntrantRef("s1", policy="greedy")),
                        time_control=TC)  # fmt: skip
        timeouts = {1: fault(F.FAULT_KIND_TIMEOUT, "late")}
        monkeypatch.setattr(match_runner, "lag_monitor", lambda: Stalled(1.0))  # the first: the referee's fault
        seats = [Seat("s0", timeouts), Seat("s1", {2: fault(F.FAULT_KIND_INVALID, "bad")})]
        result = asyncio.run(play_game(spec, seats))
    finally:
        configure("info")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    (over,) = [x for x in lines if x["event"] == "game over"]
    assert over["game_id"] == "g-log" and over["decisions"] == result.decisions
    assert (over["scores"], over["places"]) == (list(result.scores), list(result.places))
    assert over["retired"] == [] and over["referee_faults"] == 1
    bots = {x["seat"]: x["bot"] for x in lines if x["event"] in ("fault", "referee fault")}
    assert bots == {0: "127.0.0.1:7", 1: "builtin:greedy"}
