"""Entrants made ready before play: at once for ``abluxx tournament``, or waiting for bots that come back later (the
service's resumed run). A real bot process on a real socket."""

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from referee.fleet import EntrantError, ready
from referee.tournament.config import EntrantConfig, TournamentConfig, load
from referee.tournament.play import lineup

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
        async with ready(lineup(cfg), tmp_path / "logs"):
            raise AssertionError("an unreachable entrant was made ready")

    with pytest.raises(EntrantError, match="entrant away: cannot reach a bot"):
        asyncio.run(go())


def test_with_retry_the_run_waits_for_a_bot_that_comes_back_and_gives_up_when_told(tmp_path: Path) -> None:
    port = free_port()
    cfg = config(tmp_path, f"127.0.0.1:{port}")
    tries = []

    async def wait_for_bot() -> dict[str, str]:
        async with ready(
            lineup(cfg), tmp_path / "logs", retry_s=0.2, keep_trying=lambda: tries.append(1) or True
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
        async with ready(lineup(cfg), tmp_path / "logs", retry_s=0.1, keep_trying=lambda: False):
            raise AssertionError("an unreachable entrant was made ready")

    with pytest.raises(EntrantError, match="entrant away"):
        asyncio.run(told_to_stop())


def _running_with(marker: str) -> list[int]:
    """Live (not zombie) processes whose command line holds ``marker``."""
    found = []
    for d in Path("/proc").iterdir():
        try:
            if marker in (d / "cmdline").read_text() and (d / "stat").read_text().split(") ")[1][0] != "Z":
                found.append(int(d.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_failed_start_stops_the_command_entrants_still_starting(tmp_path: Path) -> None:
    # "slow" is a bot process still coming up when "broken" fails to start: it must not outlive the refusal
    marker = f"slow-bot-{tmp_path.name}"
    slow = f"import time; time.sleep(1.5); print('listening on 127.0.0.1:1', flush=True); time.sleep(60)  # {marker}"
    cfg = TournamentConfig(
        name="race",
        entrants=(
            EntrantConfig("slow", command=(sys.executable, "-c", slow)),
            EntrantConfig("broken", command=(str(tmp_path / "no-such-bot"),)),
        ),
    )

    async def go() -> None:
        with pytest.raises(EntrantError, match="entrant broken: cannot start"):
            async with ready(lineup(cfg), tmp_path / "logs"):
                raise AssertionError("a broken entrant was made ready")
        await asyncio.sleep(3)  # the slow bot would have printed its address by now

    asyncio.run(go())
    left = _running_with(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    if left:
        pytest.fail(f"the slow entrant's process {left} outlived the refused start")
