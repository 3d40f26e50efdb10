"""A decision's clock at its edges (docs/match.md, time control): the transport grace is part of the allowance, and
a timeout is the referee's fault only when its own event loop stalled for at least the grace (and 20 ms). Real bot
processes over real gRPC; the referee's stalls come from a clock the test sets (referee/match/clock.py's
LagMonitor), so no test depends on how loaded the machine is. Issue 22 items 11 and 12."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.match import EntrantRef, GameSpec, TimeControl
from referee.match import runner as match_runner
from referee.match.clock import LagMonitor
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

from .helpers import bot_process, play_one, verify


class StalledClock(LagMonitor):
    """A lag monitor that reports the same stall for every decision: the referee 'stalled' ``stall_s``."""

    def __init__(self, stall_s: float) -> None:
        super().__init__()
        self.stall_s = stall_s

    def worst_since(self, t0: float) -> float:
        return self.stall_s


def _first_of_seat_0(tmp_path: Path, mode: list[str], tc: TimeControl) -> rec_pb.DecisionRecord:
    with bot_process(*mode, "--bad-count", "1") as bad, bot_process("--mode", "ok") as good:
        spec = GameSpec("g", 7, (EntrantRef("bad", address=bad), EntrantRef("ok", address=good)), time_control=tc,
                        max_strikes=100)  # fmt: skip
        play_one(spec, tmp_path / "g.abluxx")
    return next(d for d in verify(tmp_path / "g.abluxx").decisions if d.seat == 0)


def test_a_bot_answering_after_its_time_but_within_the_grace_is_not_timed_out(tmp_path: Path) -> None:
    # 1.5 s for a 0.2 s decision with no bank: 1.3 s late, yet 3.7 s inside the 5 s grace (margins are the point)
    tc = TimeControl(decision_ms=200, bank_ms=0, grace_ms=5000)
    first = _first_of_seat_0(tmp_path, ["--mode", "slow", "--delay-ms", "1500"], tc)
    assert first.fault == rec_pb.FAULT_KIND_UNSPECIFIED, first.fault_detail
    assert first.chosen_by == rec_pb.CHOOSER_BOT and first.bot_us >= 1_500_000


@pytest.mark.parametrize(
    ("grace_ms", "stall_s", "fault"),
    [
        (100, 0.05, rec_pb.FAULT_KIND_TIMEOUT),  # a stall shorter than the grace: the bot's own timeout
        (100, 0.10, rec_pb.FAULT_KIND_REFEREE),  # at the grace: the referee's fault
        (0, 0.019, rec_pb.FAULT_KIND_TIMEOUT),  # no grace: a stall under 20 ms is still the bot's timeout
        (0, 0.02, rec_pb.FAULT_KIND_REFEREE),
    ],
)
def test_a_timeout_is_the_referees_fault_only_after_a_stall_of_the_grace_and_20_ms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grace_ms: int, stall_s: float, fault: int
) -> None:
    monkeypatch.setattr(match_runner, "lag_monitor", lambda: StalledClock(stall_s))
    tc = TimeControl(decision_ms=1000, bank_ms=300, grace_ms=grace_ms)
    first = _first_of_seat_0(tmp_path, ["--mode", "hang"], tc)  # never answers its first decision
    assert first.fault == fault, first.fault_detail
    assert first.chosen_by == rec_pb.CHOOSER_FALLBACK
    # the bot's own timeout empties its bank; the referee's fault costs the bot nothing
    assert first.bank_left_ms == (0 if fault == rec_pb.FAULT_KIND_TIMEOUT else 300)


def test_a_decision_keeps_its_whole_allowance_when_earlier_decisions_armed_the_clock(tmp_path: Path) -> None:
    # One timer serves a seat's decisions (remote.py): armed by the first, it fires while a later one still has
    # time left and must wait on for that decision's own deadline. Four answers 1.5 s each of a 5.2 s allowance:
    # the first decision's 5.2 s pass during the fourth, which is 3.7 s inside its own (margins are the point).
    tc = TimeControl(decision_ms=200, bank_ms=0, grace_ms=5000)
    slow_bot = ("--mode", "slow", "--delay-ms", "1500", "--bad-count", "4")
    with bot_process(*slow_bot) as slow, bot_process("--mode", "ok") as good:
        spec = GameSpec("g", 7, (EntrantRef("slow", address=slow), EntrantRef("ok", address=good)), time_control=tc,
                        max_strikes=100)  # fmt: skip
        play_one(spec, tmp_path / "g.abluxx")
    first_four = [d for d in verify(tmp_path / "g.abluxx").decisions if d.seat == 0][:4]
    assert [d.fault_detail for d in first_four if d.fault] == []
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.bot_us >= 1_500_000 for d in first_four)
