"""What every test shares: a Ctrl-C that a test sends to a command it started must reach it.

A command started as a background job of a non-interactive shell (``cmd &`` in a script, as CI harnesses and
``nohup`` do) inherits SIGINT *ignored*, and Python leaves an ignored SIGINT ignored: the tests that press Ctrl-C
on ``abluxx demo`` or ``abluxx duel`` then saw the command play on to its end. The test process takes SIGINT back
to Python's default handler; the commands it starts then begin with SIGINT at its default (exec resets a handled
signal, while an ignored one stays ignored), as they do when a user starts them in a terminal.

And the code is compiled once, before pytest-xdist's workers start (``pytest_configure`` below)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Set in the processes that write the bytecode, so that their own pytest does not start the same again.
_WRITING_BYTECODE = "ABLUXX_TESTS_WRITING_BYTECODE"


def pytest_configure(config: pytest.Config) -> None:
    """Write the bytecode of the code and of the test modules once, before pytest-xdist starts its workers.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (some CI images set it), nothing is ever cached: each of the six
    workers compiles and assertion-rewrites all of the test modules it collects (8 CPU-seconds each), and each of
    the suite's hundreds of bot, server and CLI processes compiles the ``referee`` modules it imports. Python and
    pytest read a cached ``.pyc`` whatever that variable says, so writing them once first takes that work off every
    later process. What the tests check is unchanged. Only in the controller of a parallel run: a serial run
    (``-n 0``, as mutation testing runs pytest) collects once anyway."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    if os.environ.get(_WRITING_BYTECODE):
        return
    _write_bytecode(config)


def _write_bytecode(config: pytest.Config) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {_WRITING_BYTECODE: "1"}
    parts = _parts(config.invocation_params.dir, config.args)
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", "-p", "no:cacheprovider"]
    # Two halves at once (the machine has two cores or more), and the code the tests do not import.
    commands = [[*collect, "-o", "addopts=", *half] for half in (parts[0::2], parts[1::2]) if half]
    commands.append([sys.executable, "-m", "compileall", "-q", "referee", "clients/python", "scripts"])
    # A failure here costs only time: the workers then compile for themselves, and report any collection error.
    running = [
        subprocess.Popen(c, cwd=config.rootpath, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for c in commands
    ]
    for process in running:
        process.wait()


def _parts(where: Path, args: list[str]) -> list[str]:
    """The run's test paths, each directory split into its subdirectories and test files."""
    parts: list[str] = []
    for arg in args:
        path = where / arg.split("::")[0]
        if path.is_dir():
            inside = (p for p in path.iterdir() if not p.name.startswith((".", "_")))
            parts += sorted(str(p) for p in inside if p.is_dir() or p.match("test_*.py"))
        elif path.exists():
            parts.append(str(path))
    return parts


@pytest.fixture
def every_log_level() -> Iterator[None]:
    """Log events of every level reach ``structlog.testing.capture_logs``: an earlier test in the same worker may
    have configured the logs at ``warning`` (``referee.log.configure``), whose filter drops an info event before any
    processor, capture_logs' included, sees it. Which tests ran earlier depends on pytest-xdist's split."""
    kept = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    yield
    structlog.configure(**kept)
