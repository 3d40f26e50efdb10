"""Remote seats: a bot over gRPC, on the Play stream when it offers one (``_decide_stream``), else on unary Decide
calls (``_decide_unary``)."""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.wire import bytes_field

from . import exits
from .channels import ChannelPool, reason, rpc_fault
from .clock import lag_monitor
from .hello import HelloError, ask_hello
from .seats import (
    CLOSE_TIMEOUT_S,
    DISCONNECTED,
    INVALID,
    MALFORMED,
    MAX_STALE_REPLIES,
    TIMEOUT,
    UNREACHABLE,
    SeatAnswer,
    SeatError,
)

# RefereeMessage's fields (bot.proto), each written as ``bytes_field(field, serialized message)``: a request goes
# on the stream without being copied into a message first.
_START, _DECISION, _GAME_OVER = 1, 2, 3
_DECISION_START = 10  # DecisionRequest.start (its last field, so appending it encodes as the message would)


_REPLY, _BAD, _UNASKED, _END = 0, 1, 2, 3


class _Writes:
    """One loop's requests on the Play streams, written together: a decision asks to write (``turn``) and waits
    for the next turn, when a prompt callback lets every decision that asked go, one write after another.

    Why: a request's write (``call.write``, down to gRPC core's send) cost 60-64 us of the loop's CPU where the
    floor's cost 37-47 us for the same bytes, and Python work between two writes is what makes it dearer (the
    floor's write with two requests built between its round trips: 46.5 -> 68.8 us; most likely gRPC core's data
    gone cold in the CPU's caches). Written back to back, the writes cost less than the task step the wait adds
    (docs/match.md, "Where the time goes"). The wait is at most a slice of the loop (referee/event_loop.py) and
    comes before the decision's clock starts. Each decision waits on a future of its own: one shared future would
    be cancelled for all when one game's task is cancelled."""

    __slots__ = ("_waiting",)  # not the loop: a value of _writes that held its key would keep it forever

    def __init__(self) -> None:
        self._waiting: list[asyncio.Future[None]] = []

    def turn(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future of the caller's own, done at the next turn of ``loop`` (this batch's loop)."""
        waiter = loop.create_future()
        if not self._waiting:
            loop.call_soon(self._go)
        self._waiting.append(waiter)
        return waiter

    def _go(self) -> None:
        waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            _wake(waiter)


_writes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Writes] = weakref.WeakKeyDictionary()


def _writes_of(loop: asyncio.AbstractEventLoop) -> _Writes:
    w = _writes.get(loop)
    if w is None:
        w = _writes[loop] = _Writes()
    return w


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class RemoteSeat:
    """A bot at ``address``: Hello first, then the Play stream when offered, else Decide."""

    kind = rec_pb.SEAT_KIND_REMOTE
    is_fallback = False

    def __init__(self, name: str, address: str, pool: ChannelPool, prefer: str | None = None) -> None:
        self.name = name
        self.address = address
        self.version = ""
        self.author = ""
        self.transport = ""
        self.prefer = prefer  # "stream" or "unary" to force one the bot offers (benchmarks, tests)
        self._ch = pool.get(address)
        self._loop: asyncio.AbstractEventLoop  # the game's loop, kept by ``start`` for the per-decision path
        self._writes: _Writes  # the loop's batch of writes (``start``)
        self._start: bot_pb.GameStart | None = None
        self._call: Any = None
        # What the reader took off the stream and no decision has looked at yet, and the decision waiting for it.
        # A deque and one future per wait, not an asyncio.Queue with a timeout: this is the per-decision path.
        # The reader keeps only what a decision must see (the answer, a fault, the end), so it stays a few items.
        self._replies: deque[tuple[float, int, Any]] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._asked: set[int] = set()
        self._asking = 0  # the seq of the request on the wire that has no answer yet (0: none)
        self._stale = 0  # messages since the last request that answered nothing asked
        # The deadline (``time.perf_counter``) of the write and of the wait for its answer (None: nothing waits), the
        # decision's start, and the task while its write is pending (_send, _expire). One timer serves every
        # decision: it stays armed when a decision ends, a decision only moves the deadline, and the timer re-arms
        # when it fires before the deadline (_set_deadline): no timer is made and cancelled per decision.
        self._deadline: float | None = None
        self._t0 = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0  # when the armed timer fires (time.perf_counter)
        self._writer: asyncio.Task[Any] | None = None
        self._write_extended = False
        self._opened = 0.0  # when the game's Hello began (time.monotonic)

    async def connect(self) -> None:
        self._opened = time.monotonic()
        try:
            hello = await ask_hello(self._ch.hello, self.address)
        except HelloError as e:
            raise await self._refused(str(e), broken=e.code is not None) from None
        offered = set(hello.transports)
        if bot_pb.TRANSPORT_STREAM in offered and self.prefer != "unary":
            self.transport = "stream"
        else:
            self.transport = "unary" if bot_pb.TRANSPORT_UNARY in offered else "stream"
        self.version = hello.version
        self.author = hello.author

    async def start(self, start: bot_pb.GameStart) -> None:
        """Open the Play stream and send GameStart, within a decision's free time and grace (a bot that grants no
        HTTP/2 flow-control window would stall the write forever)."""
        self._start = start
        if self.transport != "stream":
            return
        self._loop = asyncio.get_running_loop()
        self._writes = _writes_of(self._loop)
        self._call = self._ch.play()
        tc = start.time_control
        limit_s = (tc.decision_ms + tc.grace_ms) / 1000
        try:
            sent = await self._send(bytes_field(_START, start.SerializeToString()), time.perf_counter(), limit_s)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as e:
            why = f"could not open the Play stream to {self.address}: {reason(e)}"
            raise await self._refused(why, broken=True) from None
        finally:
            self._deadline = None
        if not sent:
            why = f"the Play stream to {self.address} took no GameStart within {limit_s * 1000:.0f} ms"
            raise SeatError(TIMEOUT, why + " (the bot grants no flow-control window)")
        self._reader = self._loop.create_task(self._read())

    async def _refused(self, detail: str, broken: bool) -> SeatError:
        """Why the seat cannot play. When its call failed (``broken``) and its local process ended (a command bot:
        exits.py), the fault names how: a game whose Hello or start was under way as it died lost the seat
        (DISCONNECTED, as a crash mid-game), one begun after it met the bot dead (UNREACHABLE)."""
        if broken and (end := await exits.ended_since(self.address, self._opened)):
            how, before = end
            if before:
                return SeatError(UNREACHABLE, f"{how} before this game began ({detail})")
            return SeatError(DISCONNECTED, f"{how} ({detail})")
        return SeatError(UNREACHABLE, detail)

    async def _send(self, frame: bytes, t0: float, limit_s: float) -> bool:
        """Write ``frame`` on the Play stream by ``t0 + limit_s`` (``time.perf_counter``), as a bot can stall a
        write forever by granting no HTTP/2 flow-control window. False when it did (the call is then cancelled).

        The deadline is left set, for the caller to clear (``self._deadline = None``): a decision waits for the
        reply by it too, so the bound costs the hot path no timer of its own."""
        self._writer = task = asyncio.current_task(self._loop)
        self._write_extended = False
        self._set_deadline(t0, t0 + limit_s)
        try:
            await self._call.write(frame)
        except asyncio.CancelledError:
            if self._writer is not None:  # cancelled from outside, not by the deadline
                raise
            task.uncancel()  # type: ignore[union-attr]
            return False
        finally:
            self._writer = None
        return True

    def _set_deadline(self, t0: float, deadline: float) -> None:
        """The write or the wait that began at ``t0`` ends by ``deadline``; a new timer only when the armed one
        would fire after it."""
        self._t0, self._deadline = t0, deadline
        if self._timer is None or self._timer_at > deadline:
            if self._timer is not None:
                self._timer.cancel()
            self._arm(deadline)

    def _arm(self, at: float) -> None:
        loop = self._loop
        self._timer_at = at
        self._timer = loop.call_at(loop.time() + at - time.perf_counter(), self._expire)

    def _expire(self) -> None:
        """The timer: before the deadline, it re-arms for it; with nothing waiting, it lapses. At the deadline of
        a write or of the wait for its reply: stop a pending write, else wake the waiter. The referee's own event
        loop stalls extend a write's deadline once, as the wait's (the bot is not to blame)."""
        self._timer = None
        deadline = self._deadline
        if deadline is None:
            return
        if time.perf_counter() < deadline:
            self._arm(deadline)
            return
        writer = self._writer
        if writer is None:
            _wake(self._waiter)
            return
        stall = lag_monitor().worst_since(self._t0)
        if stall > 0.002 and not self._write_extended:
            self._write_extended = True
            self._set_deadline(self._t0, time.perf_counter() + stall)
            return
        self._writer = None
        writer.cancel()

    async def _read(self) -> None:
        """The stream's one reader: the answer to the request on the wire goes to the queue with its arrival time.
        Waiting on the queue, not on ``call.read()``, lets a decision time out without cancelling the stream.

        Anything else is dropped on arrival and counted. A late or repeated answer to an earlier request costs
        nothing more; a reply to a request not (yet) sent, or an undecodable one, leaves a fault for the next
        decision. More than MAX_STALE_REPLIES such messages between two requests (a bot flooding while others
        think) end the stream: the queue never holds more than a few items."""
        call, now = self._call, time.perf_counter
        parse = bot_pb.DecisionReply.FromString
        replies = self._replies

        def put(item: tuple[float, int, Any]) -> None:
            replies.append(item)
            _wake(self._waiter)

        try:
            while True:
                raw = await call.read()
                t = now()
                if raw is grpc.aio.EOF:
                    put((t, _END, (DISCONNECTED, "the bot closed the Play stream")))
                    return
                try:
                    reply = parse(raw)
                except DecodeError as e:
                    reply, bad = None, f"undecodable DecisionReply ({len(raw)} bytes): {e}"
                # 0 means no request is on the wire: a reply with seq 0 (its unset default) answers nothing
                if reply is not None and self._asking and reply.seq == self._asking:
                    self._asking = 0
                    put((t, _REPLY, reply))
                    continue
                self._stale += 1
                if self._stale > MAX_STALE_REPLIES:
                    put((t, _END, (INVALID, f"more than {MAX_STALE_REPLIES} messages that answer no request "
                                            "since the last one; the Play stream is closed")))  # fmt: skip
                    call.cancel()
                    return
                if reply is None:
                    put((t, _BAD, bad))
                elif reply.seq not in self._asked:
                    put((t, _UNASKED, reply.seq))
        except grpc.aio.AioRpcError as e:
            put((now(), _END, rpc_fault(e, "the Play stream failed")))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the call ended in a way grpc reports otherwise
            put((now(), _END, (DISCONNECTED, f"the Play stream ended: {reason(e)}")))

    async def decide(self, request: bytes, seq: int, allowance_s: float) -> SeatAnswer:
        if self.transport == "unary":
            return await self._decide_unary(request, seq, allowance_s)
        return await self._decide_stream(request, seq, allowance_s)

    async def _decide_unary(self, request: bytes, seq: int, allowance_s: float) -> SeatAnswer:
        if self._start is not None:
            request += bytes_field(_DECISION_START, self._start.SerializeToString())
            self._start = None
        t0 = time.perf_counter()
        # The call is timed when it ends, in gRPC's own task: on a RefereeLoop the game's task may wake later
        # (referee/event_loop.py), and that wait is not the bot's.
        ended = [0.0]
        call = self._ch.decide(request, timeout=allowance_s)
        call.add_done_callback(lambda _: ended.__setitem__(0, time.perf_counter()))
        try:
            raw = await call
        except grpc.aio.AioRpcError as e:
            fault, detail = rpc_fault(e, "Decide failed")
            return SeatAnswer(None, fault, detail, bot_us=int(((ended[0] or time.perf_counter()) - t0) * 1e6))
        bot_us = int(((ended[0] or time.perf_counter()) - t0) * 1e6)
        try:
            reply = bot_pb.DecisionReply.FromString(raw)
        except DecodeError as e:
            return SeatAnswer(None, MALFORMED, f"undecodable DecisionReply ({len(raw)} bytes): {e}", bot_us=bot_us)
        if reply.seq != seq:
            return SeatAnswer(None, INVALID, f"reply to seq {reply.seq} for request seq {seq}", bot_us=bot_us)
        return SeatAnswer(reply, bot_us=bot_us)

    async def _decide_stream(self, request: bytes, seq: int, allowance_s: float) -> SeatAnswer:
        await self._writes.turn(self._loop)  # written with the other games' requests of this turn (_Writes)
        replies = self._replies
        if replies and replies[-1][1] == _END:  # the stream has ended: say why, rather than fail to write on it
            fault, detail = replies[-1][2]
            return SeatAnswer(None, fault, detail, fatal=True)
        # A reply counts only once its request is being sent: one that came earlier was dropped or queued as
        # unasked, so the time from t0 to an answer is never negative.
        self._asked.add(seq)
        self._asking, self._stale = seq, 0
        t0 = time.perf_counter()
        try:
            try:  # the write shares the decision's clock, and its timer
                if not await self._send(bytes_field(_DECISION, request), t0, allowance_s):
                    return SeatAnswer(None, TIMEOUT, f"the Play stream took no request for {allowance_s * 1000:.0f} ms "
                                                 "(the bot grants no flow-control window)",
                                  bot_us=int((time.perf_counter() - t0) * 1e6), fatal=True)  # fmt: skip
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as e:
                return SeatAnswer(None, DISCONNECTED, f"could not send on the Play stream: {reason(e)}", fatal=True)
            return await self._answer(seq, t0, allowance_s)
        finally:
            self._deadline = None

    async def _answer(self, seq: int, t0: float, allowance_s: float) -> SeatAnswer:
        """Wait for the answer to request ``seq`` until ``t0 + allowance_s``; the seat's timer wakes the wait then."""
        replies = self._replies
        loop = self._loop
        deadline = t0 + allowance_s
        extended = False
        while True:
            if not replies:
                if deadline > time.perf_counter():
                    waiter = self._waiter = loop.create_future()
                    try:
                        await waiter
                    finally:
                        self._waiter = None
                if not replies:
                    # The referee's own lateness is not the bot's: wait once more for as long as the loop was
                    # seen to stall, then give up.
                    stall = lag_monitor().worst_since(t0)
                    if not extended and stall > 0.002:
                        extended = True
                        deadline = time.perf_counter() + stall
                        self._set_deadline(t0, deadline)
                        continue
                    return SeatAnswer(None, TIMEOUT, f"no reply to seq {seq} within {allowance_s * 1000:.0f} ms",
                                  bot_us=int((time.perf_counter() - t0) * 1e6))  # fmt: skip
            item = replies.popleft()
            t, what, payload = item
            bot_us = max(0, int((t - t0) * 1e6))  # an item queued before this request: no time of its own
            if what == _REPLY:
                if payload.seq == seq:
                    if t - t0 > allowance_s and t - t0 - lag_monitor().worst_since(t0) > allowance_s:
                        return SeatAnswer(None, TIMEOUT, f"reply to seq {seq} came after {bot_us / 1000:.0f} ms",
                                      bot_us=bot_us)  # fmt: skip
                    return SeatAnswer(payload, bot_us=bot_us)
                continue  # the answer to an earlier request, after that decision had ended: dropped
            if what == _UNASKED:
                return SeatAnswer(None, INVALID, f"reply with seq {payload} came before any request with that seq: it "
                                                 "answers no question", bot_us=bot_us)  # fmt: skip
            if what == _BAD:
                return SeatAnswer(None, MALFORMED, payload, bot_us=bot_us)
            fault, detail = payload
            replies.appendleft(item)  # every later decision sees the end too
            return SeatAnswer(None, fault, detail, bot_us=bot_us, fatal=True)

    async def finish(self, notice: bot_pb.GameOverNotice | None) -> None:
        """Send the GameOverNotice (None for a retired seat) and close this game's transport."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._deadline = None
        if self.transport == "unary":
            if notice is not None:
                # GameOver is optional (UNIMPLEMENTED is fine) and the game is already decided.
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await self._ch.game_over(notice, timeout=CLOSE_TIMEOUT_S)
            return
        call, reader = self._call, self._reader
        if call is None:
            return
        self._call = self._reader = None
        try:
            if notice is not None and reader is not None and not reader.done():
                # One bound for the notice, the half-close and the bot's end of the stream: each write can stall.
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    await call.write(bytes_field(_GAME_OVER, notice.SerializeToString()))
                    await call.done_writing()
                    await asyncio.shield(reader)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, TimeoutError):
            pass
        finally:
            call.cancel()
            if reader is not None and not reader.done():
                reader.cancel()
