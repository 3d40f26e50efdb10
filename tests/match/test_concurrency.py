"""The referee under load must not blame bots for its own slowness."""

from __future__ import annotations

import asyncio

import pytest

from referee.match import ChannelPool, EntrantRef, GameSpec, TimeControl, play_game
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

from .helpers import bot_process, verify

GAMES = 64


@pytest.mark.slow
def test_no_timeout_charged_for_answers_well_within_the_limit_at_64_games(tmp_path):
    # Every 7th answer takes 200 ms of a 1 s limit with no bank: only the referee being late could make one of them
    # a timeout (the limit leaves the bot's own process room on a busy machine; the referee's lateness is what counts).
    tc = TimeControl(decision_ms=1000, bank_ms=0, grace_ms=50)
    args = ["--mode", "slow", "--delay-ms", "200", "--every", "7", "--policy", "biggest"]
    with bot_process(*args) as address:

        async def go():
            async with ChannelPool() as pool:
                specs = [
                    GameSpec(
                        f"load-{i}", 100 + i, (EntrantRef("a", address), EntrantRef("b", address)), time_control=tc
                    )
                    for i in range(GAMES)
                ]
                results = await asyncio.gather(
                    *(play_game(s, pool=pool, record_path=tmp_path / f"{s.game_id}.abluxx") for s in specs)
                )
                return results, len(pool._channels)

        results, channels = asyncio.run(go())
    assert channels == 1, "all games share one channel to the bot"
    slow = 0
    for r in results:
        rec = verify(r.record_path)
        charged = [d for d in rec.decisions if d.fault not in (0, rec_pb.FAULT_KIND_REFEREE)]
        assert charged == [], [(d.seq, d.fault_detail) for d in charged]
        assert not any(s.retired for s in r.seats)
        slow += sum(us >= 200_000 for s in r.seats for us in s.decision_us)
    assert slow >= GAMES, "the bot was slow often enough for the test to mean something"
