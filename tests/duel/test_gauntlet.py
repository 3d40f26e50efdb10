"""`abluxx gauntlet CANDIDATE --field BOT...`: one duel per field bot and the candidate's duplicate-adjusted score,
run as a user runs it (a real bot process over real gRPC for the candidate)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from referee.cli import main
from tests.bots.driver import ServedBot

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]


def abluxx(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*ABLUXX, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_a_stronger_candidate_passes_the_gauntlet_with_exit_0(tmp_path: Path) -> None:
    counter = ServedBot.example("counter").wait_ready()
    try:
        out = abluxx("gauntlet", f"new={counter.address}", "--field", "random", "greedy", "--json", "--data", "d",
                     cwd=tmp_path)  # fmt: skip
    finally:
        counter.stop()
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verdict"] == "H1" and [d["baseline"] for d in result["duels"]] == ["random", "greedy"]
    assert all(d["verdict"] == "H1" for d in result["duels"])
    assert result["pairs"] == sum(d["pairs"] for d in result["duels"]) and result["ci95"][0] > 0
    with sqlite3.connect(tmp_path / "d" / "duels.db") as db:  # every duel is stored under the gauntlet's id
        stored = db.execute("SELECT gauntlet, verdict FROM duels").fetchall()
    assert stored == [(result["gauntlet_id"], "H1")] * 2


def test_a_field_bot_the_candidate_does_not_beat_fails_it_with_exit_1(tmp_path: Path) -> None:
    out = abluxx("gauntlet", "greedy", "--field", "random", "counter", "--data", "d", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert "vs random:" in out.stdout and "H1 (candidate better)" in out.stdout
    assert "vs counter:" in out.stdout and "H0 (not better by 1)" in out.stdout
    assert "duplicate-adjusted score of greedy:" in out.stdout
    # how to play on is said once for the gauntlet, not once per duel
    resume = re.findall(r"resume with abluxx gauntlet --resume (\S+) --data d", out.stderr)
    assert len(resume) == 1 and resume[0].startswith("gauntlet-"), out.stderr
    assert out.stderr.count("duel ") >= 2 and "abluxx duel --resume DUEL_ID" in out.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["counter", "--table-size", "3", "--field", "random", "greedy"], "--field needs at least 3 bot(s)"),
        (["counter"], "--field needs at least 1 bot(s) at --table-size 2"),
        (["--field", "greedy"], "give CANDIDATE and --field BOT..., or --resume ID"),
        (["counter", "--field", "greedy", "--margin", "0"], "--margin must be above 0"),
        (["counter", "--field", "nosuch"], "--field bot 1: 'nosuch' is neither HOST:PORT nor a built-in policy"),
    ],
)
def test_bad_input_exits_2(tmp_path: Path, args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gauntlet", *args, "--data", str(tmp_path / "d")]) == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
