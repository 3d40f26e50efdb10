"""``Bot`` (what an author subclasses) and ``BotSession`` (one bot instance playing one game for one seat).

The gRPC server and the in-process match runner both drive bots through ``BotSession``, so a built-in policy and
a served bot answer through the same code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Union

from referee.engine import Choice, Draw, Group
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.wire import WireError, action_from_pb

from .decision import Decision

# What a decision method may return: an index into the legal list, an engine action, or an Action message.
Answer = Union[int, Group, Draw, Choice, pb.Action]  # noqa: UP007 (a runtime alias; | on pb classes is fine too)


MAX_ERROR_CHARS = 200  # bot.proto DecisionReply.error: the referee keeps no more than this


class BotError(RuntimeError):
    """A bot failed to answer: it raised, or returned something that is not a legal action.

    ``error`` is what goes in the reply's error field: the exception as ``"Type: message"``.
    """

    def __init__(self, message: str, error: str | None = None) -> None:
        super().__init__(message)
        self.error = (error if error is not None else f"BotError: {message}")[:MAX_ERROR_CHARS]


class Bot:
    """Subclass this. Set ``name``, ``version`` and ``author``, then define EITHER one method per decision kind,
    ``play(d)``, ``take_or_decline(d)``, ``reclaim_or_discard(d)``, ``draw(d)``, ``draw_one(d)``, OR one
    ``decide(d)``. ``d`` is a ``Decision``. Return an index into ``d.legal``, an engine action (``Group``,
    ``Draw``, ``Choice``) or a ``pb.Action``.

    The kit makes one instance per game and seat, so ``self`` may hold that game's state.
    """

    name: str = "bot"
    version: str = "0.0.0"
    author: str = ""

    def on_start(self, start: bot_pb.GameStart) -> None:
        """Called once before the first decision of a game (when the referee sends GameStart)."""

    def on_game_over(self, notice: bot_pb.GameOverNotice) -> None:
        """Called once at the end of a game, when the referee sends the notice."""

    def decide(self, d: Decision) -> Answer:
        method = getattr(self, d.kind.value, None)
        if method is None:
            raise BotError(
                f"bot {self.name!r} cannot answer a {d.kind.value} decision: define {d.kind.value}(d) or decide(d)"
            )
        return method(d)


BotFactory = Callable[[], Bot]


class BotSession:
    """One bot instance playing one game for one seat.

    ``start(start)`` on GameStart, ``answer(request) -> DecisionReply`` for each decision (a request that carries
    ``start`` starts the session first), and ``game_over(notice)`` at the end. ``answer`` raises ``BotError``
    when the bot raises or returns something that is not legal; the message names the bot.
    """

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.start_msg: bot_pb.GameStart | None = None
        self.last_used = time.monotonic()
        self.finished = False

    def start(self, start: bot_pb.GameStart) -> None:
        self.start_msg = start
        self.last_used = time.monotonic()
        self._call("on_start", self.bot.on_start, start)

    def answer(self, request: bot_pb.DecisionRequest) -> bot_pb.DecisionReply:
        self.last_used = time.monotonic()
        if self.start_msg is None and request.HasField("start"):
            self.start(request.start)
        try:
            d = Decision(request, self.start_msg)
        except WireError as e:
            raise BotError(f"bot {self.bot.name!r} got a bad request: {e}") from e
        answer = self._call(f"{d.kind.value} decision (seq {request.seq})", self.bot.decide, d)
        return bot_pb.DecisionReply(game_id=request.game_id, seq=request.seq, index=self._index(d, answer))

    def game_over(self, notice: bot_pb.GameOverNotice) -> None:
        self.last_used = time.monotonic()
        self.finished = True
        self._call("on_game_over", self.bot.on_game_over, notice)

    def _call(self, what: str, fn, arg):
        try:
            return fn(arg)
        except BotError:
            raise
        except Exception as e:
            error = f"{type(e).__name__}: {e}"
            raise BotError(f"bot {self.bot.name!r} raised in {what}: {error}", error) from e

    def _index(self, d: Decision, answer: object) -> int:
        n = len(d.request.legal_actions)
        if isinstance(answer, bool):
            raise BotError(f"bot {self.bot.name!r} returned {answer!r}: answer with an index, not a bool")
        if isinstance(answer, int):
            if not 0 <= answer < n:
                raise BotError(
                    f"bot {self.bot.name!r} returned index {answer} for seq {d.seq}; there are {n} legal actions"
                )
            return answer
        if isinstance(answer, pb.Action):
            try:
                answer = action_from_pb(answer)
            except WireError as e:
                raise BotError(f"bot {self.bot.name!r} returned a bad action: {e}") from e
        if isinstance(answer, Group | Draw | Choice):
            try:
                return d.legal.index(answer)
            except ValueError:
                raise BotError(
                    f"bot {self.bot.name!r} returned {answer!r}, which is not legal in this "
                    f"{d.kind.value} decision (seq {d.seq})"
                ) from None
        raise BotError(
            f"bot {self.bot.name!r} returned {answer!r}: return an index, a Group/Draw/Choice or a pb Action"
        )


def make_factory(bot_factory: type[Bot] | BotFactory) -> BotFactory:
    """A zero-arg callable returning a fresh Bot, checking that it really returns one."""

    def factory() -> Bot:
        bot = bot_factory()
        if not isinstance(bot, Bot):
            raise TypeError(f"bot factory {bot_factory!r} returned {type(bot).__name__}, not an abluxx_bot.Bot")
        return bot

    return factory
