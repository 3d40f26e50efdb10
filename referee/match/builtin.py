"""Built-in seats: a policy played in-process, the bot kit's example bots or the fallback by name."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

from .seats import INVALID, SeatAnswer


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
