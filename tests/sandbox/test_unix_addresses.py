"""The kit serves on a Unix socket, as a sandbox needs (docs/sandbox.md): ``abluxx bot NAME --host unix:PATH``, and
``ABLUXX_LISTEN=unix:PATH`` over whatever address it was given; the referee plays a whole game with it there."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.match import ChannelPool, play_game
from referee.match.spec import EntrantRef, GameSpec

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]


@pytest.mark.parametrize("by_env", [False, True])
def test_the_kit_serves_a_whole_game_on_a_unix_socket(tmp_path: Path, by_env: bool) -> None:
    address = f"unix:{tmp_path}/bot.sock"
    argv = [*ABLUXX, "bot", "greedy", "--port", "0", *([] if by_env else ["--host", address])]
    env = {**os.environ, "ABLUXX_LISTEN": address} if by_env else {k: v for k, v in os.environ.items()
                                                                   if k != "ABLUXX_LISTEN"}  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == f"listening on {address}"
        spec = GameSpec("unix-1", 5, (EntrantRef("u", address=address), EntrantRef("r", policy="random")))

        async def play():
            async with ChannelPool() as pool:
                return await play_game(spec, pool=pool)

        result = asyncio.run(play())
        assert result.seats[0].faults == {} and result.seats[0].decision_us
    finally:
        proc.terminate()
        assert proc.wait(30) == 0
