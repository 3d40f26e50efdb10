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
