"""The real game player for tournaments: the match runner over gRPC, one shared channel per bot address, each
record written (and synced) to ``<data>/records/<game_id>.abluxx`` before the store commits the game."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from referee.match import ChannelPool, play_game
from referee.match.spec import GameResult, GameSpec
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records.paths import record_in

from .runner import OnDecision, PlayFn


@contextlib.asynccontextmanager
async def match_player(records: Path) -> AsyncIterator[PlayFn]:
    async with ChannelPool() as pool:

        async def play(spec: GameSpec, on_decision: OnDecision | None = None) -> GameResult:
            relay = None if on_decision is None else (lambda d: on_decision(rec_pb.DecisionRecord.FromString(d)))
            return await play_game(spec, pool=pool, record_path=record_in(records, spec.game_id), on_decision=relay)

        yield play
