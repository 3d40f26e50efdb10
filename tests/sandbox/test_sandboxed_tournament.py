"""Sandboxed command entrants in a real tournament (``abluxx tournament run``): each runs where its games are
played, in the coordinator's process or on each worker process, started once there and reused for every game,
unless ``fresh_process`` starts one for each game. The games are played over the sandbox's Unix socket without a
fault."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sandbox.conftest import needs_sandbox
from tests.tournament.test_command_bots import _running
from tests.tournament.test_real import ABLUXX, abluxx, standings_json, write_config

pytestmark = needs_sandbox()


def _entrant(name: str, kind: str) -> str:
    argv = [sys.executable, "-c", ABLUXX[2], "bot", kind, "--port", "0"]
    return f"[[entrants]]\nname = {json.dumps(name)}\ncommand = {json.dumps(argv)}\nsandbox = true\n"


RAY = pytest.mark.skipif(importlib.util.find_spec("ray") is None and os.environ.get("CI") != "true",
                         reason='Ray is an optional extra: pip install -e ".[ray]"')  # fmt: skip


@pytest.mark.parametrize(("workers", "fresh", "starts"), [((), False, 1), (("--workers", "2"), False, 1),
                                                           ((), True, None),
                                                           pytest.param(("--backend", "ray", "--workers", "2"), False,
                                                                        1, marks=RAY)])  # fmt: skip
def test_sandboxed_entrants_play_a_tournament(tmp_path: Path, workers: tuple[str, ...], fresh: bool,
                                              starts: int | None) -> None:  # fmt: skip
    text = f'name = "boxed"\nseed = 3\ndeals = 2\nfresh_process = {str(fresh).lower()}\n[sandbox]\ntmp_mb = 16\n'
    cfg = write_config(tmp_path, text + _entrant("sg", "greedy") + _entrant("sc", "counter") +
                       '[[entrants]]\nname = "r"\npolicy = "random"\n')  # fmt: skip
    data = tmp_path / "data"
    out = abluxx("tournament", "run", cfg, "--data", data, *workers, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = {r["entrant"]: r for r in standings_json(tmp_path, data)["standings"]}
    assert rows["sg"]["games"] == rows["sc"]["games"] == 4
    assert all(not r["faults"] for r in rows.values()), rows
    logs = list((data / "logs").glob("*-sg.log"))
    assert logs and all("listening on unix:/run/abluxx/bot.sock" in p.read_text() for p in logs)
    if starts is not None:  # once where its games are played (the run's process, or each worker), for every game
        assert [p.read_text().count("listening on") for p in logs] == [starts] * len(logs)
        assert len(logs) == (2 if workers else 1)
    else:  # once to answer Hello, then once for each of its games
        assert sum(p.read_text().count("listening on") for p in logs) == 1 + 4


def test_a_killed_referee_leaves_no_process_of_its_sandboxes(tmp_path: Path) -> None:
    """SIGKILL to the referee mid-run: the watchdog and the kernel end every sandbox, with the process its bot
    left behind in a session of its own. The watchdog kills the sandbox's init (pid 1 of its PID namespace, a
    session of its own), whose pid bwrap told the referee before the bot ran: bwrap's own --die-with-parent alone
    let it outlive the referee under load (both loaded CI runs; containers/bubblewrap#633)."""
    tag = f"3600.{os.getpid()}"
    argv = ["sh", "-c", f"setsid sleep {tag} & exec {sys.executable} -c '{ABLUXX[2]}' bot greedy --port 0"]
    entrant = f'[[entrants]]\nname = "left"\ncommand = {json.dumps(argv)}\nsandbox = true\n'
    cfg = write_config(tmp_path, 'name = "killed"\ndeals = 50\n' + entrant + '[[entrants]]\nname = "r"\npolicy = '
                       '"random"\n')  # fmt: skip
    said = tmp_path / "referee.err"  # what the referee said, should its bot never start (once, under a loaded CI run)
    with said.open("wb") as err:
        proc = subprocess.Popen([*ABLUXX, "tournament", "run", str(cfg), "--data", str(tmp_path / "data")],
                                cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _running(tag) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert _running(tag), (
            f"the sandboxed bot's daemon never started (referee exit {proc.poll()}): "
            + (said.read_text(errors="replace")[-3000:])
        )
    finally:
        proc.kill()
        proc.wait()
    # a bound for the kernel and the watchdog, not a measure: a CI run with four test workers beside two busy loops
    # once saw two processes outlive 15 s, so the bound is 60 s, and a failure names what outlived it
    deadline = time.monotonic() + 60
    while _running(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert {pid: _cmdline(pid) for pid in _running(tag)} == {}


def test_abluxx_duel_sandbox_plays_a_bot_from_its_own_folder(tmp_path: Path) -> None:
    """``abluxx duel CMD BOT --sandbox``, as docs/writing-a-bot.md says to test a bot before uploading it: run from
    the bot's folder, it plays there in the sandbox; with the data folder inside that folder it refuses, saying so."""
    folder = tmp_path / "mybot"
    folder.mkdir()
    (folder / "bot.py").write_text("import sys\nfrom referee.cli import main\nsys.exit(main(['bot', 'greedy', "
                                   "'--port', '0']))\n")  # fmt: skip
    duel = [*ABLUXX, "duel", "python3 bot.py", "random", "--sandbox", "--max-games", "2", "--no-progress", "--json"]
    refused = subprocess.run(duel, cwd=folder, capture_output=True, text=True, timeout=300)
    assert "keep the data folder elsewhere" in refused.stderr
    out = subprocess.run([*duel, "--data", str(tmp_path / "data")], cwd=folder, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert out.returncode in (0, 1, 3), out.stderr  # a verdict, or inconclusive after 2 games
    assert json.loads(out.stdout.splitlines()[-1])["games"] == 2
    logs = "".join(p.read_text() for p in (tmp_path / "data" / "logs").glob("*.log"))
    assert "listening on unix:/run/abluxx/bot.sock" in logs


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:300]
    except OSError:
        return "(gone)"
