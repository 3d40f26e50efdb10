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
from typing import Any

import grpc

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb

DIALIN = "dialin:"  # the address of a dial-in bot: dialin:NAME
MAX_WAITING_GAMES = 66  # OpenGames a connection holds that its bot has not opened yet (64 games at once, and 2 more)


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
        if self._context is None:
            self._context = await asyncio.shield(self._attached)
        return self._context

    async def write(self, frame: bytes) -> None:
        if self.ended.done():
            raise asyncio.InvalidStateError
        await (self._context or await self._opened()).write(frame)

    async def read(self) -> Any:
        return await (self._context or await self._opened()).read()

    async def done_writing(self) -> None:
        """Nothing to do: the bot closes its side after GameOverNotice, and the call ends at ``cancel``."""

    def gone(self) -> None:
        """The gateway's handler ended (the game is over, or the bot dropped the call)."""
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
