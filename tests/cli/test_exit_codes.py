"""The CLI's exit codes (docs/cli.md), with ``referee.cli.main`` run in this process so mutation testing sees it:
a command's own code, an error's code and its one line on stderr, Ctrl-C, a reader gone away, a request refused
before anything is done, a gauntlet's verdict over its duels, and ``backup --check``. (A duel's H1, H0 and
inconclusive exits are in tests/duel/test_runner.py, also through ``main``.)"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from referee.cli import backup, gauntlet, main
from referee.duel.runner import DuelError
from referee.errors import BadInput, DataLoss
from referee.store import open_store


def _restore_doing(monkeypatch: pytest.MonkeyPatch, action) -> None:
    """``abluxx restore`` does ``action(args)`` instead (any command would do: this one has one positional)."""
    monkeypatch.setattr(backup, "run_restore", action)


@pytest.mark.parametrize(("returned", "code"), [(None, 0), (0, 0), (3, 3), (1, 1)])
def test_a_command_exits_with_what_it_returns(monkeypatch: pytest.MonkeyPatch, returned, code: int) -> None:
    _restore_doing(monkeypatch, lambda args: returned)
    assert main(["restore", "b"]) == code


def _raise(error: BaseException):
    def action(args) -> None:
        raise error

    return action


@pytest.mark.parametrize(
    ("error", "code"),
    [(BadInput("--seed must be 0 or more"), 2), (DataLoss("cannot read x"), 2),
     (DuelError("a bot could not be started"), 1)],
)  # fmt: skip
def test_an_error_is_one_line_on_stderr_and_its_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: BaseException, code: int
) -> None:
    _restore_doing(monkeypatch, _raise(error))
    assert main(["restore", "b"]) == code
    out = capsys.readouterr()
    assert out.err == f"abluxx restore: {error}\n" and out.out == ""


def test_ctrl_c_is_130_and_says_interrupted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _restore_doing(monkeypatch, _raise(KeyboardInterrupt()))
    assert main(["restore", "b"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_a_reader_gone_away_is_a_quiet_0_and_stdout_goes_nowhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``abluxx games | head -1``: the write (or the flush after the command) fails with a broken pipe."""
    with open(tmp_path / "out", "w") as f:
        monkeypatch.setattr(sys, "stdout", f)
        _restore_doing(monkeypatch, _raise(BrokenPipeError()))
        assert main(["restore", "b"]) == 0
        assert os.path.samestat(os.fstat(f.fileno()), os.stat(os.devnull))  # the flush at exit cannot fail again

    class Gone(io.StringIO):
        def flush(self) -> None:
            raise BrokenPipeError

    monkeypatch.setattr(sys, "stdout", Gone())
    monkeypatch.setattr(os, "dup2", lambda fd, fd2: None)  # a StringIO has no file descriptor to point elsewhere
    monkeypatch.setattr(sys.stdout, "fileno", lambda: 1, raising=False)
    _restore_doing(monkeypatch, lambda args: 1)
    assert main(["restore", "b"]) == 0  # the flush happens before the command's own code is returned
    assert capsys.readouterr().err == ""


def test_a_bad_request_is_2_before_anything_is_done(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["restore", "b", "--no-such-flag"])
    assert e.value.code == 2
    assert main(["match", "random", "greedy", "--seed", "-1", "--data", str(tmp_path / "d")]) == 2
    assert "abluxx match: " in capsys.readouterr().err and not (tmp_path / "d").exists()


def _states(*verdicts: str) -> list:
    return [SimpleNamespace(summary=lambda v=v: SimpleNamespace(verdict=SimpleNamespace(value=v))) for v in verdicts]


@pytest.mark.parametrize(
    ("verdicts", "said"),
    [(("H1",), ("H1", 0)), (("H1", "H1", "H1"), ("H1", 0)), (("H1", "H0", "H1"), ("H0", 1)),
     (("inconclusive", "H0"), ("H0", 1)), (("H1", "inconclusive"), ("inconclusive", 3)),
     (("inconclusive",), ("inconclusive", 3))],
)  # fmt: skip
def test_a_gauntlet_is_h1_only_when_every_duel_is_and_h0_when_one_is(verdicts: tuple[str, ...], said) -> None:
    assert gauntlet._verdict(_states(*verdicts)) == said


def test_backup_check_is_0_for_a_whole_backup_and_1_naming_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, dest = tmp_path / "data", tmp_path / "bk"
    open_store(data).close()  # an empty data folder
    assert main(["backup", str(dest), "--data", str(data)]) == 0
    made = capsys.readouterr()
    manifest = json.loads((dest / "MANIFEST.json").read_text())
    files, schema = len(manifest["files"]), manifest["schema_version"]
    assert files and schema
    assert made.out == (f"backed up {data} to {dest}: {files} files, schema version {schema}; "
                        "0 records of games in flight left out\n")  # fmt: skip
    assert made.err.startswith("databases copied (")  # its progress, on stderr
    assert main(["backup", "--check", str(dest)]) == 0
    assert capsys.readouterr().out == f"ok: {dest}\n"
    (dest / "abluxx.db").unlink()
    assert main(["backup", "--check", str(dest)]) == 1
    out = capsys.readouterr().out
    assert "abluxx.db" in out and "ok:" not in out


def test_a_duel_says_how_to_resume_it_and_exits_3_when_its_budget_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d"
    assert main(["duel", "counter", "random", "--max-games", "2", "--no-progress", "--data", str(data)]) == 3
    err = capsys.readouterr().err
    (duel_id,) = re.findall(r"^duel (\S+): up to 2 games; stop with Ctrl-C and resume with ", err, re.M)
    assert f"resume with abluxx duel --resume {duel_id} --data {data}\n" in err
