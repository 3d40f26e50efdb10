"""Dial-in bots: a bot connected to the referee's BotGateway (proto/abluxxen/v1/gateway.proto) is reached at the
address ``dialin:NAME``, and the referee never dials it (docs/writing-a-bot.md, "Host it, or dial in").

The gateway (``referee/service/gateway.py``) keeps each connection here as a ``Link``. A seat for ``dialin:NAME``
is the one ``RemoteSeat`` of every remote bot: ``ChannelPool.get`` gives it a ``DialInChannel``, whose Hello is
the one the bot gave when it connected and whose ``play()`` is a ``GameCall``: it asks the bot (an OpenGame on its
connection) to open a BotGateway.Play call for the game, and then writes and reads that call as the seat writes
and reads a Play stream. So time control, strikes, faults, fallback and the write deadlines are the Play stream's,
in one place (``remote.py``). One call per game, not games multiplexed on the connection: each game has HTTP/2 flow
control of its own (a game the bot is slow to read stalls no other), and a decision costs what it costs on Play.

Links live in the process that holds the connection, so a game with a dial-in seat is played in that process
(``referee/fleet/pool.py``)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from referee.errors import BadInput
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import gateway_pb2 as gw_pb

DIALIN = "dialin:"  # the address of a dial-in bot: dialin:NAME
TICKET_KEY = "abluxx-ticket"  # a Play call's metadata: the OpenGame's ticket
MAX_IDLE_MESSAGES = 8  # messages a bot may send on Connect after its DialIn; one more ends the connection
# OpenGames a connection holds that its bot has not opened yet: one per seat, and a bot may hold every seat of its
# games (a duel's or a benchmark's tables): 64 games at once of up to 5 seats, and 2 more
MAX_WAITING_GAMES = 64 * 5 + 2


def is_dialin(address: str | None) -> bool:
    return address is not None and address.startswith(DIALIN)


def _unavailable(why: str) -> grpc.aio.AioRpcError:
    """A failure as a remote seat meets one from a bot it cannot reach (a DISCONNECTED or UNREACHABLE fault)."""
    return grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), details=why)


class Link:
    """One bot's connection to the gateway: its Hello, its owner, and the games waiting for their Play call."""

    def __init__(self, name: str, owner: str, hello: bot_pb.HelloReply) -> None:
        self.address = DIALIN + name
        self.owner = owner
        self.hello = bot_pb.HelloReply()
        self.hello.CopyFrom(hello)
        self.hello.ClearField("transports")
        self.hello.transports.append(bot_pb.TRANSPORT_STREAM)  # a dial-in bot plays on a stream of its own opening
        self.offers: asyncio.Queue[str] = asyncio.Queue(MAX_WAITING_GAMES)  # tickets for the gateway to send
        self.waiting: dict[str, GameCall] = {}
        self.closed = ""  # why, once closed

    def offer(self, call: GameCall) -> str:
        """A ticket for ``call``, queued for the bot; UNAVAILABLE when closed or too many games wait."""
        if self.closed:
            raise _unavailable(self.closed)
        ticket = secrets.token_urlsafe(18)
        try:
            self.offers.put_nowait(ticket)
        except asyncio.QueueFull:
            raise _unavailable(f"{MAX_WAITING_GAMES} games wait for the bot to open them") from None
        self.waiting[ticket] = call
        return ticket

    def close(self, why: str) -> None:
        """The connection ended: no new game; the games still waiting for their call fail (those playing go on)."""
        self.closed = why
        waiting, self.waiting = self.waiting, {}
        for call in waiting.values():
            call.fail(why)
        if links.get(self.address) is self:
            del links[self.address]


links: dict[str, Link] = {}  # address -> the bot's live connection (one per name: a new one replaces the old)


def register(link: Link) -> None:
    """``link`` is the bot's connection now; an older one for the same name is closed."""
    old = links.get(link.address)
    links[link.address] = link
    if old is not None:
        old.close("the bot connected again")


def claim(owner: str, ticket: str) -> GameCall | None:
    """The game waiting for ``ticket`` on one of ``owner``'s connections, taken off the waiting list."""
    for link in list(links.values()):
        if link.owner == owner and ticket in link.waiting:
            return link.waiting.pop(ticket)
    return None


class GameCall:
    """One game's BotGateway.Play call, as a seat uses a Play stream's call: ``write``, ``read``, ``done_writing``,
    ``cancel``. Made before the bot has opened it: the first write waits for it (within the seat's deadline for
    GameStart)."""

    def __init__(self, link: Link | None, address: str) -> None:
        loop = asyncio.get_running_loop()
        self._link = link
        self._context: Any = None
        self._attached: asyncio.Future[Any] = loop.create_future()
        self.ended: asyncio.Future[None] = loop.create_future()  # the gateway's Play handler returns at this
        self._ticket = ""
        try:
            if link is None:
                raise _unavailable(f"no bot is dialled in as {address.removeprefix(DIALIN)!r}")
            self._ticket = link.offer(self)
        except grpc.aio.AioRpcError as e:
            self._attached.set_exception(e)

    def attach(self, context: Any) -> None:
        """The bot opened the call: ``context`` is the gateway handler's."""
        if not self._attached.done():
            self._attached.set_result(context)

    def fail(self, why: str) -> None:
        if not self._attached.done():
            self._attached.set_exception(_unavailable(why))

    async def _opened(self) -> Any:
        """The handler's context, once the bot has opened the call. From then on ``write`` and ``read`` are the
        context's own (bound here): a decision costs no call of this class's."""
        if self._context is None:
            context = self._context = await asyncio.shield(self._attached)
            self.write, self.read = context.write, context.read  # type: ignore[method-assign]
        return self._context

    async def write(self, frame: bytes) -> None:
        if self.ended.done():
            raise asyncio.InvalidStateError
        await (await self._opened()).write(frame)

    async def read(self) -> Any:
        return await (await self._opened()).read()

    async def done_writing(self) -> None:
        """Nothing to do: the bot closes its side after GameOverNotice, and the call ends at ``cancel``."""

    def gone(self) -> None:
        """The gateway's handler ended (the game is over, or the bot dropped the call): a write now fails as on an
        ended Play stream (InvalidStateError), not on the finished call's context."""
        self.__dict__.pop("write", None)
        if not self.ended.done():
            self.ended.set_result(None)

    def cancel(self) -> None:
        if self._link is not None:
            self._link.waiting.pop(self._ticket, None)
        if not self.ended.done():
            self.ended.set_result(None)
        self.fail("the game is over")
        if self._attached.done() and not self._attached.cancelled():
            self._attached.exception()  # retrieved: a failure nobody waited for is not an error


class DialInChannel:
    """What a ``RemoteSeat`` calls for a dial-in bot, in place of a ``BotChannel``."""

    def __init__(self, address: str) -> None:
        self.address = address

    async def hello(self, request: bot_pb.HelloRequest, timeout: float | None = None) -> bot_pb.HelloReply:
        link = links.get(self.address)
        if link is None:
            raise _unavailable(f"no bot is dialled in as {self.address.removeprefix(DIALIN)!r}")
        return link.hello

    def play(self) -> GameCall:
        return GameCall(links.get(self.address), self.address)

    async def decide(self, request: bytes, timeout: float | None = None) -> bytes:
        raise _unavailable("a dial-in bot answers on its Play calls only")

    async def game_over(self, notice: bot_pb.GameOverNotice, timeout: float | None = None) -> bot_pb.GameOverAck:
        raise _unavailable("a dial-in bot answers on its Play calls only")


# -- the two calls' parts that are not the service's (its tokens, limits and entry: referee/service/gateway.py) --


def dial_in(raw: object) -> gw_pb.DialIn:
    """The bot's DialIn from its bytes (a read of Connect), or BadInput saying what is wrong with them."""
    if not isinstance(raw, bytes):  # grpc.aio.EOF
        raise BadInput("the bot closed Connect before its DialIn")
    try:
        message = gw_pb.DialIn.FromString(raw)
    except DecodeError as e:
        raise BadInput(f"undecodable DialIn ({len(raw)} bytes): {e}") from None
    if not message.HasField("hello"):
        raise BadInput("hello: the DialIn has no HelloReply")
    return message


Send = Callable[[gw_pb.GatewayMessage], Awaitable[None]]


async def serve_link(link: Link, context: Any, send: Send) -> None:
    """Send ``link``'s OpenGames with ``send`` until the bot closes Connect (or sends more than it may)."""
    reader = asyncio.ensure_future(_idle(context))
    try:
        while True:
            offer = asyncio.ensure_future(link.offers.get())
            await asyncio.wait({offer, reader}, return_when=asyncio.FIRST_COMPLETED)
            if not offer.done():
                offer.cancel()
                return reader.result()
            ticket = offer.result()
            if ticket in link.waiting:  # not given up already
                await send(gw_pb.GatewayMessage(open_game=gw_pb.OpenGame(ticket=ticket)))
    finally:
        reader.cancel()


async def _idle(context: Any) -> None:
    """Until the bot closes its side: nothing more is due from it, and a flood ends the connection."""
    for _ in range(MAX_IDLE_MESSAGES + 1):
        if await context.read() is grpc.aio.EOF:
            return
    raise BadInput(f"more than {MAX_IDLE_MESSAGES} messages after the DialIn; a bot sends nothing more on Connect")


async def play_call(owner: str, context: Any) -> bool:
    """Serve a BotGateway.Play call of ``owner``'s for the game its ticket names, until the game is over; False when
    no game of ``owner``'s waits for that ticket."""
    ticket = next((str(v) for k, v in context.invocation_metadata() or () if k == TICKET_KEY), "")
    call = claim(owner, ticket)
    if call is None:
        return False
    call.attach(context)
    try:
        await asyncio.shield(call.ended)  # the seat's cancel, at the end of the game
    finally:
        call.gone()
    return True


def bare_gateway() -> grpc.GenericRpcHandler:
    """BotGateway with no token, limit or entry: any DialIn is a link at once. Only for the benchmark
    (scripts/bench_referee.py) and the tests of the seat, which play games in their own process; the service
    serves ``referee/service/gateway.py``'s."""

    async def connect(requests: Any, context: Any) -> None:
        await context.write(gw_pb.GatewayMessage(hello=bot_pb.HelloRequest()).SerializeToString())
        message = dial_in(await context.read())
        link = Link(message.name, "", message.hello)
        register(link)

        async def send(m: gw_pb.GatewayMessage) -> None:
            await context.write(m.SerializeToString())

        try:
            await send(gw_pb.GatewayMessage(entered=gw_pb.Entered(entrant=message.name)))
            await serve_link(link, context, send)
        finally:
            link.close("the bot's connection closed")

    async def play(requests: Any, context: Any) -> None:
        await play_call("", context)

    handlers = {"Connect": connect, "Play": play}
    return grpc.method_handlers_generic_handler(
        "abluxxen.v1.BotGateway", {k: grpc.stream_stream_rpc_method_handler(v) for k, v in handlers.items()}
    )
