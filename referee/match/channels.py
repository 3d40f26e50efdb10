"""The long-lived gRPC channels to remote bots, one per address, and how a failed call becomes a fault."""

from __future__ import annotations

import asyncio
import re

import grpc

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb

from .dialin import DialInChannel, is_dialin
from .seats import BOT_SERVICE, DISCONNECTED, MALFORMED, MAX_RECEIVE_BYTES, RPC_ERROR, TIMEOUT


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
            BOT_SERVICE + "Hello",
            request_serializer=bot_pb.HelloRequest.SerializeToString,
            response_deserializer=bot_pb.HelloReply.FromString,
        )
        self.decide: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = self.channel.unary_unary(
            BOT_SERVICE + "Decide", request_serializer=_ident
        )
        self.play: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = self.channel.stream_stream(
            BOT_SERVICE + "Play", request_serializer=_ident
        )
        self.game_over = self.channel.unary_unary(
            BOT_SERVICE + "GameOver",
            request_serializer=bot_pb.GameOverNotice.SerializeToString,
            response_deserializer=bot_pb.GameOverAck.FromString,
        )


class ChannelPool:
    """Channels to bots keyed by address: one per bot, created on first use, closed by ``close``.

    Channels belong to the event loop that made them: make the pool inside the loop that plays the games."""

    def __init__(self) -> None:
        self._channels: dict[str, BotChannel] = {}

    def get(self, address: str) -> BotChannel:
        if is_dialin(address):  # a bot connected to the referee: never dialled (dialin.py)
            return DialInChannel(address)  # type: ignore[return-value]  # the seat calls what both have alike
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


MAX_REASON_CHARS = 200  # an exception told in a fault's detail, at most
_REPR = re.compile(r"<[^<>]* at 0x[0-9a-fA-F]+>")


def reason(e: BaseException) -> str:
    """An exception as a fault's detail says it: a gRPC error's status and details (``UNAVAILABLE: Socket
    closed``), a call used after its end as such, anything else ``Type: message``; one line, never a Python repr
    (``<AioRpcError ... object at 0x7f...>``) and never a debug string."""
    if isinstance(e, grpc.aio.AioRpcError):
        code = e.code()
        said = f"{code.name if code else 'UNKNOWN'}: {e.details() or ''}".rstrip(": ")
    elif isinstance(e, asyncio.InvalidStateError):
        said = "the call had already ended"
    else:  # a message that quotes an object's repr (gRPC's ExecuteBatchError does) keeps its words only
        said = f"{type(e).__name__}: {_REPR.sub('', str(e))}".rstrip(":(), ")
    said = " ".join(said.split())
    return said if len(said) <= MAX_REASON_CHARS else said[: MAX_REASON_CHARS - 1] + "…"


def rpc_fault(e: grpc.aio.AioRpcError, what: str) -> tuple[int, str]:
    code = e.code()
    detail = f"{what}: {reason(e)}"
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return MALFORMED, f"{detail} (a message over the {MAX_RECEIVE_BYTES // 1024} KiB limit)"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return TIMEOUT, detail
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        return DISCONNECTED, detail
    return RPC_ERROR, detail
