"""A command line imports only its command's module (``referee.cli.COMMAND_MODULES``), and still parses as the
whole parser does: each module adds the commands the table lists for it, a bot process never imports the rating
fit's scipy, and help or a name no command has lists every command."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from referee.cli import COMMAND_MODULES, build_parser, main


@pytest.mark.parametrize("module", list(COMMAND_MODULES))
def test_each_module_adds_the_commands_the_table_lists_for_it(module: str) -> None:
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(f"referee.cli.{module}").register(sub)
    assert tuple(sub.choices) == COMMAND_MODULES[module]


def test_a_command_line_parses_the_same_with_its_module_alone_as_with_all() -> None:
    argv = ["standings", "--data", "d", "--json", "some-id"]
    assert vars(build_parser(argv).parse_args(argv)) == vars(build_parser([]).parse_args(argv))


def _imports(argv: list[str]) -> set[str]:
    """The modules a fresh ``abluxx ARGV`` process has imported once its parser is built."""
    code = (
        "import sys; from referee.cli import build_parser; build_parser(sys.argv[1:]); "
        "print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120, check=True)
    return set(done.stdout.split())


def test_a_bot_process_does_not_import_the_rating_fit_or_the_site() -> None:
    loaded = _imports(["bot", "greedy", "--port", "0"])
    assert "referee.cli.bot" in loaded
    assert not {"scipy", "referee.rating", "referee.cli.serve", "referee.cli.demo", "starlette"} & loaded


def test_help_with_no_command_imports_every_command_module() -> None:
    loaded = _imports(["--help"])
    assert {f"referee.cli.{name}" for name in COMMAND_MODULES} <= loaded


def test_a_name_no_command_has_is_refused_with_every_command_listed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["standing"])
    assert exited.value.code == 2
    said = capsys.readouterr().err
    assert "invalid choice: 'standing'" in said
    for commands in COMMAND_MODULES.values():
        assert all(f"'{command}'" in said for command in commands)


def test_main_reads_the_command_line_and_imports_only_the_module_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """``abluxx restore b`` (the console script calls ``main()``, which reads ``sys.argv``): the backup module
    alone is imported, and its command runs with the line's arguments."""
    from referee.cli import backup

    ran: list[str] = []
    monkeypatch.setattr(backup, "run_restore", lambda args: ran.append(str(args.backup)) or 4)
    monkeypatch.setattr(sys, "argv", ["abluxx", "restore", "b"])
    imported: list[str] = []
    real = importlib.import_module
    monkeypatch.setattr(importlib, "import_module", lambda name: imported.append(name) or real(name))
    assert main() == 4
    assert imported == ["referee.cli.backup"] and ran == ["b"]


def test_help_version_and_a_missing_command_say_what_the_docs_say(capsys: pytest.CaptureFixture[str]) -> None:
    from referee import __version__

    for argv, code in ((["--help"], 0), (["--version"], 0), ([], 2)):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == code
    out, err = capsys.readouterr()
    assert out.startswith("usage: abluxx [-h] [--version] COMMAND ...\n")
    assert "\nReferee for Abluxxen (Linko!) bot competitions.\n" in out
    assert out.endswith(f"abluxx {__version__}\n")
    assert err.splitlines()[-1] == "abluxx: error: the following arguments are required: COMMAND"
