"""The commands the tests start hear Ctrl-C as a user's terminal would deliver it (tests/conftest.py), even when
the suite itself runs as a background job of a script, whose SIGINT is ignored."""

from __future__ import annotations

import subprocess
import sys


def test_a_command_started_by_a_test_has_sigint_at_its_default() -> None:
    out = subprocess.run([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT).__name__)"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert out.strip() == "default_int_handler"
