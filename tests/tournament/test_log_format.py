"""Under a pipe, people get readable progress on stderr; `--log-format json` gives JSON log lines instead
(issue: progress used to come out as JSON whenever stderr was not a terminal)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
CONFIG = """name = "logs"
deals = 2
[[entrants]]
name = "a"
policy = "greedy"
[[entrants]]
name = "b"
policy = "random"
"""


def _json(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "t.toml").write_text(CONFIG)
    return subprocess.run([*ABLUXX, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_tournament_progress_under_a_pipe_is_readable_text(tmp_path):
    done = run(tmp_path, "tournament", "run", "t.toml", "--data", "d")
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    assert "4/4 games" in done.stderr, done.stderr  # the last progress line
    assert not any(_json(line) for line in err), done.stderr
    assert not any(_json(line) for line in done.stdout.splitlines())


def test_log_format_json_gives_json_lines_on_stderr(tmp_path):
    done = run(tmp_path, "tournament", "run", "t.toml", "--data", "d", "--log-format", "json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines()]  # every line is JSON
    assert any(x["event"] == "tournament progress" and x["done"] == 4 for x in lines)


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_match_keeps_log_lines_out_of_its_output(tmp_path, log_format):
    done = run(tmp_path, "match", "127.0.0.1:1", "greedy", "--data", "d", "--seed", "1", "--log-format", log_format)
    assert done.returncode == 1
    assert "place 1:" in done.stdout and not any(_json(line) for line in done.stdout.splitlines())
    jsons = [line for line in done.stderr.splitlines() if _json(line)]
    assert bool(jsons) is (log_format == "json"), done.stderr
