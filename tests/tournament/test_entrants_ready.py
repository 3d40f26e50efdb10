"""Entrants made ready before play: at once for ``abluxx tournament``, or waiting for bots that come back later (the
service's resumed run). A real bot process on a real socket."""

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from referee.tournament import entrants
from referee.tournament.config import TournamentConfig, load
from referee.tournament.entrants import EntrantError

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(tmp_path: Path, address: str) -> TournamentConfig:
    p = tmp_path / "c.toml"
    p.write_text(
        f'name = "ready"\n[[entrants]]\nname = "away"\naddress = "{address}"\n'
        '[[entrants]]\nname = "house"\npolicy = "greedy"\n'
    )
    return load(p)


def test_an_unreachable_bot_is_refused_at_once_without_retry(tmp_path: Path) -> None:
    cfg = config(tmp_path, f"127.0.0.1:{free_port()}")

    async def go() -> None:
        async with entrants.ready(cfg, tmp_path / "logs"):
            raise AssertionError("an unreachable entrant was made ready")

    with pytest.raises(EntrantError, match="entrant away: cannot reach a bot"):
        asyncio.run(go())


def test_with_retry_the_run_waits_for_a_bot_that_comes_back_and_gives_up_when_told(tmp_path: Path) -> None:
    port = free_port()
    cfg = config(tmp_path, f"127.0.0.1:{port}")
    tries = []

    async def wait_for_bot() -> dict[str, str]:
        async with entrants.ready(
            cfg, tmp_path / "logs", retry_s=0.2, keep_trying=lambda: tries.append(1) or True
        ) as addresses:
            return addresses

    async def back_later() -> dict[str, str]:
        waiting = asyncio.create_task(wait_for_bot())
        await asyncio.sleep(0.5)
        assert not waiting.done()  # still waiting for the bot
        bot = subprocess.Popen([*ABLUXX, "bot", "greedy", "--port", str(port)], stdout=subprocess.DEVNULL)
        try:
            return await asyncio.wait_for(waiting, 60)
        finally:
            bot.terminate()
            bot.wait(10)

    assert asyncio.run(back_later()) == {"away": f"127.0.0.1:{port}"}
    assert tries  # it did retry

    async def told_to_stop() -> None:
        async with entrants.ready(cfg, tmp_path / "logs", retry_s=0.1, keep_trying=lambda: False):
            raise AssertionError("an unreachable entrant was made ready")

    with pytest.raises(EntrantError, match="entrant away"):
        asyncio.run(told_to_stop())
