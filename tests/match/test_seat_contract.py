"""The remote seat's contract with the game runner (referee/match/remote.py), one layer alone: the seat talks to a
fake Play stream and a fake channel, so that each test can make the stream end, fail or stay silent exactly when it
wants. tests/match/test_seat.py plays the same seat against real bot processes over real gRPC.

What the runner relies on, and a user would see broken:
- while a bot thinks, the seat's timer wakes the referee once, at the deadline, not on every turn of the loop (a
  timer that fired at once and re-armed would spin a core for as long as any bot thinks);
- a stream that ends, however it ends, answers the decision waiting on it and every later one with the end, its
  words kept;
- a timed-out decision's time is the wait, from the request to the deadline; a fault that came during the wait (an
  unasked or undecodable reply, the stream's end) is charged the time until it came;
- ``finish`` closes a stream seat cleanly (the notice, the half-close, the bot's end), tolerates an optional unary
  GameOver the bot does not implement, and can be called again: the runner finishes a retired seat when it retires
  and once more at the game's end."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from referee.match.remote import RemoteSeat
from referee.match.seats import DISCONNECTED, INVALID, MALFORMED, TIMEOUT
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as game_pb

DECISION_MS, GRACE_MS = 1000, 0
_CANCELLED = object()


class FakeStream:
    """A Play stream the test drives: ``send`` puts what the bot says (bytes, ``grpc.aio.EOF`` or an exception to
    raise) where the seat's reader reads it; ``cancel`` ends a pending read as gRPC does."""

    def __init__(self, end_on_half_close: bool = True) -> None:
        self.frames: list[bytes] = []
        self.half_closed = False
        self.cancelled = False
        self._incoming: asyncio.Queue[Any] = asyncio.Queue()
        self._end_on_half_close = end_on_half_close

    def send(self, item: Any) -> None:
        self._incoming.put_nowait(item)

    async def write(self, frame: bytes) -> None:
        self.frames.append(frame)

    async def done_writing(self) -> None:
        self.half_closed = True
        if self._end_on_half_close:  # the bot ends its side in turn, as the kit's bots do
            self.send(grpc.aio.EOF)

    async def read(self) -> Any:
        item = await self._incoming.get()
        if item is _CANCELLED:
            raise asyncio.CancelledError
        if isinstance(item, BaseException):
            raise item
        return item

    def cancel(self) -> bool:
        self.cancelled = True
        self.send(_CANCELLED)
        return True


class FakeChannel:
    def __init__(self, stream: FakeStream | None = None, game_over_error: BaseException | None = None) -> None:
        self.stream = stream
        self.game_over_error = game_over_error
        self.notices: list[bot_pb.GameOverNotice] = []

    def play(self) -> FakeStream:
        assert self.stream is not None
        return self.stream

    async def game_over(self, notice: bot_pb.GameOverNotice, timeout: float) -> None:
        self.notices.append(notice)
        if self.game_over_error is not None:
            raise self.game_over_error


class FakePool:
    def __init__(self, channel: FakeChannel) -> None:
        self.channel = channel

    def get(self, address: str) -> FakeChannel:
        return self.channel


def _start() -> bot_pb.GameStart:
    return bot_pb.GameStart(game_id="g", seat=0, time_control=game_pb.TimeControl(decision_ms=DECISION_MS,
                                                                                  grace_ms=GRACE_MS))  # fmt: skip


async def _stream_seat(stream: FakeStream) -> RemoteSeat:
    seat = RemoteSeat("bot", "fake:1", FakePool(FakeChannel(stream)))  # type: ignore[arg-type]
    seat.transport = "stream"
    await seat.start(_start())
    return seat


def _reply(seq: int) -> bytes:
    return bot_pb.DecisionReply(seq=seq).SerializeToString()


def test_while_a_bot_thinks_the_seats_timer_wakes_the_referee_at_the_deadline_and_not_before() -> None:
    fired = 0

    async def go() -> None:
        nonlocal fired
        stream = FakeStream()
        seat = await _stream_seat(stream)
        expire = seat._expire

        def counted() -> None:
            nonlocal fired
            fired += 1
            expire()

        seat._expire = counted  # type: ignore[method-assign]
        # the reply comes 1 s after the send is planned, half the allowance; the decision's clock starts a moment
        # later (a loaded machine can hold the test between the two): charged at least half of that second
        asyncio.get_running_loop().call_later(1.0, stream.send, _reply(1))
        answer = await seat.decide(b"", 1, 2.0)
        assert answer.reply is not None and answer.reply.seq == 1 and answer.fault == 0, answer
        assert answer.bot_us >= 500_000, answer.bot_us
        await seat.finish(None)

    asyncio.run(go())
    # The reply came before the deadline: the timer armed for it never fired (the start's, moved earlier by the
    # decision, is that same timer). A timer that fired at once and re-armed would have fired thousands of times.
    assert fired <= 2, fired


def test_a_decision_nobody_answers_times_out_with_the_wait_as_its_time() -> None:
    async def go() -> None:
        seat = await _stream_seat(FakeStream())
        # up to ten times the allowance: a loaded machine that holds the test's process for L seconds adds about 2L
        # (the late timer, then the wait extended by the stall it saw), so the allowance is 1 s, not 0.2
        answer = await seat.decide(b"", 1, 1.0)
        assert answer.fault == TIMEOUT and not answer.fatal, answer
        assert answer.detail == "no reply to seq 1 within 1000 ms", answer.detail
        assert 1_000_000 <= answer.bot_us < 10_000_000, answer.bot_us
        await seat.finish(None)

    asyncio.run(go())


@pytest.mark.parametrize(
    ("end", "detail"),
    [
        (grpc.aio.EOF, "the bot closed the Play stream"),
        # a call that ends in a way gRPC reports by another exception: its words, on one line
        (grpc.aio.UsageError("used\n  wrongly"), "the Play stream ended: UsageError: used wrongly"),
    ],
)
def test_a_stream_that_ends_answers_the_waiting_decision_and_every_later_one_with_its_end(end, detail) -> None:
    async def go() -> None:
        stream = FakeStream()
        seat = await _stream_seat(stream)
        asyncio.get_running_loop().call_later(0.05, stream.send, end)
        first = await seat.decide(b"", 1, 5.0)
        assert (first.reply, first.fault, first.detail, first.fatal) == (None, DISCONNECTED, detail, True), first
        assert 0 < first.bot_us < 5_000_000, first.bot_us
        for seq in (2, 3):  # no write on a stream that has ended: the end again, at once
            again = await seat.decide(b"", seq, 5.0)
            assert (again.reply, again.fault, again.detail, again.fatal) == (None, DISCONNECTED, detail, True)
        assert len(stream.frames) == 2  # the GameStart and the first request
        await seat.finish(None)

    asyncio.run(go())


async def _answered_seat(stream: FakeStream) -> tuple[RemoteSeat, asyncio.Task[None]]:
    """A stream seat that has answered request 1 (its timer still armed for that deadline), and its reader."""
    seat = await _stream_seat(stream)
    asyncio.get_running_loop().call_later(0.01, stream.send, _reply(1))
    assert (await seat.decide(b"", 1, 5.0)).fault == 0
    assert seat._reader is not None
    return seat, seat._reader


def test_finish_sends_the_notice_half_closes_and_waits_for_the_bots_end_of_the_stream() -> None:
    async def go() -> None:
        stream = FakeStream(end_on_half_close=True)
        seat, reader = await _answered_seat(stream)
        await seat.finish(bot_pb.GameOverNotice(game_id="g", seat=0))
        assert stream.half_closed and len(stream.frames) == 3  # start, request, notice
        # the reader saw the bot's end of the stream itself: it was not cut short
        assert reader.done() and not reader.cancelled()

    asyncio.run(go())


def test_finish_may_be_called_again_as_the_runner_does_for_a_retired_seat() -> None:
    async def go() -> None:
        stream = FakeStream(end_on_half_close=False)
        seat, reader = await _answered_seat(stream)
        await seat.finish(None)  # retired: no notice, the stream closed
        await asyncio.sleep(0.01)  # the reader's cancellation runs
        assert stream.cancelled and reader.done()
        await seat.finish(None)  # at the game's end, once more: nothing left to do, nothing raised
        assert len(stream.frames) == 2

    asyncio.run(go())


def test_a_unary_bot_without_game_over_still_finishes_cleanly() -> None:
    """GameOver is optional: a bot answering UNIMPLEMENTED (or failing it otherwise) changes nothing."""
    unimplemented = grpc.aio.AioRpcError(grpc.StatusCode.UNIMPLEMENTED, grpc.aio.Metadata(), grpc.aio.Metadata(),
                                         details="Method not found!")  # fmt: skip
    channel = FakeChannel(game_over_error=unimplemented)

    async def go() -> None:
        seat = RemoteSeat("bot", "fake:1", FakePool(channel))  # type: ignore[arg-type]
        seat.transport = "unary"
        await seat.start(_start())
        await seat.finish(bot_pb.GameOverNotice(game_id="g", seat=0))

    asyncio.run(go())
    assert [n.game_id for n in channel.notices] == ["g"]


@pytest.mark.parametrize(
    ("said", "fault", "detail"),
    [
        (
            bot_pb.DecisionReply(seq=99).SerializeToString(),
            INVALID,
            "reply with seq 99 came before any request with that seq: it answers no question",
        ),
        (b"\xff\xff\xff", MALFORMED, "undecodable DecisionReply (3 bytes): "),
    ],
)
def test_a_faulty_message_during_the_wait_is_the_decisions_fault_charged_the_time_until_it_came(
    said, fault, detail
) -> None:
    async def go() -> None:
        stream = FakeStream()
        seat = await _stream_seat(stream)
        # the message comes 1 s after the send is planned; the decision's clock starts a moment later (a loaded
        # machine was seen to take 15 ms): charged at least half of that second, and not the 5 s allowed
        asyncio.get_running_loop().call_later(1.0, stream.send, said)
        answer = await seat.decide(b"", 1, 5.0)
        assert (answer.reply, answer.fault, answer.fatal) == (None, fault, False), answer
        assert answer.detail.startswith(detail), answer.detail
        assert 500_000 <= answer.bot_us < 5_000_000, answer.bot_us
        await seat.finish(None)

    asyncio.run(go())
