"""``connect``: a bot that dials in to a referee's BotGateway instead of listening (docs/writing-a-bot.md, "Host it,
or dial in"). It needs no open port and no address the referee could reach: only a way out to the referee.

The bot opens ``Connect`` with its author's token, answers the referee's Hello with a DialIn (its name, its Hello,
how many games it plays at once), and then opens a ``Play`` call for each OpenGame, on which it is asked for its
moves exactly as a hosted bot is on Bot.Play (the same ``BotService`` code answers). When the connection drops it
connects again, waiting 1 s, then twice as long each time, up to 30 s; a refusal (a wrong token, a bot that failed
its validation game, a name of another author's) is final and ``connect`` returns 1.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import gateway_pb2 as gw_pb
from referee.terminal import printable

from .server import BotService
from .session import Bot, BotFactory, make_factory

GATEWAY = "/abluxxen.v1.BotGateway/"
TICKET_KEY = "abluxx-ticket"
FIRST_RETRY_S, MAX_RETRY_S = 1.0, 30.0
# a ping every 30 s, answered within 10 s (gRPC core waits ping_timeout, 60 s by default, unless it is set too)
CHANNEL_OPTIONS = [("grpc.keepalive_time_ms", 30_000), ("grpc.keepalive_timeout_ms", 10_000),
                   ("grpc.http2.ping_timeout_ms", 10_000)]  # fmt: skip
# The referee's answer that no retry can change: the bot stops and says why.
FINAL = {
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ALREADY_EXISTS,
}


class Refused(Exception):
    """The referee refused the bot for good: the message says why."""


class _Aborted(Exception):
    pass


class _Context:
    """The little of a servicer context ``BotService.Play`` uses."""

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise _Aborted(details)


def _channel(server: str, tls: bool, tls_ca: Path | None) -> grpc.aio.Channel:
    if tls or tls_ca is not None:
        root = tls_ca.read_bytes() if tls_ca is not None else None
        return grpc.aio.secure_channel(server, grpc.ssl_channel_credentials(root), options=CHANNEL_OPTIONS)
    return grpc.aio.insecure_channel(server, options=CHANNEL_OPTIONS)


class _DialIn:
    """One bot's connection to the gateway, and its games."""

    def __init__(self, service: BotService, name: str, token: str, games_at_once: int, log) -> None:
        self.service, self.name, self.games_at_once, self.log = service, name, games_at_once, log
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.games: set[asyncio.Task[None]] = set()
        self.entered = ""

    async def run(self, channel: grpc.aio.Channel) -> None:
        """One connection, until it ends (AioRpcError, or a clean end)."""
        call = channel.stream_stream(
            GATEWAY + "Connect",
            request_serializer=gw_pb.DialIn.SerializeToString,
            response_deserializer=gw_pb.GatewayMessage.FromString,
        )(metadata=self.metadata)
        try:
            await call.read()  # the referee's HelloRequest
            hello = await self.service.Hello(bot_pb.HelloRequest(), None)
            await call.write(gw_pb.DialIn(name=self.name, hello=hello, games_at_once=self.games_at_once))
            while isinstance(message := await call.read(), gw_pb.GatewayMessage):
                self._on(channel, message)
        finally:
            call.cancel()

    def _on(self, channel: grpc.aio.Channel, message: gw_pb.GatewayMessage) -> None:
        which = message.WhichOneof("message")
        if which == "entered":
            self.entered = message.entered.entrant
            new = f" (a new version; validation game {message.entered.validation_game_id})"
            print(
                f"dialled in as {self.entered}{new if message.entered.new_version else ''}", file=self.log, flush=True
            )
        elif which == "open_game":
            task = asyncio.get_running_loop().create_task(self._game(channel, message.open_game.ticket))
            self.games.add(task)
            task.add_done_callback(self.games.discard)

    async def _game(self, channel: grpc.aio.Channel, ticket: str) -> None:
        """One game on a Play call of its own, answered by ``BotService.Play`` as a hosted bot's."""
        call = channel.stream_stream(
            GATEWAY + "Play",
            request_serializer=bot_pb.DecisionReply.SerializeToString,
            response_deserializer=bot_pb.RefereeMessage.FromString,
        )(metadata=(*self.metadata, (TICKET_KEY, ticket)))

        async def messages() -> AsyncIterator[bot_pb.RefereeMessage]:
            while (m := await call.read()) is not grpc.aio.EOF:
                assert isinstance(m, bot_pb.RefereeMessage)
                yield m
                if m.WhichOneof("message") == "game_over":
                    return

        try:
            async for reply in self.service.Play(messages(), _Context()):
                await call.write(reply)
            await call.done_writing()
        except (grpc.aio.AioRpcError, _Aborted, asyncio.InvalidStateError) as e:
            print(f"abluxx_bot: a game ended early: {_why(e)}", file=self.log, flush=True)
            call.cancel()


def _why(e: BaseException) -> str:
    if isinstance(e, grpc.aio.AioRpcError):
        return printable(f"{e.code().name}: {e.details() or ''}")
    return printable(str(e))


async def connect_async(
    bot_factory: type[Bot] | BotFactory,
    server: str,
    token: str,
    *,
    name: str = "",
    games_at_once: int = 1,
    tls: bool = False,
    tls_ca: Path | None = None,
    threads: int = 0,
    stop: asyncio.Event | None = None,
    log=sys.stderr,
) -> None:
    """Dial in to the referee at ``server`` until ``stop`` is set (SIGINT/SIGTERM when None), connecting again when
    the connection drops. ``name`` is the entrant's name (default: the bot's own ``name``). Raises Refused when the
    referee refuses the bot for good."""
    factory = make_factory(bot_factory)
    service = BotService(factory, threads=threads, log=log)
    dial = _DialIn(service, name or factory().name, token, games_at_once, log)
    if stop is None:
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    stopped = asyncio.ensure_future(stop.wait())
    wait = FIRST_RETRY_S
    try:
        async with _channel(server, tls, tls_ca) as channel:
            while not stop.is_set():
                connection = asyncio.ensure_future(dial.run(channel))
                await asyncio.wait({connection, stopped}, return_when=asyncio.FIRST_COMPLETED)
                if stopped.done():
                    connection.cancel()
                    break
                why = _ended(connection)
                if dial.entered:
                    wait = FIRST_RETRY_S  # it had been in: the next drop waits from the start again
                dial.entered = ""
                print(
                    f"abluxx_bot: the connection to {server} ended ({why}); again in {wait:g} s", file=log, flush=True
                )
                await asyncio.wait({stopped}, timeout=wait)
                wait = min(MAX_RETRY_S, wait * 2)
    finally:
        stopped.cancel()
        for game in list(dial.games):
            game.cancel()
        service.close()


def _ended(connection: asyncio.Future[None]) -> str:
    """Why a connection ended; Refused when for good."""
    e = connection.exception()
    if isinstance(e, grpc.aio.AioRpcError) and e.code() in FINAL:
        raise Refused(_why(e))
    if e is None:
        return "the referee closed it"
    if not isinstance(e, grpc.aio.AioRpcError):
        raise e
    return _why(e)


def connect(
    bot_factory: type[Bot] | BotFactory,
    server: str,
    token: str,
    *,
    name: str = "",
    games_at_once: int = 1,
    tls: bool = False,
    tls_ca: Path | None = None,
    threads: int = 0,
) -> int:
    """Dial in to the referee at ``server`` (HOST:PORT) with the author ``token``, until SIGINT or SIGTERM; the
    referee asks this process for its moves, and needs no way to reach it. Returns 0, or 1 (with the reason on
    stderr) when the referee refused the bot for good."""
    try:
        asyncio.run(connect_async(bot_factory, server, token, name=name, games_at_once=games_at_once, tls=tls,
                                  tls_ca=tls_ca, threads=threads))  # fmt: skip
    except Refused as e:
        print(f"abluxx_bot: the referee refused the bot: {e}", file=sys.stderr, flush=True)
        return 1
    return 0
