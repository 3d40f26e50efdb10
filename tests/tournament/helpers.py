"""An in-process game player for unit tests of the tournament layer: the engine and the example policies, with no
gRPC, no clocks and no records. The integration tests use the real match runner over real gRPC instead."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path

from abluxx_bot import BotSession
from abluxx_bot.examples import REGISTRY
from abluxx_bot.local import play_local

from referee.engine import digest
from referee.match.spec import GameResult, GameSpec, SeatStats

POLICY_OF = {"rnd": "random", "rnd2": "random", "greedy": "greedy", "greedy2": "greedy", "counter": "counter"}


def config_text(names: list[str], **top: object) -> str:
    lines = [f"{k} = {v!r}".replace("'", '"') if not isinstance(v, bool) else f"{k} = {str(v).lower()}"
             for k, v in top.items()]  # fmt: skip
    for n in names:
        lines += ["[[entrants]]", f'name = "{n}"', f'policy = "{POLICY_OF.get(n, "random")}"']
    return "\n".join(lines) + "\n"


@contextlib.asynccontextmanager
async def in_process_player(records: Path, jitter_seed: int | None = None) -> AsyncIterator:
    """Plays each GameSpec in-process; with ``jitter_seed``, games finish after a random short delay, so that at
    concurrency > 1 they complete out of schedule order."""
    rng = random.Random(jitter_seed)

    async def play(spec: GameSpec) -> GameResult:
        if jitter_seed is not None:
            await asyncio.sleep(rng.random() * 0.05)
        sessions = [BotSession(REGISTRY[e.policy or "random"](7)) for e in spec.entrants]
        game = play_local(sessions, spec.seed, game_id=spec.game_id, options=spec.options,
                         start_seat=spec.start_seat, names=[e.name for e in spec.entrants])  # fmt: skip
        return GameResult(
            game_id=spec.game_id,
            scores=game.scores,
            places=game.places,
            end_reason=game.state.end_reason,
            seats=[SeatStats(decision_us=[1]) for _ in spec.entrants],
            decisions=game.decisions,
            final_digest=digest(game.state),
            record_path=None,
        )

    yield play
