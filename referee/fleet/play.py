"""The fleet's contract with its callers: the play function, the decision callback and the player factory, and
the inline player (the match runner in the caller's own event loop)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from referee.match import ChannelPool, play_game
from referee.match.spec import GameResult, GameSpec
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records.paths import record_in

# Called with each decision of a game as it is made (the service feeds its live spectator stream with it).
OnDecision = Callable[[rec_pb.DecisionRecord], None]
# Plays one game: ``play(spec)``, or ``play(spec, on_decision=callback)`` when the caller wants the decisions live.
# The game's record is written (and synced) to ``<records>/<game_id>.abluxx`` before it returns, or to
# ``<records>/<record>.abluxx`` with ``record=`` (a duel's two games of a pair share their game id).
PlayFn = Callable[..., Awaitable[GameResult]]
# Opens the match runner inline: given the records folder, yields a function that plays one game.
PlayerFactory = Callable[[Path], AbstractAsyncContextManager[PlayFn]]


@contextlib.asynccontextmanager
async def match_player(records: Path) -> AsyncIterator[PlayFn]:
    """The real inline player: the match runner over gRPC, one shared channel per bot address, each record written
    (and synced) to ``<records>/<game_id>.abluxx`` before the game's result is returned."""
    async with ChannelPool() as pool:

        async def play(spec: GameSpec, on_decision: OnDecision | None = None, record: str | None = None) -> GameResult:
            relay = None if on_decision is None else (lambda d: on_decision(rec_pb.DecisionRecord.FromString(d)))
            path = record_in(records, record or spec.game_id)
            return await play_game(spec, pool=pool, record_path=path, on_decision=relay)

        yield play
