"""Logging for the referee: structlog, JSON lines when stderr is not a terminal, readable
lines when it is. Bind context (game id, seat, bot) with ``get_logger().bind(...)``."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog
from structlog.types import EventDict, WrappedLogger

from referee.terminal import printable


class _Stderr:
    """Whatever ``sys.stderr`` is when a line is written (tests and tools swap it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def _printable_values(_logger: WrappedLogger, _method: str, event: EventDict) -> EventDict:
    """Escape control characters in the readable lines (a bot's error text, a name); JSON escapes its own."""
    for key, value in event.items():
        if isinstance(value, str):
            event[key] = printable(value)
    return event


_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
LOG_FORMATS = ("text", "json")  # the CLI's --log-format: readable lines for people, JSON lines for services
_json_lines = False


def json_lines() -> bool:
    """Whether logs are JSON lines (so progress goes into the log too), as ``configure`` last set them."""
    return _json_lines


def configure(level: str = "info", *, json: bool | None = None, stream: Any = None) -> None:
    """Set up structlog for the process. ``json`` None picks JSON lines unless ``stream`` (stderr) is a terminal."""
    if level not in _LEVELS:
        raise ValueError(f"log level must be one of {', '.join(_LEVELS)}, got {level!r}")
    global _json_lines
    stream = stream or _Stderr()
    if json is None:
        json = not (hasattr(stream, "isatty") and stream.isatty())
    _json_lines = json
    renderer: Any = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            *([] if json else [_printable_values]),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )


def get_logger(**context: Any) -> Any:
    """A logger with ``context`` bound (e.g. game_id=..., seat=..., bot=...)."""
    return structlog.get_logger().bind(**context)
