"""The match runner's clock and faults decision by decision (referee/match/runner.py): the allowance each request
gets, the bank a late answer spends, the referee's own stalls kept off the bot's time, strikes, retiring, and what
the game-over notice reveals. A unit test of the runner: each seat is a built-in policy played in this process,
with some of its answers replaced by a script (late, faulty, fatal), and the referee's stalls come from a clock
the test sets; so it is fast and exact on any machine. Real bots over gRPC: test_faults.py, test_time_control.py."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
from typing import Any

import pytest

from referee.engine import deck_from_seed
from referee.log import configure
from referee.match import EntrantRef, GameSpec, TimeControl, play_game
from referee.match import runner as match_runner
from referee.match.builtin import BuiltinSeat
from referee.match.clock import LagMonitor
from referee.match.runner import fault_name
from referee.match.seats import SeatAnswer, SeatError
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

F = rec_pb
TC = TimeControl(decision_ms=1000, bank_ms=500, grace_ms=50)


class Stalled(LagMonitor):
    def __init__(self, stall_s: float) -> None:
        super().__init__()
        self.stall_s = stall_s

    def worst_since(self, t0: float) -> float:
        float(t0)  # the decision's start, as the real monitor compares it
        return self.stall_s


class Scripted:
    """A built-in greedy seat whose ``n``-th answer (1-based) is replaced: ``script[n]`` is a SeatAnswer, or a dict
    of fields to set on the real answer (``bot_us`` for a late one). Keeps the allowances and the notice."""

    def __init__(self, name: str, script: dict[int, Any] | None = None, unreachable: str = "") -> None:
        self.inner = BuiltinSeat.from_policy(name, "greedy", 1)
        self.unreachable = unreachable
        self.requests: list[bot_pb.DecisionRequest] = []
        self.name, self.version, self.author = name, self.inner.version, self.inner.author
        self.address, self.kind, self.transport = self.inner.address, self.inner.kind, self.inner.transport
        self.script = script or {}
        self.allowances: list[float] = []
        self.notices: list[bot_pb.GameOverNotice | None] = []

    @property
    def is_fallback(self) -> bool:
        return False

    async def connect(self) -> None:
        if self.unreachable:
            raise SeatError(F.FAULT_KIND_UNREACHABLE, self.unreachable)
        await self.inner.connect()

    async def start(self, start: bot_pb.GameStart) -> None:
        await self.inner.start(start)

    async def decide(self, request: bytes, seq: int, allowance_s: float) -> SeatAnswer:
        self.allowances.append(allowance_s)
        self.requests.append(bot_pb.DecisionRequest.FromString(request))
        answer = await self.inner.decide(request, seq, allowance_s)
        step = self.script.get(len(self.allowances))
        if isinstance(step, SeatAnswer):
            return step
        return dataclasses.replace(answer, **step) if step else answer

    async def finish(self, notice: bot_pb.GameOverNotice | None) -> None:
        self.notices.append(notice)
        await self.inner.finish(notice)


ALL: list[rec_pb.DecisionRecord] = []  # every decision of the last game _play played


def _play(script: dict[int, Any], stall_s: float = 0.0, tc: TimeControl = TC, max_strikes: int = 3,
          reveal: bool = True, monkeypatch: pytest.MonkeyPatch | None = None,
          unreachable: str = "") -> tuple[Any, list[Scripted], list]:  # fmt: skip
    """A two-seat game, seat 0 scripted; (result, seats, seat 0's decision records)."""
    assert monkeypatch is not None
    monkeypatch.setattr(match_runner, "lag_monitor", lambda: Stalled(stall_s))
    seats = [Scripted("s0", script, unreachable), Scripted("s1")]
    spec = GameSpec("g", 11, (EntrantRef("s0", policy="greedy"), EntrantRef("s1", policy="greedy")),
                    time_control=tc, max_strikes=max_strikes, reveal_deal=reveal)  # fmt: skip
    records: list[rec_pb.DecisionRecord] = []
    result = asyncio.run(play_game(spec, seats, on_decision=lambda b: records.append(
        rec_pb.DecisionRecord.FromString(b))))  # fmt: skip
    ALL[:] = records
    return result, seats, [d for d in records if d.seat == 0]


def fault(kind: int, detail: str = "x", fatal: bool = False) -> SeatAnswer:
    return SeatAnswer(None, kind, detail, 1234, 0, fatal)


def test_the_allowance_is_the_decision_the_bank_left_and_the_grace(monkeypatch) -> None:
    # answer 1 is 200 ms over its decision time: the bank pays; answer 2 is 400 ms over, a 150 ms stall is not
    # the bot's: 250 ms from the bank; answer 3 is over by more than the bank has left: it is emptied, no fault
    script = {1: {"bot_us": 1_200_000}, 2: {"bot_us": 1_400_000}, 3: {"bot_us": 1_900_000}}
    result, seats, mine = _play(script, stall_s=0.15, monkeypatch=monkeypatch)
    assert seats[0].allowances[:4] == [pytest.approx(x) for x in (1.55, 1.5, 1.25, 1.05)]
    # stall 150 ms off each late answer: 200-150 = 50, 400-150 = 250, then 900-150 = 750 > 200 left
    assert [d.bank_left_ms for d in mine[:4]] == [450, 200, 0, 0]
    assert all(d.fault == 0 and d.chosen_by == F.CHOOSER_BOT for d in mine)
    assert result.seats[0].decision_us[:3] == [1_200_000, 1_400_000, 1_900_000]
    _, seats, mine = _play({1: {"bot_us": 1_000_000}, 2: {"bot_us": 1_001_000}}, monkeypatch=monkeypatch)
    assert [d.bank_left_ms for d in mine[:2]] == [500, 499]  # exactly on time costs nothing; 1 ms over costs 1
    tc = TimeControl(decision_ms=1000, bank_ms=2000, grace_ms=50)
    _, _, mine = _play({1: {"bot_us": 2_500_000}}, stall_s=1.0, tc=tc, monkeypatch=monkeypatch)
    assert mine[0].bank_left_ms == 1500  # 1500 ms over, 1000 of them the referee's stall


def test_each_referee_fault_is_counted_and_logged(monkeypatch) -> None:
    out = io.StringIO()
    configure("info", json=True, stream=out)
    try:
        timeouts = {n: fault(F.FAULT_KIND_TIMEOUT, f"late {n}") for n in (1, 2)}
        result, _, mine = _play(timeouts, stall_s=1.0, monkeypatch=monkeypatch)
    finally:
        configure("info")
    assert result.referee_faults == 2 and [d.fault for d in mine[:2]] == [F.FAULT_KIND_REFEREE] * 2
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    logged = [(x["seq"], x["detail"]) for x in lines if x["event"] == "referee fault"]
    assert logged == [(d.seq, d.fault_detail) for d in mine[:2]]
    assert logged[1][1] == "the referee's event loop stalled 1000 ms (late 2)"


@pytest.mark.parametrize(
    ("grace_ms", "stall_s", "kind"),
    [(50, 0.049, F.FAULT_KIND_TIMEOUT), (50, 0.04996, F.FAULT_KIND_TIMEOUT), (50, 0.05, F.FAULT_KIND_REFEREE),
     (50, 1.0, F.FAULT_KIND_REFEREE), (0, 0.0199, F.FAULT_KIND_TIMEOUT), (0, 0.02, F.FAULT_KIND_REFEREE),
     (10, 0.015, F.FAULT_KIND_TIMEOUT)],
)  # fmt: skip
def test_a_timeout_during_a_stall_of_the_grace_and_20_ms_is_the_referees(monkeypatch, grace_ms, stall_s, kind) -> None:
    tc = TimeControl(decision_ms=1000, bank_ms=500, grace_ms=grace_ms)
    result, _, mine = _play({1: fault(F.FAULT_KIND_TIMEOUT, "no answer")}, stall_s, tc, monkeypatch=monkeypatch)
    first = mine[0]
    assert first.fault == kind and first.chosen_by == F.CHOOSER_FALLBACK and not first.retired
    if kind == F.FAULT_KIND_REFEREE:
        assert first.bank_left_ms == 500 and result.referee_faults == 1 and result.seats[0].faults == {}
        assert first.fault_detail == f"the referee's event loop stalled {stall_s * 1000:.0f} ms (no answer)"
        assert result.seats[0].first_fault == ""
    else:
        assert first.bank_left_ms == 0 and result.referee_faults == 0 and result.seats[0].faults == {"timeout": 1}
        assert first.fault_detail == "no answer"
        assert result.seats[0].first_fault == "timeout at decision 1: no answer"


def test_a_fatal_timeout_is_the_bots_whatever_the_stall(monkeypatch) -> None:
    result, _, mine = _play({1: fault(F.FAULT_KIND_TIMEOUT, "gone", fatal=True)}, 5.0, monkeypatch=monkeypatch)
    assert mine[0].fault == F.FAULT_KIND_TIMEOUT and mine[0].retired and result.referee_faults == 0
    assert result.seats[0].retired and result.places[0] == 2


def test_strikes_retire_at_max_and_a_fatal_fault_at_once(monkeypatch) -> None:
    bad = {n: fault(F.FAULT_KIND_INVALID, f"bad {n}") for n in (1, 2, 3)}
    result, seats, mine = _play(bad, max_strikes=4, monkeypatch=monkeypatch)
    assert [d.retired for d in mine[:4]] == [False] * 4 and not result.seats[0].retired
    assert result.seats[0].faults == {"invalid": 3} and result.seats[0].first_fault == "invalid at decision 1: bad 1"
    assert mine[3].chosen_by == F.CHOOSER_BOT  # it plays again after its strikes
    result, seats, mine = _play(bad, max_strikes=3, monkeypatch=monkeypatch)
    assert [d.retired for d in mine[:3]] == [False, False, True] and result.seats[0].retired
    after = mine[3]
    assert after.fault == F.FAULT_KIND_RETIRED and after.chosen_by == F.CHOOSER_FALLBACK
    assert after.fault_detail == "the seat has retired; the fallback plays it"
    assert all(d.fault == F.FAULT_KIND_RETIRED for d in mine[3:]) and len(seats[0].allowances) == 3
    assert seats[0].notices == [None, None]  # closed when it retired, and told nothing at the end
    assert seats[1].notices[0] is not None
    assert list(result.places) == [2, 1]
    result, seats, mine = _play({2: fault(F.FAULT_KIND_DISCONNECTED, "dropped", fatal=True)}, max_strikes=100,
                                monkeypatch=monkeypatch)  # fmt: skip
    assert mine[1].fault == F.FAULT_KIND_DISCONNECTED and mine[1].retired and len(seats[0].allowances) == 2
    assert result.seats[0].faults == {"disconnected": 1}


def test_a_reply_naming_no_legal_action_is_invalid(monkeypatch) -> None:
    reply = bot_pb.DecisionReply(game_id="g", seq=1, index=10_000)
    _, _, mine = _play({1: SeatAnswer(reply, 0, "", 10, 0, False)}, monkeypatch=monkeypatch)
    assert mine[0].fault == F.FAULT_KIND_INVALID and mine[0].chosen_by == F.CHOOSER_FALLBACK
    assert "10000" in mine[0].fault_detail, mine[0].fault_detail


@pytest.mark.parametrize("reveal", [True, False])
def test_the_game_over_notice_reveals_the_deal_only_when_the_spec_says(monkeypatch, reveal: bool) -> None:
    result, seats, _ = _play({}, reveal=reveal, monkeypatch=monkeypatch)
    for i, seat in enumerate(seats):
        (notice,) = seat.notices
        assert notice is not None and notice.seat == i and notice.game_id == "g"
        assert list(notice.scores) == list(result.scores) and list(notice.places) == list(result.places)
        assert len(notice.deck_commitment) == 32
        if reveal:
            assert list(notice.deck) == list(deck_from_seed(11)) and len(notice.salt) == 16
        else:
            assert list(notice.deck) == [] and notice.salt == b""


def test_fault_names_are_the_stats_keys() -> None:
    assert [fault_name(k) for k in (F.FAULT_KIND_TIMEOUT, F.FAULT_KIND_INVALID, F.FAULT_KIND_DISCONNECTED)] == [
        "timeout", "invalid", "disconnected"]  # fmt: skip


def test_each_request_tells_the_seat_its_game_time_and_every_event_once(monkeypatch) -> None:
    _, seats, _ = _play({1: {"bot_us": 1_200_000}}, monkeypatch=monkeypatch)
    requests = seats[0].requests
    assert all(r.game_id == "g" and r.seat == 0 and r.decision_ms == 1000 for r in requests)
    assert [r.bank_ms for r in requests[:3]] == [500, 300, 300]
    assert [r.seq for r in requests] == sorted({r.seq for r in requests}) and requests[0].seq >= 1
    everything = [e.WhichOneof("event") for d in ALL for e in d.events]
    assert len(everything) > match_runner.TRIM_EVENTS  # long enough to drop the events sent to all
    for seat in seats:
        (notice,) = seat.notices
        told = [e.WhichOneof("event") for r in seat.requests for e in r.events] + [
            e.WhichOneof("event") for e in notice.events]  # fmt: skip
        assert told == everything  # each event once, in order, whoever was asked in between


def test_a_seat_that_cannot_be_reached_is_played_by_the_fallback_and_says_why_once(monkeypatch) -> None:
    result, seats, mine = _play({}, unreachable="no Hello", monkeypatch=monkeypatch)
    assert seats[0].allowances == [] and result.seats[0].retired and list(result.places) == [2, 1]
    first = mine[0]
    assert first.fault == F.FAULT_KIND_UNREACHABLE and first.fault_detail == "no Hello" and first.retired
    assert first.chosen_by == F.CHOOSER_FALLBACK
    assert all(d.fault == F.FAULT_KIND_RETIRED and not d.retired for d in mine[1:])
    assert all(d.fault_detail == "the seat has retired; the fallback plays it" for d in mine[1:])
    assert result.seats[0].faults == {"unreachable": 1} and result.seats[1].faults == {}


def test_retiring_is_logged_once_with_its_fault(monkeypatch) -> None:
    out = io.StringIO()
    configure("info", json=True, stream=out)
    try:
        _play({1: fault(F.FAULT_KIND_MALFORMED, "garbage", fatal=True)}, monkeypatch=monkeypatch)
    finally:
        configure("info")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    retired = [x for x in lines if x["event"] == "seat retired"]
    assert len(retired) == 1 and retired[0]["fault"] == "malformed" and retired[0]["detail"] == "garbage"
    assert retired[0]["seat"] == 0 and retired[0]["strikes"] == 1
    faults = [x for x in lines if x["event"] == "fault"]
    assert len(faults) == 1 and faults[0]["fault"] == "malformed" and faults[0]["strikes"] == 1
    assert faults[0]["detail"] == "garbage" and faults[0]["seq"] >= 1


class _Broken(Scripted):
    async def finish(self, notice: bot_pb.GameOverNotice | None) -> None:
        self.notices.append(notice)
        raise ConnectionError("the bot went away before the end")


def test_a_seat_failing_at_the_end_costs_no_one_else_their_notice(monkeypatch) -> None:
    monkeypatch.setattr(match_runner, "lag_monitor", lambda: Stalled(0.0))
    seats = [_Broken("s0"), Scripted("s1")]
    spec = GameSpec("g", 11, (EntrantRef("s0", policy="greedy"), EntrantRef("s1", policy="greedy")), time_control=TC)
    result = asyncio.run(play_game(spec, seats))
    assert result.end_reason.value and seats[1].notices[0] is not None
    assert seats[1].notices[0].reason == seats[0].notices[0].reason != 0


def test_the_game_over_notice_shows_a_seat_its_own_draw_from_the_pile_and_hides_the_others(monkeypatch) -> None:
    """A seat drew from the pile after its last request and the game then ended: that card reaches it only in the
    notice, which shows it to the drawer (as a request would) and as 0 to the other seats. (Three greedy seats on
    deck 29: seat 2's last draw is a 7.)"""
    monkeypatch.setattr(match_runner, "lag_monitor", lambda: Stalled(0.0))
    seats = [Scripted(f"s{i}") for i in range(3)]
    spec = GameSpec("g", 29, tuple(EntrantRef(f"s{i}", policy="greedy") for i in range(3)), time_control=TC)
    asyncio.run(play_game(spec, seats))
    told = {i: [(e.drew.seat, e.drew.card) for e in s.notices[0].events  # type: ignore[union-attr]
                if e.WhichOneof("event") == "drew" and not e.drew.from_market] for i, s in enumerate(seats)}
    assert (2, 7) in told[2] and (2, 0) in told[0] + told[1]
    for i, draws in told.items():
        assert all((card != 0) == (seat == i) for seat, card in draws), (i, draws)
