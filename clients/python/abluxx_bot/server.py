"""``serve``: run a bot as the ``abluxxen.v1.Bot`` gRPC service (grpc.aio), with the standard health service."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
import traceback
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import NoReturn

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio

from referee.netaddr import listen_problem
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import bot_pb2_grpc
from referee.terminal import printable

from .session import Bot, BotError, BotFactory, BotSession, make_factory

SERVICE_NAME = "abluxxen.v1.Bot"
LISTEN_ENV = "ABLUXX_LISTEN"  # where to serve, as a sandbox tells its bot (docs/sandbox.md)
IDLE_TIMEOUT_S = 600.0  # a unary game nobody has asked about for this long is forgotten
_SWEEP_EVERY_S = 30.0


class CannotListen(OSError):
    """Nothing can listen on the address asked for; the message says why in words."""


class BotService(bot_pb2_grpc.BotServicer):
    """The Bot service for one bot factory. Unary games are kept by (game_id, seat); a Play stream owns its own."""

    def __init__(
        self, factory: BotFactory, threads: int = 0, idle_timeout_s: float = IDLE_TIMEOUT_S, log=sys.stderr
    ) -> None:
        self._factory = factory
        self._about: Bot = factory()  # for Hello
        self._sessions: dict[tuple[str, int], BotSession] = {}
        self._idle_timeout_s = idle_timeout_s
        self._last_sweep = time.monotonic()
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="bot") if threads > 0 else None
        self._log = log

    @property
    def open_games(self) -> int:
        """Unary games started and not yet over (nor forgotten)."""
        return len(self._sessions)

    async def _run(self, fn: Callable, arg):
        # Inline by default: bots are Python and hold the GIL, so threads would add cost, not speed. A bot that
        # waits on I/O or native code can ask for threads.
        if self._executor is None:
            return fn(arg)
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, arg)

    def _report(self, e: BotError) -> None:
        print(f"abluxx_bot: {e}", file=self._log)
        traceback.print_exception(e.__cause__ or e, file=self._log)

    def _error_reply(self, request: bot_pb.DecisionRequest, e: BotError) -> bot_pb.DecisionReply:
        """The answer to a decision the bot failed: no action, and the error in words. It costs one strike (the
        referee's fallback plays the decision) where a failed call or stream would retire the seat."""
        self._report(e)
        return bot_pb.DecisionReply(game_id=request.game_id, seq=request.seq, error=e.error)

    async def _fail(self, context: grpc.aio.ServicerContext, e: BotError) -> NoReturn:
        self._report(e)
        await context.abort(grpc.StatusCode.INTERNAL, str(e))

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < _SWEEP_EVERY_S:
            return
        self._last_sweep = now
        stale = [k for k, s in self._sessions.items() if now - s.last_used > self._idle_timeout_s]
        for k in stale:
            del self._sessions[k]

    async def Hello(self, request: bot_pb.HelloRequest, context) -> bot_pb.HelloReply:
        b = self._about
        return bot_pb.HelloReply(
            name=b.name,
            version=b.version,
            author=b.author,
            protocol_version=bot_pb.PROTOCOL_VERSION_1,
            transports=[bot_pb.TRANSPORT_UNARY, bot_pb.TRANSPORT_STREAM],
        )

    async def Decide(self, request: bot_pb.DecisionRequest, context) -> bot_pb.DecisionReply:
        self._sweep()
        key = (request.game_id, request.seat)
        session = self._sessions.get(key)
        try:
            if session is None or request.HasField("start"):
                session = BotSession(self._factory())
                self._sessions[key] = session
            return await self._run(session.answer, request)
        except BotError as e:
            return self._error_reply(request, e)
        except Exception as e:  # the factory itself failed
            await self._fail(context, BotError(f"bot {self._about.name!r} could not be made: {e}"))

    async def GameOver(self, request: bot_pb.GameOverNotice, context) -> bot_pb.GameOverAck:
        session = self._sessions.pop((request.game_id, request.seat), None)
        if session is not None:
            try:
                await self._run(session.game_over, request)
            except BotError as e:
                await self._fail(context, e)
        return bot_pb.GameOverAck()

    async def Play(
        self, request_iterator: AsyncIterator[bot_pb.RefereeMessage], context
    ) -> AsyncIterator[bot_pb.DecisionReply]:
        session: BotSession | None = None
        try:
            async for msg in request_iterator:
                which = msg.WhichOneof("message")
                if which == "start":
                    session = BotSession(self._factory())
                    await self._run(session.start, msg.start)
                elif which == "decision":
                    if session is None:
                        session = BotSession(self._factory())
                    try:
                        reply = await self._run(session.answer, msg.decision)
                    except BotError as e:
                        reply = self._error_reply(msg.decision, e)
                    yield reply
                elif which == "game_over":
                    if session is not None:
                        await self._run(session.game_over, msg.game_over)
                    session = None
                else:
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "empty RefereeMessage on the Play stream")
        except BotError as e:
            await self._fail(context, e)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)


async def serve_async(
    bot_factory: type[Bot] | BotFactory,
    port: int,
    host: str = "127.0.0.1",
    *,
    threads: int = 0,
    ready: Callable[[str, int], None] | None = None,
    stop: asyncio.Event | None = None,
    grace_s: float = 2.0,
) -> None:
    """Serve until ``stop`` is set, or SIGINT/SIGTERM when ``stop`` is None. ``ready(host, port)`` runs once
    serving (by default it prints ``listening on HOST:PORT``). ``host`` may be ``unix:PATH`` (a Unix socket; the
    port is then not used); ``ABLUXX_LISTEN`` in the environment (a sandbox sets it) overrides both."""
    host = os.environ.get(LISTEN_ENV) or host
    if host.startswith("unix:"):
        return await _serve(bot_factory, host, threads, ready, stop, grace_s)
    factory = make_factory(bot_factory)
    service = BotService(factory, threads=threads)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    bot_pb2_grpc.add_BotServicer_to_server(service, server)
    health = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    if problem := listen_problem(host, port):  # in words, before gRPC logs a raw line and raises its own
        raise CannotListen(problem)
    try:
        bound = server.add_insecure_port(f"{host}:{port}")
    except RuntimeError:  # the port was taken since the check
        bound = 0
    if bound == 0:
        raise CannotListen(f"cannot listen on {host}:{port}: the port is in use or the host is not this machine's")
    await _run(server, service, health, (host, bound), ready, stop, grace_s)


async def _serve(bot_factory, address: str, threads: int, ready, stop, grace_s: float) -> None:
    """``serve_async`` on the Unix socket ``address`` (``unix:PATH``); ``ready(address, 0)`` runs once serving."""
    service = BotService(make_factory(bot_factory), threads=threads)
    server = grpc.aio.server()
    bot_pb2_grpc.add_BotServicer_to_server(service, server)
    health = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    try:
        server.add_insecure_port(address)
    except RuntimeError:
        raise CannotListen(f"cannot listen on {address}: its folder is missing or not writable") from None
    await _run(server, service, health, (address, 0), ready, stop, grace_s)


async def _run(server, service: BotService, health, at: tuple[str, int], ready, stop, grace_s: float) -> None:
    await server.start()
    await health.set("", health_pb2.HealthCheckResponse.SERVING)
    await health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    if ready is None:
        print(f"listening on {at[0]}" + (f":{at[1]}" if at[1] else ""), flush=True)
    else:
        ready(*at)

    loop = asyncio.get_running_loop()
    if stop is None:
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await health.enter_graceful_shutdown()
        await server.stop(grace_s)
        service.close()


EXIT_CANNOT_LISTEN = 2  # as `abluxx bot` exits (docs/cli.md): the address asked for cannot be served


def serve(bot_factory: type[Bot] | BotFactory, port: int, host: str = "127.0.0.1", *, threads: int = 0) -> int:
    """Serve ``bot_factory`` (a Bot subclass or a zero-arg callable returning a Bot) on ``host:port`` until SIGINT
    or SIGTERM. Port 0 picks a free port; prints ``listening on HOST:PORT`` once serving. Returns 0.

    When nothing can listen there (the port is in use or out of range, the host is unknown or not this machine's)
    it prints one line on stderr, ``abluxx_bot: cannot listen on HOST:PORT: why``, and exits the process with
    status 2 (``EXIT_CANNOT_LISTEN``); ``serve_async`` raises CannotListen (an OSError) instead."""
    try:
        asyncio.run(serve_async(bot_factory, port, host, threads=threads))
    except CannotListen as e:
        print(f"abluxx_bot: {printable(str(e))}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_CANNOT_LISTEN) from None
    return 0
