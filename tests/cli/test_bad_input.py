"""Bad input to `abluxx` gets a message and exit status 2, never a traceback; a reader that goes away (`| head -1`)
ends the command quietly. Each case runs the real `abluxx` process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.tournament.schedule import MAX_GAMES

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
TWO = '[[entrants]]\nname = "a"\npolicy = "random"\n[[entrants]]\nname = "b"\npolicy = "greedy"\n'


def abluxx(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*ABLUXX, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120)


def refused(out: subprocess.CompletedProcess, *words: str, code: int = 2) -> None:
    assert out.returncode == code, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr and "Exception" not in out.stderr, out.stderr
    for w in words:
        assert w in out.stderr, out.stderr


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--seed", "-1", "--seed must be 0 to 18446744073709551615, got -1"),
        ("--seed", str(2**64), "--seed must be 0 to 18446744073709551615"),
        ("--decision-ms", str(2**40), "--decision-ms must be 1 to 600000"),
        ("--max-strikes", "0", "--max-strikes must be 1 to 1000, got 0"),
        ("--max-strikes", "-1", "--max-strikes must be 1 to 1000, got -1"),
    ],
)
def test_match_refuses_a_setting_out_of_range(tmp_path: Path, flag: str, value: str, says: str) -> None:
    out = abluxx("match", "random", "greedy", flag, value, "--data", tmp_path / "d", cwd=tmp_path)
    refused(out, says)
    assert not (tmp_path / "d").exists()  # nothing was played


def test_a_data_folder_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(TWO)
    (tmp_path / "afile").write_text("not a folder")
    out = abluxx("tournament", "run", "t.toml", "--data", "afile", cwd=tmp_path)
    refused(out, "afile: cannot be a data folder")


def test_a_utf16_config_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(TWO, encoding="utf-16")
    out = abluxx("tournament", "run", "t.toml", "--data", "d", cwd=tmp_path)
    refused(out, "t.toml is not UTF-8 text", "nothing was run")


def test_a_schedule_too_big_to_build_is_refused_with_its_size(tmp_path: Path) -> None:
    names = [f"p{i}" for i in range(120)]
    text = "table_size = 5\n" + "".join(f'[[entrants]]\nname = "{n}"\npolicy = "random"\n' for n in names)
    (tmp_path / "t.toml").write_text(text)
    out = abluxx("tournament", "run", "t.toml", "--data", "d", cwd=tmp_path)
    refused(out, "190,578,024 games", f"at most {MAX_GAMES:,}")  # C(120, 5) tables, one game each (across)


def test_a_command_bot_on_a_dead_port_is_named_without_noise(tmp_path: Path) -> None:
    # behind a shell that does not exec it, so the bot outlived the shell and its pipe outlived the event loop
    bot = "import time; print('listening on 127.0.0.1:1', flush=True); time.sleep(60)"
    line = f"{sys.executable} -c {json.dumps(bot)}; exit $?"
    text = '[[entrants]]\nname = "dead"\ncommand = ' + json.dumps(["sh", "-c", line]) + "\n"
    text += '[[entrants]]\nname = "b"\npolicy = "greedy"\n'
    (tmp_path / "t.toml").write_text(text)
    out = abluxx("tournament", "run", "t.toml", "--data", "d", cwd=tmp_path)
    # exit 1: the command ran and found a failure (docs/cli.md)
    refused(out, "entrant dead: cannot reach a bot at 127.0.0.1:1", "did not start", code=1)
    assert "Event loop is closed" not in out.stderr and "ignored" not in out.stderr


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder with one finished tournament."""
    where = tmp_path_factory.mktemp("played")
    (where / "t.toml").write_text('name = "t"\ndeals = 2\n' + TWO)
    out = abluxx("tournament", "run", "t.toml", "--data", "d", "--no-progress", cwd=where)
    assert out.returncode == 0, out.stderr
    return where


@pytest.mark.parametrize("command", [["standings"], ["games"], ["games", "--json"], ["standings", "--csv"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(played: Path, command: list[str]) -> None:
    # as `abluxx games | head -1` when head has exited: every write finds the pipe closed
    proc = subprocess.Popen([*ABLUXX, *command, "--data", "d"], cwd=played, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert err == ""


@pytest.mark.parametrize(
    "command",
    [["standings", "nosuch"], ["games", "nosuch"], ["report", "nosuch"], ["tournament", "resume", "nosuch"]],
)
def test_a_missing_tournament_is_named_the_same_way_by_every_command(played: Path, command: list[str]) -> None:
    out = abluxx(*command, "--data", "d", cwd=played)
    # exit 1: what was asked for is not there (docs/cli.md); the latest are named, to pick from
    refused(out, f"abluxx {command[0]}: no tournament 'nosuch' in d/abluxx.db (the latest: t-", code=1)


@pytest.mark.parametrize("command", [["standings"], ["games"], ["report"]])
def test_a_missing_data_folder_is_named_the_same_way_and_not_made(tmp_path: Path, command: list[str]) -> None:
    out = abluxx(*command, "--data", "nowhere", cwd=tmp_path)
    refused(out, f"abluxx {command[0]}: no abluxx data in nowhere (no abluxx.db there", "run a tournament", code=1)
    assert not (tmp_path / "nowhere").exists()
