"""The long-lived gRPC channels to remote bots, one per address, and how a failed call becomes a fault."""

from __future__ import annotations

import grpc

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb

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


def rpc_fault(e: grpc.aio.AioRpcError, what: str) -> tuple[int, str]:
    code = e.code()
    detail = f"{what}: {code.name if code else 'UNKNOWN'}: {e.details() or ''}".rstrip(": ")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return MALFORMED, f"{detail} (a message over the {MAX_RECEIVE_BYTES // 1024} KiB limit)"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return TIMEOUT, detail
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        return DISCONNECTED, detail
    return RPC_ERROR, detail
