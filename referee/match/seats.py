"""Seats: who answers a seat's decisions (docs/match.md).

- ``remote.RemoteSeat``: a bot over gRPC, on the Play stream when it offers one, else on unary Decide calls, through
  the long-lived channels of ``channels``, after the Hello of ``hello``.
- ``builtin.BuiltinSeat``: a policy run in-process (the bot kit's example bots, or the fallback policy by name).
- ``fallback_index`` (here): the deterministic policy that plays a decision, or a whole seat, for a bot that failed.

This module holds what every seat shares: the ``Seat`` protocol, its answer and error, the fault kinds and limits.
A seat only transports: it returns the bot's raw ``DecisionReply`` or a fault. The runner checks the reply
against the legal actions, keeps the time bank and the strikes, and calls the fallback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from referee.engine import Group, Kind, State
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

MAX_RECEIVE_BYTES = 64 * 1024  # a bot cannot make the referee allocate more than this per message
CLOSE_TIMEOUT_S = 1.0  # how long the end of a game waits for a bot to take its GameOverNotice
MAX_STALE_REPLIES = 8  # Play stream messages between two requests that answer nothing asked; one more closes it

TIMEOUT = rec_pb.FAULT_KIND_TIMEOUT
INVALID = rec_pb.FAULT_KIND_INVALID
MALFORMED = rec_pb.FAULT_KIND_MALFORMED
RPC_ERROR = rec_pb.FAULT_KIND_RPC_ERROR
DISCONNECTED = rec_pb.FAULT_KIND_DISCONNECTED
UNREACHABLE = rec_pb.FAULT_KIND_UNREACHABLE

BOT_SERVICE = "/abluxxen.v1.Bot/"  # the bot service's method path prefix (bot.proto)


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
