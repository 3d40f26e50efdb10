"""Seats: who answers a seat's decisions (docs/match.md).

- ``RemoteSeat``: a bot over gRPC, on the Play stream when it offers one, else on unary Decide calls.
- ``BuiltinSeat``: a policy run in-process (the bot kit's example bots, or the fallback policy by name).
- ``fallback_index``: the deterministic policy that plays a decision, or a whole seat, for a bot that failed.

A seat only transports: it returns the bot's raw ``DecisionReply`` or a fault. The runner checks the reply
against the legal actions, keeps the time bank and the strikes, and calls the fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import grpc
from google.protobuf.message import DecodeError

from referee.engine import Group, Kind, State
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.wire import bytes_field

from .clock import lag_monitor

MAX_RECEIVE_BYTES = 64 * 1024  # a bot cannot make the referee allocate more than this per message
HELLO_TIMEOUT_S = 1.0  # bot.proto: a bot must answer Hello within a second (every Hello the referee asks)
CLOSE_TIMEOUT_S = 1.0  # how long the end of a game waits for a bot to take its GameOverNotice
MAX_STALE_REPLIES = 8  # Play stream messages between two requests that answer nothing asked; one more closes it

TIMEOUT = rec_pb.FAULT_KIND_TIMEOUT
INVALID = rec_pb.FAULT_KIND_INVALID
MALFORMED = rec_pb.FAULT_KIND_MALFORMED
RPC_ERROR = rec_pb.FAULT_KIND_RPC_ERROR
DISCONNECTED = rec_pb.FAULT_KIND_DISCONNECTED
UNREACHABLE = rec_pb.FAULT_KIND_UNREACHABLE

_SERVICE = "/abluxxen.v1.Bot/"
MAX_HELLO_TEXT_BYTES = 200  # HelloReply name, version and author: the most the referee accepts (and stores)


_TRANSPORTS = (bot_pb.TRANSPORT_STREAM, bot_pb.TRANSPORT_UNARY)


# --- Hello ----------------------------------------------------------------------------------------------------
# The match (before every game), a tournament's start-up check and SubmitBot all ask Hello through ``ask_hello``,
# so a bot passes or fails them alike: the same timeout, the same receive limit, the same checks of the reply.


class HelloError(Exception):
    """A bot that failed Hello: ``code`` is the call's gRPC status when it failed (None when the reply was wrong),
    ``why`` says what went wrong without the address."""

    def __init__(self, address: str, why: str, code: grpc.StatusCode | None = None) -> None:
        self.address, self.why, self.code = address, why, code
        super().__init__(f"cannot reach a bot at {address}: Hello failed: {why}" if code is not None else
                         f"the bot at {address}: {why}")  # fmt: skip


def _hello_reply_problem(reply: bot_pb.HelloReply) -> str | None:
    if reply.protocol_version != bot_pb.PROTOCOL_VERSION_1:
        return f"it speaks protocol version {reply.protocol_version}; the referee speaks {bot_pb.PROTOCOL_VERSION_1}"
    for field in ("name", "version", "author"):
        if len(getattr(reply, field).encode()) > MAX_HELLO_TEXT_BYTES:
            return f"its Hello {field} is over {MAX_HELLO_TEXT_BYTES} bytes"
    if not set(_TRANSPORTS) & set(reply.transports):
        shown = list(reply.transports[:8])
        return (f"its Hello offers no known transport (transports={shown}); offer TRANSPORT_STREAM (Play) or "
                "TRANSPORT_UNARY (Decide)")  # fmt: skip
    return None


async def ask_hello(call: Callable[..., Awaitable[bot_pb.HelloReply]], address: str) -> bot_pb.HelloReply:
    """Hello on ``call`` (a channel's Hello method) within HELLO_TIMEOUT_S: the reply of a bot that speaks
    PROTOCOL_VERSION_1, keeps its texts within MAX_HELLO_TEXT_BYTES and offers a known transport; else HelloError."""
    try:
        reply = await call(bot_pb.HelloRequest(protocol_version=bot_pb.PROTOCOL_VERSION_1), timeout=HELLO_TIMEOUT_S)
    except grpc.aio.AioRpcError as e:
        code = e.code()
        said = f"no answer within {HELLO_TIMEOUT_S:g} s" if code == grpc.StatusCode.DEADLINE_EXCEEDED else e.details()
        raise HelloError(address, f"{code.name}: {said or ''}".rstrip(": "), code) from None
    if problem := _hello_reply_problem(reply):
        raise HelloError(address, problem)
    return reply


async def hello(address: str) -> bot_pb.HelloReply:
    """``ask_hello`` on a channel of its own, with the match's receive limit: for a check outside a game."""
    options = [("grpc.max_receive_message_length", MAX_RECEIVE_BYTES)]
    async with grpc.aio.insecure_channel(address, options=options) as channel:
        call = channel.unary_unary(
            _SERVICE + "Hello",
            request_serializer=bot_pb.HelloRequest.SerializeToString,
            response_deserializer=bot_pb.HelloReply.FromString,
        )
        return await ask_hello(call, address)


class SeatError(Exception):
    """A seat that cannot play at all (unreachable, wrong protocol): the fallback plays it from the start."""

    def __init__(self, fault: int, detail: str) -> None:
        super().__init__(detail)
        self.fault = fault
        self.detail = detail


@dataclass(slots=True)
class SeatAnswer:
    """What a seat made of one decision request: the bot's reply, or the fault that kept it from one, and the time
    it took. (Not the kit's ``abluxx_bot.Answer``, which is what a bot's decision method returns.)"""

    reply: bot_pb.DecisionReply | None  # None when there was a fault
    fault: int = 0  # a FaultKind value; 0 for none
    detail: str = ""
    bot_us: int = 0  # the time from sending the request to the reply's arrival, as the referee saw it
    transport_us: int = 0  # transport overhead where it can be told apart (0 when it cannot)
    fatal: bool = False  # the seat cannot answer any more (its stream dropped): retire it now


class Seat(Protocol):
    """One seat's player for one game. ``connect`` and ``start`` raise SeatError when the seat cannot play."""

    name: str
    version: str
    author: str
    address: str
    kind: rec_pb.SeatKind
    transport: str  # "stream", "unary" or "builtin"

    @property
    def is_fallback(self) -> bool:
        """True when the seat is the fallback policy itself: the runner plays it from the engine state with
        ``fallback_index`` and asks nothing (no request is built for it)."""
        ...

    async def connect(self) -> None: ...

    async def start(self, start: bot_pb.GameStart) -> None: ...

    async def decide(self, request: bytes, seq: int, allowance_s: float) -> SeatAnswer:
        """Ask for decision ``seq``: ``request`` is the serialized DecisionRequest."""
        ...

    async def finish(self, notice: bot_pb.GameOverNotice | None) -> None: ...


# --- the fallback ---------------------------------------------------------------------------------------------


def fallback_index(state: State) -> int:
    """The fallback policy: deterministic, no randomness, documented in docs/match.md.

    - To play (R5): the group with the most cards; among equals, the first in the legal list (the lowest value,
      then the fewest jokers).
    - Every other decision: the first legal action (take; reclaim; the lowest market card, the pile last; in a
      draw-one decision the lowest market card).
    """
    legal = state.legal
    if state.kind is Kind.PLAY:
        best, best_count = 0, -1
        for i, g in enumerate(legal):
            count = g.count if isinstance(g, Group) else 0
            if count > best_count:
                best, best_count = i, count
        return best
    return 0


# --- built-in policies ----------------------------------------------------------------------------------------


def _registry() -> dict[str, Any]:
    try:
        from abluxx_bot.examples import REGISTRY
    except ImportError:
        return {}
    return REGISTRY


def builtin_names() -> list[str]:
    """The built-in policy names: "fallback" and the bot kit's example bots (each also as ``NAME+epsP``, a noisy
    version: docs/bots.md)."""
    return ["fallback", *sorted(_registry())]


def is_builtin(policy: str) -> bool:
    """Whether ``policy`` names a built-in policy: one of builtin_names() or a noisy example bot (``greedy+eps0.2``)."""
    return policy == "fallback" or _factory(policy) is not None


def _factory(policy: str) -> Any:
    try:
        from abluxx_bot.examples import factory
    except ImportError:
        return None
    return factory(policy)


class BuiltinSeat:
    """A built-in policy in-process. ``session`` has the bot kit's BotSession interface: ``start(GameStart)``,
    ``answer(DecisionRequest) -> DecisionReply`` and ``game_over(GameOverNotice)``. ``None`` is the "fallback"
    policy, which the runner plays itself from the engine state (no request is built for it)."""

    kind = rec_pb.SEAT_KIND_BUILTIN
    transport = "builtin"
    address = ""
    author = "abluxx"

    def __init__(self, name: str, policy: str, session: Any | None, version: str = "1") -> None:
        self.name = name
        self.policy = policy
        self.version = version
        self.session = session

    @property
    def is_fallback(self) -> bool:
        return self.session is None

    @classmethod
    def from_policy(cls, name: str, policy: str, seed: int) -> BuiltinSeat:
        """The seat for a built-in ``policy`` by name; ValueError names the known ones."""
        if policy == "fallback":
            return cls(name, policy, None)
        make = _factory(policy)
        if make is None:
            raise ValueError(f"unknown policy {policy!r}; known: {', '.join(builtin_names())} (or NAME+epsP)")
        from abluxx_bot import BotSession

        bot = make(seed)
        return cls(name, policy, BotSession(bot), version=str(getattr(bot, "version", "1")))

    async def connect(self) -> None:
        return None

    async def start(self, start: bot_pb.GameStart) -> None:
        if self.session is not None:
            self.session.start(start)

    async def decide(self, request: bytes, seq: int, allowance_s: float) -> SeatAnswer:
        if self.session is None:
            raise RuntimeError("the fallback policy is played by the runner, not asked")
        t0 = time.perf_counter()
        try:
            reply = self.session.answer(bot_pb.DecisionRequest.FromString(request))
        except Exception as e:  # a built-in policy's bug costs its seat a strike, not the game
            return SeatAnswer(None, INVALID, f"built-in policy {self.policy}: {e}")
        return SeatAnswer(reply, bot_us=int((time.perf_counter() - t0) * 1e6))

    async def finish(self, notice: bot_pb.GameOverNotice | None) -> None:
        if self.session is not None and notice is not None:
            with contextlib.suppress(Exception):  # the game is decided; a policy's end-of-game bug changes nothing
                self.session.game_over(notice)


# --- remote bots ----------------------------------------------------------------------------------------------


def _ident(b: bytes) -> bytes:
    return b


class BotChannel:
    """One long-lived channel to one bot address and its method callables, shared by every game."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.channel = grpc.aio.insecure_channel(
            address,
            options=[
                ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
                ("grpc.keepalive_time_ms", 30_000),
                ("grpc.enable_retries", 0),
            ],
        )
        # Replies come back as raw bytes and are decoded by the seat, so an undecodable reply is one bad message
        # (a MALFORMED fault) rather than a failed call that would end the stream.
        self.hello = self.channel.unary_unary(
            _SERVICE + "Hello",
            request_serializer=bot_pb.HelloRequest.SerializeToString,
            response_deserializer=bot_pb.HelloReply.FromString,
        )
        self.decide: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = self.channel.unary_unary(
            _SERVICE + "Decide", request_serializer=_ident
        )
        self.play: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = self.channel.stream_stream(
            _SERVICE + "Play", request_serializer=_ident
        )
        self.game_over = self.channel.unary_unary(
            _SERVICE + "GameOver",
            request_serializer=bot_pb.GameOverNotice.SerializeToString,
            response_deserializer=bot_pb.GameOverAck.FromString,
        )


class ChannelPool:
    """Channels to bots keyed by address: one per bot, created on first use, closed by ``close``.

    Channels belong to the event loop that made them: make the pool inside the loop that plays the games."""

    def __init__(self) -> None:
        self._channels: dict[str, BotChannel] = {}

    def get(self, address: str) -> BotChannel:
        ch = self._channels.get(address)
        if ch is None:
            ch = self._channels[address] = BotChannel(address)
        return ch

    async def close(self) -> None:
        channels, self._channels = list(self._channels.values()), {}
        for ch in channels:
            await ch.channel.close()

    async def __aenter__(self) -> ChannelPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _rpc_fault(e: grpc.aio.AioRpcError, what: str) -> tuple[int, str]:
    code = e.code()
    detail = f"{what}: {code.name if code else 'UNKNOWN'}: {e.details() or ''}".rstrip(": ")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return MALFORMED, f"{detail} (a message over the {MAX_RECEIVE_BYTES // 1024} KiB limit)"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return TIMEOUT, detail
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        return DISCONNECTED, detail
    return RPC_ERROR, detail


# RefereeMessage's fields (bot.proto), each written as ``bytes_field(field, serialized message)``: a request goes
# on the stream without being copied into a message first.
_START, _DECISION, _GAME_OVER = 1, 2, 3
_DECISION_START = 10  # DecisionRequest.start (its last field, so appending it encodes as the message would)


_REPLY, _BAD, _UNASKED, _END = 0, 1, 2, 3


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
        # One timer per write and the wait for its answer (_send, _expire): the task while its write is pending.
        self._timer: asyncio.TimerHandle | None = None
        self._writer: asyncio.Task[Any] | None = None
        self._write_extended = False

    async def connect(self) -> None:
        try:
            hello = await ask_hello(self._ch.hello, self.address)
        except HelloError as e:
            raise SeatError(UNREACHABLE, str(e)) from None
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
        self._call = self._ch.play()
        tc = start.time_control
        limit_s = (tc.decision_ms + tc.grace_ms) / 1000
        try:
            sent = await self._send(bytes_field(_START, start.SerializeToString()), time.perf_counter(), limit_s)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as e:
            raise SeatError(UNREACHABLE, f"could not open the Play stream to {self.address}: {e}") from None
        finally:
            self._timer.cancel()  # type: ignore[union-attr]
        if not sent:
            why = f"the Play stream to {self.address} took no GameStart within {limit_s * 1000:.0f} ms"
            raise SeatError(TIMEOUT, why + " (the bot grants no flow-control window)")
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _send(self, frame: bytes, t0: float, limit_s: float) -> bool:
        """Write ``frame`` on the Play stream by ``t0 + limit_s`` (``time.perf_counter``), as a bot can stall a
        write forever by granting no HTTP/2 flow-control window. False when it did (the call is then cancelled).

        The deadline's timer is left armed in ``self._timer``, for the caller to cancel: a decision waits on it
        for the reply too, so the bound costs the hot path no timer of its own."""
        loop = asyncio.get_running_loop()
        self._writer = task = asyncio.current_task()
        self._write_extended = False
        self._timer = loop.call_at(loop.time() + t0 + limit_s - time.perf_counter(), self._expire, t0)
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

    def _expire(self, t0: float) -> None:
        """The deadline of a write or of the wait for its reply: stop a pending write, else wake the waiter. The
        referee's own event loop stalls extend a write's deadline once, as the wait's (the bot is not to blame)."""
        writer = self._writer
        if writer is None:
            _wake(self._waiter)
            return
        stall = lag_monitor().worst_since(t0)
        if stall > 0.002 and not self._write_extended:
            self._write_extended = True
            self._timer = asyncio.get_running_loop().call_later(stall, self._expire, t0)
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
                if reply is not None and reply.seq == self._asking:
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
            put((now(), _END, _rpc_fault(e, "the Play stream failed")))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the call ended in a way grpc reports otherwise
            put((now(), _END, (DISCONNECTED, f"the Play stream ended: {e!r}")))

    async def decide(self, request: bytes, seq: int, allowance_s: float) -> SeatAnswer:
        if self.transport == "unary":
            return await self._decide_unary(request, seq, allowance_s)
        return await self._decide_stream(request, seq, allowance_s)

    async def _decide_unary(self, request: bytes, seq: int, allowance_s: float) -> SeatAnswer:
        if self._start is not None:
            request += bytes_field(_DECISION_START, self._start.SerializeToString())
            self._start = None
        t0 = time.perf_counter()
        try:
            raw = await self._ch.decide(request, timeout=allowance_s)
        except grpc.aio.AioRpcError as e:
            fault, detail = _rpc_fault(e, "Decide failed")
            return SeatAnswer(None, fault, detail, bot_us=int((time.perf_counter() - t0) * 1e6))
        bot_us = int((time.perf_counter() - t0) * 1e6)
        try:
            reply = bot_pb.DecisionReply.FromString(raw)
        except DecodeError as e:
            return SeatAnswer(None, MALFORMED, f"undecodable DecisionReply ({len(raw)} bytes): {e}", bot_us=bot_us)
        if reply.seq != seq:
            return SeatAnswer(None, INVALID, f"reply to seq {reply.seq} for request seq {seq}", bot_us=bot_us)
        return SeatAnswer(reply, bot_us=bot_us)

    async def _decide_stream(self, request: bytes, seq: int, allowance_s: float) -> SeatAnswer:
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
                return SeatAnswer(None, DISCONNECTED, f"could not send on the Play stream: {e!r}", fatal=True)
            return await self._answer(seq, t0, allowance_s)
        finally:
            self._timer.cancel()  # type: ignore[union-attr]

    async def _answer(self, seq: int, t0: float, allowance_s: float) -> SeatAnswer:
        """Wait for the answer to request ``seq`` until ``t0 + allowance_s``; ``self._timer`` wakes the wait then."""
        replies = self._replies
        loop = asyncio.get_running_loop()
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
                        self._timer.cancel()  # type: ignore[union-attr]
                        self._timer = loop.call_later(stall, self._expire, t0)
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
                return SeatAnswer(None, INVALID, f"reply with seq {payload} answers no question (asked {seq})",
                              bot_us=bot_us)  # fmt: skip
            if what == _BAD:
                return SeatAnswer(None, MALFORMED, payload, bot_us=bot_us)
            fault, detail = payload
            replies.appendleft(item)  # every later decision sees the end too
            return SeatAnswer(None, fault, detail, bot_us=bot_us, fatal=True)

    async def finish(self, notice: bot_pb.GameOverNotice | None) -> None:
        """Send the GameOverNotice (None for a retired seat) and close this game's transport."""
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
