"""The Python bot kit for Abluxxen (docs/writing-a-bot.md).

Write a bot::

    from abluxx_bot import Bot, serve

    class Biggest(Bot):
        name, version, author = "biggest", "1.0.0", "me"

        def decide(self, d):          # or one method per kind: play, take_or_decline, reclaim_or_discard,
            return 0                  # draw, draw_one; return an index, a Group/Draw/Choice, or a pb Action

    serve(Biggest, port=50051)        # prints "listening on 127.0.0.1:50051"; stops on SIGINT/SIGTERM
    connect(Biggest, "referee.example:50050", token)   # or dial in to a referee: no port to open (dialin.py)

One ``Bot`` instance is made per game and seat; ``on_start(start)`` and ``on_game_over(notice)`` are optional.
``verify_commitment(record, start.deck_commitment)`` checks a game's deal later, from its record (GetGameRecord).

In-process adapter (the match runner uses it for built-in policies; the gRPC server uses the same class)::

    session = BotSession(bot: Bot)
    session.start(start: bot_pb2.GameStart) -> None                       # optional; calls bot.on_start
    session.answer(request: bot_pb2.DecisionRequest) -> bot_pb2.DecisionReply   # reply.index, reply.seq set
    session.game_over(notice: bot_pb2.GameOverNotice) -> None             # calls bot.on_game_over

``answer`` raises ``BotError`` (its message names the bot) when the bot raises or returns something that is not
a legal action. ``answer`` starts the session itself when the request carries ``start``.
"""

from referee.proto.abluxxen.v1 import bot_pb2, game_pb2

from .commitment import DealNotRevealed, verify_commitment
from .decision import Decision
from .dialin import Refused, connect, connect_async
from .server import BotService, serve, serve_async
from .session import Answer, Bot, BotError, BotFactory, BotSession, make_factory

__all__ = [
    "Answer", "Bot", "BotError", "BotFactory", "BotService", "BotSession", "DealNotRevealed", "Decision", "Refused",
    "bot_pb2", "connect", "connect_async", "game_pb2", "make_factory", "serve", "serve_async", "verify_commitment",
]  # fmt: skip
