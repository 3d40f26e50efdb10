"""Command bots never outlive the referee: a bot that ignores SIGTERM, started behind a shell wrapper that does not
exec it, is gone after a normal end and after the referee is killed with SIGKILL. The `abluxx` command and the
bots are real processes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .test_real import ABLUXX, BAD_BOTS, abluxx, committed, write_config

TAG = f"command-bot-test-{os.getpid()}"  # each test adds a suffix
GREEDY = '[[entrants]]\nname = "g"\npolicy = "greedy"\n'


def _stubborn_bot(tag: str, *args: str) -> str:
    # `; exit $?` keeps the shell from exec-ing the bot: the shell is the group's first process, the bot its child
    line = f"{sys.executable} {BAD_BOTS} --ignore-sigterm --tag {tag} {' '.join(args)}; exit $?"
    return f"[[entrants]]\nname = \"stubborn\"\ncommand = {json.dumps(['sh', '-c', line])}\n"


def _running(tag: str) -> list[int]:
    """The processes (not zombies) whose command line holds ``tag``."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if tag.encode() in (d / "cmdline").read_bytes() and (d / "stat").read_text().split(") ")[1][0] != "Z":
                    found.append(int(d.name))
            except (OSError, IndexError):
                continue
    return found


def _gone(tag: str, within_s: float = 10.0) -> list[int]:
    """The processes still running with ``tag`` once they had ``within_s`` to end (a bound, not a measure)."""
    deadline = time.monotonic() + within_s
    while (left := _running(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.fixture(autouse=True)
def _kill_leftovers():
    """A failed test leaves its bots running: end them, so they cannot disturb later tests."""
    yield
    for pid in _running(TAG):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def test_a_stubborn_bot_behind_a_shell_is_stopped_at_the_end(tmp_path: Path) -> None:
    tag = TAG + "-end"
    text = 'name = "stubborn"\n' + _stubborn_bot(tag, "--mode", "ok") + GREEDY
    out = abluxx("tournament", "run", write_config(tmp_path, text), "--data", tmp_path / "d", "--no-progress",
                 cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert not _gone(tag), "a bot process outlived the tournament"


def test_a_stubborn_bot_behind_a_shell_dies_with_a_killed_referee(tmp_path: Path) -> None:
    tag = TAG + "-kill"
    text = 'name = "killed"\ndeals = 50\n' + _stubborn_bot(tag, "--mode", "slow", "--delay-ms", "20")
    text += GREEDY
    data = tmp_path / "d"
    cmd = [*ABLUXX, "tournament", "run", str(write_config(tmp_path, text)), "--data", str(data), "--no-progress"]
    referee = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while committed(data / "abluxx.db") < 1 and referee.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert referee.poll() is None, "the tournament ended before the test could kill it"
        assert len(_running(tag)) == 2  # the shell and the bot
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait()
        assert not _gone(tag), "a bot process outlived the killed referee"
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
