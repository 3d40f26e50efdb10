"""What every test shares: a Ctrl-C that a test sends to a command it started must reach it.

A command started as a background job of a non-interactive shell (``cmd &`` in a script, as CI harnesses and
``nohup`` do) inherits SIGINT *ignored*, and Python leaves an ignored SIGINT ignored: the tests that press Ctrl-C
on ``abluxx demo`` or ``abluxx duel`` then saw the command play on to its end. The test process takes SIGINT back
to Python's default handler; the commands it starts then begin with SIGINT at its default (exec resets a handled
signal, while an ignored one stays ignored), as they do when a user starts them in a terminal."""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator

import pytest
import structlog

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def every_log_level() -> Iterator[None]:
    """Log events of every level reach ``structlog.testing.capture_logs``: an earlier test in the same worker may
    have configured the logs at ``warning`` (``referee.log.configure``), whose filter drops an info event before any
    processor, capture_logs' included, sees it. Which tests ran earlier depends on pytest-xdist's split."""
    kept = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    yield
    structlog.configure(**kept)
