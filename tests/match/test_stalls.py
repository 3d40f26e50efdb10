"""A bot that stops granting HTTP/2 flow-control window (tests/fixtures/stall_bot.py, a raw HTTP/2 server) must not
hang the referee: each write on the Play stream (GameStart, a request, the GameOverNotice) shares the decision's
clock, a stalled one is a TIMEOUT fault that retires the seat, and the game and the tournament go on.

The referee runs as a real `abluxx` process; a hang before the fix shows as the process timing out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

from .helpers import FIXTURES, bot_process, verify

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
STALL_BOT = FIXTURES / "stall_bot.py"
# Generous on purpose: a busy 2-core machine must not make the staller's good answers late (it has 2.5 s each), and
# a stalled write still ends the seat in a few seconds (the hang this test is about would last forever).
TIMES = ["--decision-ms", "1000", "--bank-ms", "500", "--grace-ms", "1000"]
# Seconds: far beyond any game here, so only a hang reaches it. The tournament below takes about 15 s; at a load
# average of 13-16 on 2 cores (two busy loops beside other jobs' mutation runs) one run took over 120 s.
HANG = 300


def abluxx(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*ABLUXX, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=HANG)


@pytest.mark.parametrize("stall", ["start", "decision", "finish"])
def test_a_bot_that_stalls_flow_control_costs_its_seat_not_the_game(tmp_path: Path, stall: str) -> None:
    with bot_process("--stall", stall, "--after", "3", script=STALL_BOT) as staller:
        out = abluxx("match", staller, "greedy", "random", "--seed", "5", "--game-id", "g", "--data", tmp_path,
                     *TIMES, cwd=tmp_path)  # fmt: skip
    assert out.returncode == (0 if stall == "finish" else 1), out.stderr  # 1: a bot seat retired (docs/cli.md)
    rec = verify(tmp_path / "records" / "g.abluxx")  # the game finished, and its record replays exactly
    mine = [d for d in rec.decisions if d.seat == 0]
    for seat in (1, 2):  # the other seats played all their own decisions
        assert all(d.chosen_by == rec_pb.CHOOSER_BOT for d in rec.decisions if d.seat == seat)
    if stall == "finish":  # only the GameOverNotice stalled: the game is the bot's own
        assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in mine)
        assert not rec.footer.retired
        return
    answered = 0 if stall == "start" else 3
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT for d in mine[:answered])
    stalled = mine[answered]
    assert stalled.fault == rec_pb.FAULT_KIND_TIMEOUT and stalled.retired
    assert "flow-control window" in stalled.fault_detail
    assert list(rec.footer.retired) == [0]


def test_a_tournament_with_a_stalling_bot_finishes_every_game(tmp_path: Path) -> None:
    with bot_process("--stall", "decision", "--after", "2", script=STALL_BOT) as staller:
        cfg = tmp_path / "t.toml"
        cfg.write_text(
            'name = "stall"\ndeals = 4\nconcurrency = 4\n'
            "[time_control]\ndecision_ms = 1000\nbank_ms = 500\ngrace_ms = 1000\n"
            f'[[entrants]]\nname = "staller"\naddress = "{staller}"\n'
            '[[entrants]]\nname = "greedy"\npolicy = "greedy"\n[[entrants]]\nname = "random"\npolicy = "random"\n'
        )
        out = abluxx("tournament", "run", cfg, "--data", tmp_path / "d", "--no-progress", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        # resuming a finished tournament reaches the staller again (Hello) and returns
        again = abluxx("tournament", "run", cfg, "--data", tmp_path / "d", "--no-progress", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
    games = [json.loads(line) for line in abluxx("games", "--json", "--data", tmp_path / "d", cwd=tmp_path)
             .stdout.splitlines()]  # fmt: skip
    assert len(games) == 12  # 3 tables x 4 deals (across tables: one game per table and deal)
    staller_seats = [s for g in games for s in g["seats"] if s["entrant"] == "staller"]
    assert len(staller_seats) == 8
    assert all(s["retired"] and s["faults"] == {"timeout": 1} for s in staller_seats), staller_seats
