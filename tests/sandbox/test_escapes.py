"""The sandbox's escape tests (docs/sandbox.md), with the real sandbox: a hostile bot, run as a sandboxed command
entrant, tries to reach the network, read the data folder and another bot's files, the referee's /proc and
environment, write outside its tmp, fill its tmp, fork-bomb, allocate 4 GiB, signal or ptrace the referee, and
outlive its game. Each try is refused; the bot then plays a whole game with two built-in seats, and no process of
its sandbox is left once it is stopped."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from referee.fleet import sandbox
from referee.fleet.bots import LocalBots
from referee.fleet.errors import EntrantError
from referee.fleet.lineup import Bot
from referee.match import ChannelPool, play_game
from referee.match.spec import EntrantRef, GameSpec
from tests.sandbox.conftest import needs_sandbox
from tests.service.helpers import wait_for

HERE = Path(__file__).parent
SECRET = "abluxx-referee-token-5f0c"

pytestmark = needs_sandbox()


def _host_ip() -> str:
    """An address of this machine other than the loopback (the sandbox has no route to it either)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.2"


def _uid_processes(uid: int) -> list[int]:
    """The live processes of host uid ``uid`` (a zombie is dead: a container's first process may never reap it)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid and Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z":
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.fixture
def data_folder(tmp_path: Path) -> Path:
    """A data folder as the referee keeps one: its database, a record and another bot's uploaded files."""
    data = tmp_path / "data"
    for rel in ("abluxx.db", "records/t1/g1.abluxx", "uploads/other/1/bot.py", "keys/deal.key"):
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        (data / rel).write_text("secret")
    return data


def test_every_escape_is_refused_and_the_bot_still_plays(
    tmp_path: Path, data_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ABLUXX_TOKEN", SECRET)  # the referee's environment holds a token
    listener = socket.create_server(("0.0.0.0", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    port = listener.getsockname()[1]
    targets = {
        "tcp_ports": [port], "host_ip": _host_ip(), "udp_port": udp.getsockname()[1], "secret": SECRET,
        "referee_pid": os.getpid(),
        "read": [str(data_folder / p) for p in ("abluxx.db", "records/t1/g1.abluxx", "uploads/other/1/bot.py",
                                                 "keys/deal.key")],
    }  # fmt: skip
    bot = Bot("hostile", command=("python3", "/bot/hostile_bot.py", json.dumps(targets)),
              sandbox=sandbox.Sandbox(files=str(HERE)))  # fmt: skip

    async def run() -> tuple[str, int, int]:
        async with LocalBots((bot,), tmp_path, "escape") as bots:
            address = bots.addresses["hostile"]
            uid = sandbox.UID_BASE + bots.procs["hostile"].pid
            spec = GameSpec(game_id="escape-1", seed=7, entrants=(EntrantRef("hostile", address=address),
                            EntrantRef("g1", policy="greedy"), EntrantRef("g2", policy="random")))  # fmt: skip
            async with ChannelPool() as pool:
                result = await play_game(spec, pool=pool)
            alive = len(_uid_processes(uid))
        return result, uid, alive

    result, uid, alive_in_game = asyncio.run(run())
    log = (tmp_path / "escape-hostile.log").read_text()
    tries = [line for line in log.splitlines() if line.startswith("TRY ")]
    assert len(tries) >= 20, log
    assert not [t for t in tries if "ESCAPED" in t], log
    assert alive_in_game >= 3  # bwrap, its init, the bot and its daemon
    # nothing of the sandbox outlives it, its daemon (an hour's sleep) neither: SIGKILLed, but on a loaded machine the
    # kernel may take a moment to end them after the stop returns
    wait_for("the sandbox's processes to end", lambda: not _uid_processes(uid), 60)
    assert result.seats[0].faults == {} and result.seats[0].decision_us  # it played every decision itself
    with pytest.raises(BlockingIOError):
        udp.recv(100)
    listener.settimeout(0.01)
    with pytest.raises(TimeoutError):
        listener.accept()


def test_a_sandboxed_bot_never_runs_without_its_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No bwrap on PATH: the entrant refuses to start, naming bubblewrap, and nothing runs."""
    monkeypatch.setenv("PATH", str(tmp_path))
    sandbox.problem.cache_clear()
    bot = Bot("b", command=("python3", "-c", "print('listening on unix:/x')"), sandbox=sandbox.Sandbox())
    try:
        with pytest.raises(EntrantError, match=r"bubblewrap.*never runs outside its sandbox"):
            asyncio.run(LocalBots((bot,), tmp_path, "nofallback").__aenter__())
    finally:
        sandbox.problem.cache_clear()
    assert not list(tmp_path.glob("*.log"))


def test_a_data_folder_the_sandbox_would_show_is_refused(tmp_path: Path) -> None:
    """A data folder inside the referee's Python (which every sandbox sees) would be readable to the bots."""
    # a name of this run's own: a folder left there by another run (a mutant that made it) cannot fail this one
    inside = Path(sandbox.runtime_paths()[0]) / f"abluxx-data-{tmp_path.name}-{os.getpid()}"
    bot = Bot("b", command=("true",), sandbox=sandbox.Sandbox())
    try:
        with pytest.raises(EntrantError, match="keep the data folder elsewhere"):
            asyncio.run(LocalBots((bot,), inside / "logs", "inside").__aenter__())
        assert not inside.exists()
    finally:
        shutil.rmtree(inside, ignore_errors=True)  # never leave a folder in the shared Python
