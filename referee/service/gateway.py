"""The dial-in gateway, ``abluxxen.v1.BotGateway`` on the service's port (proto/abluxxen/v1/gateway.proto;
docs/writing-a-bot.md, "Host it, or dial in"): a bot that nothing can reach connects here instead.

``Connect`` is the bot's connection: an author's token, the caps on connections (in all and per author), the
HelloRequest, the bot's DialIn within ``dialin_hello_s``; then SubmitBot's own checks and entry (``submit``: the
Hello, a validation game over this connection, the open ladders) for a new name or a new Hello version, or the
same version up again. While it is open the bot is ``referee.match.dialin``'s ``Link`` at ``dialin:NAME`` and the
ladders may seat it: each game asks it, with an OpenGame, to open a ``Play`` call, which the game's seat then
writes and reads as it does a bot's Play stream. When it closes the entrant is down (docs/bot-health.md); a game
in flight follows the fault policy on its own call. The referee never dials a dial-in bot.

Both calls are served as raw bytes (a generic handler): the Play call's replies are decoded by the seat, so an
undecodable one is one MALFORMED fault as on Bot.Play, and a DialIn that does not decode is refused in words.
"""

from __future__ import annotations

import asyncio

import grpc

from referee.errors import AlreadyExists, Busy, Denied, NotFound, Precondition, Unavailable
from referee.event_loop import wait_for
from referee.match import dialin
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import gateway_pb2 as gw_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

from .auth import Principal
from .base import abort_call
from .entrants import EntrantCalls
from .streams import Streams

GATEWAY_SERVICE = "abluxxen.v1.BotGateway"


class GatewayCalls(EntrantCalls):
    """BotGateway's two calls, on the service's state (a dial-in bot enters through ``EntrantCalls.submit``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        s = self.settings
        self.dialins = Streams(s.max_dialins, s.max_dialins_per_author, ("bots dialled in", "dial-in connections"))

    async def gateway_connect(self, request_iterator, context: grpc.aio.ServicerContext) -> None:
        try:
            who = self.auth.caller(context)
            if who.organiser:  # a token that runs the server does not belong on a bot's machine
                raise Denied("dial in with an author's token: an organiser's token is refused on BotGateway")
            self._writable()
            with self.dialins.admit_client(who.name):
                await self._connected(who, context)
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as e:
            await abort_call(self, context, "Connect", e)

    async def gateway_play(self, request_iterator, context: grpc.aio.ServicerContext) -> None:
        try:
            who = self.auth.caller(context)
            if not await dialin.play_call(who.name, context):
                raise NotFound(
                    f"no game of yours waits for the ticket in {dialin.TICKET_KEY!r} metadata (a ticket is good for "
                    "one game, until its start times out)"
                )
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as e:
            await abort_call(self, context, "Play", e)

    async def _write(self, context: grpc.aio.ServicerContext, message: gw_pb.GatewayMessage) -> None:
        """Write ``message`` on Connect; a bot that takes none for ``dialin_hello_s`` is closed (a slow reader)."""
        try:
            await wait_for(context.write(message.SerializeToString()), self.settings.dialin_hello_s)
        except TimeoutError:
            raise Unavailable(f"the bot took no message on Connect for {self.settings.dialin_hello_s} s") from None

    async def _dial_in(self, context: grpc.aio.ServicerContext) -> gw_pb.DialIn:
        await self._write(
            context, gw_pb.GatewayMessage(hello=bot_pb.HelloRequest(protocol_version=bot_pb.PROTOCOL_VERSION_1))
        )
        try:
            raw = await wait_for(context.read(), self.settings.dialin_hello_s)
        except TimeoutError:
            raise Precondition(f"no DialIn within {self.settings.dialin_hello_s} s of connecting") from None
        return dialin.dial_in(raw)

    async def _connected(self, who: Principal, context: grpc.aio.ServicerContext) -> None:
        message = await self._dial_in(context)
        name = message.name.strip()
        latest = self.registry.bot(name)
        # before its link may take another's place; an organiser too: a dial-in bot is its connection's author's
        if latest is not None and latest.owner != who.name:
            raise Denied(f"the bot {name!r} belongs to {latest.owner!r}; choose another name")
        if name in self.submitting:  # before its link could replace the one the validation game is played on
            raise Busy(f"bot {name!r} is being validated already; wait for that to finish")
        link = dialin.Link(name, who.name, message.hello)
        dialin.register(link)
        lock = asyncio.Lock()  # one write at a time on the call: the OpenGames (a validation game's too), Entered

        async def send(message: gw_pb.GatewayMessage) -> None:
            async with lock:
                await self._write(context, message)

        pump = asyncio.ensure_future(dialin.serve_link(link, context, send))
        entrant = ""
        entering = asyncio.ensure_future(self._enter(who, name, link, message.games_at_once))
        try:
            await asyncio.wait({entering, pump}, return_when=asyncio.FIRST_COMPLETED)
            if not entering.done():  # the bot closed Connect, or flooded it, while it was being checked
                entering.cancel()
                pump.result()
                raise Precondition("the bot closed Connect before it was entered")
            entered = entering.result()
            entrant = entered.entrant
            await send(gw_pb.GatewayMessage(entered=entered))
            self.log.info("bot dialled in", bot=entrant, owner=who.name, new_version=entered.new_version)
            await pump
        finally:
            entering.cancel()
            pump.cancel()
            link.close("the bot's connection closed")
            if entrant and not self.draining and link.address not in dialin.links:
                self.health.absent(entrant, "its dial-in connection closed")
                self.log.info("dial-in bot gone", bot=entrant)

    async def _enter(self, who: Principal, name: str, link: dialin.Link, games_at_once: int) -> gw_pb.Entered:
        """SubmitBot's checks and entry over the connection: a new version, or the same one (up again)."""
        before = self.registry.bot(name)
        try:
            response = await self.submit(
                ref_pb.SubmitBotRequest(name=name, address=link.address, games_at_once=games_at_once), who
            )
        except AlreadyExists:  # unchanged and up
            response = None
        if response is not None and response.HasField("refusal"):
            refusal = response.refusal
            raise Precondition(f"refused: {refusal.reason}")
        bot = self.registry.bot(name)
        assert bot is not None
        new = before is None or before.version != bot.version
        return gw_pb.Entered(
            entrant=bot.entrant_id, new_version=new, validation_game_id=bot.validation_game if new else ""
        )


def gateway_handler(service: GatewayCalls) -> grpc.GenericRpcHandler:
    """BotGateway's calls on raw bytes (their messages are decoded by the gateway and the seats)."""
    return grpc.method_handlers_generic_handler(
        GATEWAY_SERVICE,
        {
            "Connect": grpc.stream_stream_rpc_method_handler(service.gateway_connect),
            "Play": grpc.stream_stream_rpc_method_handler(service.gateway_play),
        },
    )
