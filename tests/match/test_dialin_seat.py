"""Equal treatment: the same policy, hosted (the referee dials it) and dialled in (it dials the referee's
BotGateway), on the same deals against the same opponent, makes the same moves and gets the same results. Both bots
are real ``abluxx bot greedy`` processes; the dial-in one listens on nothing and connects to a gateway served in the
test's own process (``dialin.bare_gateway``: the service's gateway without its tokens and entry), where the games
are played."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import grpc

from referee.match import ChannelPool, EntrantRef, GameSpec, TimeControl, dialin, play_game
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
SEEDS = (11, 12, 13, 14)


async def _moves(address: str, seed: int, folder: Path, pool: ChannelPool) -> tuple[list[tuple], tuple]:
    decisions: list[tuple] = []

    def seen(raw: bytes) -> None:
        d = rec_pb.DecisionRecord.FromString(raw)
        decisions.append((d.seat, d.seq, d.index, d.chosen_by, d.fault))

    spec = GameSpec(
        game_id=f"g{seed}-{address.replace(':', '-')}",
        seed=seed,
        entrants=(EntrantRef("bot", address=address), EntrantRef("opp", policy="counter")),
        time_control=TimeControl(decision_ms=2000, bank_ms=5000, grace_ms=500),
    )
    result = await play_game(spec, pool=pool, record_path=folder / f"{spec.game_id}.abluxx", on_decision=seen)
    return decisions, (result.scores, result.places, result.final_digest)


async def _both(hosted: str, tmp: Path) -> list[tuple]:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((dialin.bare_gateway(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    bot = subprocess.Popen([*ABLUXX, "bot", "greedy", "--connect", f"127.0.0.1:{port}", "--token", "unused-token",
                            "--as", "g"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        for _ in range(600):
            if "dialin:g" in dialin.links:
                break
            await asyncio.sleep(0.1)
        assert "dialin:g" in dialin.links, "the dial-in bot did not connect"
        async with ChannelPool() as pool:
            return [(await _moves(hosted, s, tmp, pool), await _moves("dialin:g", s, tmp, pool)) for s in SEEDS]
    finally:
        bot.kill()
        bot.wait()
        await server.stop(0)


def test_the_same_policy_hosted_and_dialled_in_makes_the_same_moves_on_the_same_deals(tmp_path: Path) -> None:
    hosted = subprocess.Popen([*ABLUXX, "bot", "greedy", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert hosted.stdout is not None
        address = hosted.stdout.readline().split()[-1]
        pairs = asyncio.run(_both(address, tmp_path))
    finally:
        hosted.kill()
        hosted.wait()
    for (moves_hosted, result_hosted), (moves_dialled, result_dialled) in pairs:
        assert len(moves_hosted) > 10
        assert not any(fault for *_, fault in moves_hosted + moves_dialled)  # every move the bot's own
        assert moves_dialled == moves_hosted
        assert result_dialled == result_hosted
