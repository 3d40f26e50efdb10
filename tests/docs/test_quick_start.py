"""The README's Quick start and CI run the same test command, and it installs into a venv (stock Debian's Python
refuses a system-wide pip install, PEP 668)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def quick_start_commands() -> list[str]:
    section = (ROOT / "README.md").read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S).group(1)
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_each_quick_start_command_makes_and_uses_a_venv_before_pip() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    for command in commands:
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e ")


def test_ci_runs_the_readme_test_command_word_for_word() -> None:
    ci = [line for line in (ROOT / ".ci/run").read_text().splitlines() if line and not line.startswith("#")]
    assert quick_start_commands()[1] in ci


def test_the_quick_start_says_how_long_each_command_takes_on_two_cores() -> None:
    """A newcomer who starts command 2 should know it runs for about a quarter of an hour, not think it hangs."""
    section = (ROOT / "README.md").read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    prose = " ".join(section.split("```")[2].split())
    assert "on a 2-core machine" in prose
    assert re.search(r"command 1 about [^,]+,", prose) and re.search(r"command 2 about \d+ to \d+ minutes", prose)
