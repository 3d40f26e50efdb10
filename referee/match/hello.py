"""Hello: the match (before every game), a tournament's start-up check and SubmitBot all ask it through
``ask_hello``, so a bot passes or fails them alike: the same timeout, the same receive limit, the same checks of the
reply."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb

from .dialin import DialInChannel, is_dialin
from .seats import BOT_SERVICE, MAX_RECEIVE_BYTES

HELLO_TIMEOUT_S = 1.0  # bot.proto: a bot must answer Hello within a second (every Hello the referee asks)
MAX_HELLO_TEXT_BYTES = 200  # HelloReply name, version and author: the most the referee accepts (and stores)
HELLO_TRIES = 3  # a check outside a game asks again when the answer is late, at most this often (``hello``)


_TRANSPORTS = (bot_pb.TRANSPORT_STREAM, bot_pb.TRANSPORT_UNARY)


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
    if not isinstance(reply, bot_pb.HelloReply):  # grpc gives None for bytes that do not decode as a HelloReply
        raise HelloError(address, "its Hello reply is not a HelloReply (the bytes do not decode: bad protobuf or "
                         "a string that is not UTF-8)")  # fmt: skip
    if problem := _hello_reply_problem(reply):
        raise HelloError(address, problem)
    return reply


async def hello(address: str) -> bot_pb.HelloReply:
    """``ask_hello`` on a channel of its own, with the match's receive limit: for a check outside a game (SubmitBot,
    a run's start-up check, a bot's name). A late answer (DEADLINE_EXCEEDED) is asked again, at most HELLO_TRIES
    times in all, each within HELLO_TIMEOUT_S: one late answer on a busy machine (the referee's or the bot's) does
    not refuse a bot or stop a run, while a bot that is late every time fails as it does in a game. Every other
    failure counts at once. A game's own Hello is asked once: its bot's time is the game's. A dial-in bot is not
    dialled: its Hello is the one it gave when it connected, while it is connected (dialin.py)."""
    if is_dialin(address):
        return await ask_hello(DialInChannel(address).hello, address)
    options = [("grpc.max_receive_message_length", MAX_RECEIVE_BYTES)]
    async with grpc.aio.insecure_channel(address, options=options) as channel:
        call = channel.unary_unary(
            BOT_SERVICE + "Hello",
            request_serializer=bot_pb.HelloRequest.SerializeToString,
            response_deserializer=bot_pb.HelloReply.FromString,
        )
        for _ in range(HELLO_TRIES - 1):
            try:
                return await ask_hello(call, address)
            except HelloError as e:
                if e.code != grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise
        return await ask_hello(call, address)
