"""No bot can drive the terminal of someone reading its games: ESC ]0; (retitle), ESC [2J (clear) and CR in a
bot's Hello strings, its gRPC error details, or an entrant's name reach `abluxx match`, its log lines, `replay`,
`games` and `standings` escaped (``\\x1b``). Real `abluxx` processes, a real bot, a real data folder; the log
lines are read from a pseudo-terminal, where they are the readable kind."""

from __future__ import annotations

import asyncio
import os
import pty
import re
import subprocess
import sys
import tty
from pathlib import Path

from match.helpers import bot_process  # tests/match (pytest puts tests/ on the path)

from referee.store import open_store
from referee.tournament.config import EntrantConfig, TournamentConfig
from referee.tournament.play import match_player
from referee.tournament.runner import run_tournament

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\rgotcha"  # as tests/fixtures/bad_bots.py --mode hostile sends it
ESCAPED = r"\x1b]0;pwned\x07\x1b[2J\rgotcha"
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f]")  # any control character but the line break


def abluxx(*args: str | Path, cwd: Path) -> str:
    # bytes, not text mode, which would turn a CR into a line break
    out = subprocess.run([*ABLUXX, *map(str, args)], cwd=cwd, capture_output=True, timeout=120)
    stdout, stderr = out.stdout.decode(), out.stderr.decode()
    assert out.returncode == 0, stderr
    assert not RAW.search(stdout + stderr), repr(stdout + stderr)
    return stdout


def test_a_bots_hello_strings_and_error_details_are_escaped_in_match_logs_and_replay(tmp_path: Path) -> None:
    with bot_process("--mode", "hostile", "--transports", "unary", "--bad-count", "1") as hostile:
        leader, follower = pty.openpty()
        tty.setraw(follower)  # no CR added to line breaks: every CR read is the bot's
        try:
            proc = subprocess.Popen([*ABLUXX, "match", hostile, "greedy", "--game-id", "g", "--data", tmp_path],
                                    cwd=tmp_path, stdout=subprocess.PIPE, stderr=follower)  # fmt: skip
            os.close(follower)
            out = proc.communicate(timeout=120)[0].decode()
            logs = b""
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal's other end closed: the process is done
                    break
                if not chunk:
                    break
                logs += chunk
        finally:
            os.close(leader)
    assert proc.returncode == 0, logs
    text = logs.decode()
    assert "fault" in text and "closing" in text and "pwned" in text  # the log line has the bot's error, escaped
    assert not RAW.search(text), repr(text)
    assert not RAW.search(out), repr(out)
    shown = abluxx("replay", "g", "--data", tmp_path, cwd=tmp_path)  # the Hello version and the fault detail
    assert "1.0" + ESCAPED in shown and ESCAPED in shown.split("fault", 1)[1]


def test_entrant_names_are_escaped_in_games_and_standings(tmp_path: Path) -> None:
    # A data folder whose names hold escapes (the config file's rules would refuse them; the store does not).
    evil = "evil" + HOSTILE
    entrants = (EntrantConfig(evil, policy="random"), EntrantConfig("b", policy="greedy"))
    config = TournamentConfig(name="t", entrants=entrants)
    with open_store(tmp_path / "d") as store:
        asyncio.run(run_tournament(config, store, match_player, progress=False))
    for command in (["games"], ["standings"], ["standings", "--csv"]):
        shown = abluxx(*command, "--data", tmp_path / "d", cwd=tmp_path)
        assert r"evil\x1b]0;" in shown  # (a table cuts long names)
