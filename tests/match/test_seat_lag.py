"""The referee's own stalls are not the bot's time (referee/match/remote.py with the loop's lag monitor, clock.py),
against real bot processes over real gRPC. The test stalls the referee's event loop itself, as a long garbage
collection or a slow callback would: right after one request to a bot went out, it blocks the loop (``time.sleep``)
for a time that is the point of the test, and the real lag monitor sees the stall. The bot's answer then counts or
not by when it came against the allowance and the stall, with margins of seconds."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

from referee.event_loop import run as run_games
from referee.match import ChannelPool, EntrantRef, GameSpec, TimeControl, play_game
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

from .helpers import FIXTURES, bot_process, verify

GAME_BOUND_S = 120  # a game that has not ended by then never will: a wait extended for ever
_DECISION_TAG = b"\x12"  # RefereeMessage.decision, length-delimited (bot.proto): a request's frame begins so


class _StallingCall:
    """A real Play call whose ``nth`` request's write, once done (or, ``before``, as it begins), blocks the event
    loop for ``stall_s``."""

    def __init__(self, call: Any, nth: int, stall_s: float, before: bool) -> None:
        self._call, self._nth, self._stall_s, self._before = call, nth, stall_s, before
        self._requests = 0

    async def write(self, frame: bytes) -> None:
        stall = False
        if frame[:1] == _DECISION_TAG:
            self._requests += 1
            stall = self._requests == self._nth
        if stall and self._before:
            time.sleep(self._stall_s)  # the referee's loop stalls: nothing else of it runs meanwhile
        await self._call.write(frame)
        if stall and not self._before:
            time.sleep(self._stall_s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


def play_stalled(staller: str, other: str, tc: TimeControl, stall_s: float, path, nth: int = 1,
                 before: bool = False) -> rec_pb.GameRecord:  # fmt: skip
    """A game of ``staller`` (seat 0, on the Play stream) and ``other``, where the loop stalls ``stall_s`` right
    after seat 0's ``nth`` request went out (``before``: as its write begins)."""
    spec = GameSpec("lag", 5, (EntrantRef("staller", staller), EntrantRef("other", other)), time_control=tc,
                    start_seat=0)  # fmt: skip

    async def go() -> None:
        async with ChannelPool() as pool:
            ch = pool.get(staller)
            play = ch.play
            ch.play = lambda: _StallingCall(play(), nth, stall_s, before)  # type: ignore[method-assign]
            await asyncio.wait_for(play_game(spec, pool=pool, record_path=path, prefer="stream"), GAME_BOUND_S)

    run_games(go())
    return verify(path)


def first_of_seat_0(rec: rec_pb.GameRecord) -> rec_pb.DecisionRecord:
    return next(d for d in rec.decisions if d.seat == 0)


def test_an_answer_that_came_while_the_referee_stalled_counts_and_costs_no_bank(tmp_path) -> None:
    # The bot answers at once; the referee's loop stalls twice the allowance before it reads the answer. The
    # allowance is generous for the game's other answers, which must all count too: a loaded machine can hold one for
    # most of a second.
    tc = TimeControl(decision_ms=1000, bank_ms=1000, grace_ms=500)
    allowance_s = (tc.decision_ms + tc.bank_ms + tc.grace_ms) / 1000
    stall_s = 2 * allowance_s
    with bot_process("--mode", "ok") as staller, bot_process("--mode", "ok") as other:
        rec = play_stalled(staller, other, tc, stall_s, tmp_path / "g.abluxx")
    first = first_of_seat_0(rec)
    assert (first.chosen_by, first.fault) == (rec_pb.CHOOSER_BOT, rec_pb.FAULT_KIND_UNSPECIFIED), first
    assert first.bot_us >= stall_s * 1e6  # the record keeps the time as the referee saw it, stall and all
    assert first.bank_left_ms == tc.bank_ms  # but the stall was not the bot's: none of its bank is spent
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and not d.fault for d in rec.decisions)


def slow_first_answer(tc: TimeControl, delay: float, stall: float, path) -> tuple[rec_pb.DecisionRecord, int]:
    """Seat 0's first decision, which its bot answers ``delay`` allowances in, while the loop stalls ``stall``
    allowances from just after the request went out; and the bot's delay in ms."""
    allowance_s = (tc.decision_ms + tc.bank_ms + tc.grace_ms) / 1000
    delay_ms = int(delay * allowance_s * 1000)
    with (
        bot_process("--mode", "slow", "--delay-ms", str(delay_ms), "--bad-count", "1") as staller,
        bot_process("--mode", "ok") as other,
    ):
        rec = play_stalled(staller, other, tc, stall * allowance_s, path)
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and not d.fault for d in rec.decisions[1:])
    return first_of_seat_0(rec), delay_ms


def test_an_answer_late_only_by_the_referees_stall_counts(tmp_path) -> None:
    # The loop stalls as long as the allowance, from just after the request; the bot answers 1.25 allowances in:
    # past its deadline, but the wait was extended by the stall (to about 2 allowances), and the answer came within
    # the allowance once the stall is taken off.
    tc = TimeControl(decision_ms=1500, bank_ms=500, grace_ms=500)
    first, delay_ms = slow_first_answer(tc, 1.25, 1, tmp_path / "g.abluxx")
    assert (first.chosen_by, first.fault) == (rec_pb.CHOOSER_BOT, rec_pb.FAULT_KIND_UNSPECIFIED), first
    assert first.bot_us >= delay_ms * 1000


def test_an_answer_later_than_the_allowance_and_the_stall_is_a_timeout_that_says_when_it_came(tmp_path) -> None:
    # The loop stalls 3 allowances from just after the request (past the deadline), then the wait is extended by
    # the stall; the bot answers 5 allowances in, within the extension (6 allowances) but 2 allowances after the
    # allowance and the stall together. The referee's stall was long enough to be its fault (runner.py: a timeout
    # while the loop stalled at least the grace), and the detail says when the answer came. The allowance (2 s)
    # is generous for the game's other answers, which must all count.
    tc = TimeControl(decision_ms=1000, bank_ms=0, grace_ms=1000)
    first, delay_ms = slow_first_answer(tc, 5, 3, tmp_path / "g.abluxx")
    assert (first.chosen_by, first.fault) == (rec_pb.CHOOSER_FALLBACK, rec_pb.FAULT_KIND_REFEREE), first
    came = re.fullmatch(r"the referee's event loop stalled (\d+) ms \(reply to seq (\d+) came after (\d+) ms\)",
                        first.fault_detail)  # fmt: skip
    assert came, first.fault_detail
    assert int(came.group(2)) == first.seq
    assert delay_ms <= int(came.group(3)) < 6 * delay_ms / 5, first.fault_detail  # before the extension's end
    assert abs(first.bot_us / 1000 - int(came.group(3))) <= 1


def test_a_write_held_up_by_the_referees_stall_gets_as_long_again_then_is_the_bots_timeout(tmp_path) -> None:
    # The bot takes 2 requests, then grants no flow-control window (tests/fixtures/stall_bot.py): the third
    # request's write never ends. The loop stalls 2 allowances as that write begins, past its deadline; the write
    # is given as long again as the stall (once), then the seat times out: the time in the record is about twice
    # the stall, where it would be one stall had the referee's lateness been charged to the bot. The allowance (2 s)
    # is generous for the two answers before.
    tc = TimeControl(decision_ms=1000, bank_ms=0, grace_ms=1000)
    allowance_s = (tc.decision_ms + tc.bank_ms + tc.grace_ms) / 1000
    stall_s = 2 * allowance_s
    with (
        bot_process("--stall", "decision", "--after", "2", script=FIXTURES / "stall_bot.py") as staller,
        bot_process("--mode", "ok") as other,
    ):
        rec = play_stalled(staller, other, tc, stall_s, tmp_path / "g.abluxx", nth=3, before=True)
    mine = [d for d in rec.decisions if d.seat == 0]
    assert [d.chosen_by for d in mine[:2]] == [rec_pb.CHOOSER_BOT] * 2
    held = mine[2]
    assert held.fault == rec_pb.FAULT_KIND_TIMEOUT and held.retired, held
    assert held.fault_detail == (f"the Play stream took no request for {allowance_s * 1000:.0f} ms (the bot grants "
                                 "no flow-control window)"), held.fault_detail  # fmt: skip
    assert 1.5 * stall_s * 1e6 < held.bot_us < 6 * stall_s * 1e6, held.bot_us


class _LateCall:
    """A real unary Decide call whose caller gets its end ``stall_s`` late: the loop stalls as the call ends, before
    the game's task runs again (as it may wait behind other games' work on a RefereeLoop)."""

    def __init__(self, call: Any, stall_s: float) -> None:
        self._call, self._stall_s = call, stall_s

    def __await__(self) -> Any:
        return self._wait().__await__()

    async def _wait(self) -> Any:
        try:
            return await self._call
        finally:
            time.sleep(self._stall_s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


@pytest.mark.parametrize("mode", ["ok", "close"])
def test_a_unary_call_is_timed_to_its_end_not_to_when_the_game_got_to_it(mode, tmp_path) -> None:
    # The seat's first call (answered, or aborted by the bot: mode close) ends; the loop then stalls 4 s before the
    # game's task sees it. The record keeps the call's own time, well under the stall (under half of it: a loaded
    # machine may hold the call itself up for a second or more).
    tc = TimeControl(decision_ms=2000, bank_ms=2000, grace_ms=1000)
    stall_s = 4.0
    with (
        bot_process("--mode", mode, "--bad-count", "1", "--transports", "unary") as late,
        bot_process("--mode", "ok") as other,
    ):
        spec = GameSpec("late", 5, (EntrantRef("late", late), EntrantRef("other", other)), time_control=tc)
        path = tmp_path / "g.abluxx"

        async def go() -> None:
            async with ChannelPool() as pool:
                ch = pool.get(late)
                decide, calls = ch.decide, []

                def first_late(*args: Any, **kwargs: Any) -> Any:
                    calls.append(decide(*args, **kwargs))
                    return _LateCall(calls[-1], stall_s) if len(calls) == 1 else calls[-1]

                ch.decide = first_late  # type: ignore[method-assign]
                await asyncio.wait_for(play_game(spec, pool=pool, record_path=path), GAME_BOUND_S)

        run_games(go())
    first = first_of_seat_0(verify(path))
    if mode == "ok":
        assert (first.chosen_by, first.fault) == (rec_pb.CHOOSER_BOT, rec_pb.FAULT_KIND_UNSPECIFIED), first
    else:
        assert first.fault == rec_pb.FAULT_KIND_RPC_ERROR, first
    assert 1 <= first.bot_us < stall_s * 1e6 / 2, first.bot_us
