"""Progress of a long run: a one-line bar on a terminal; otherwise a plain line now and then, or a log line when
logs are JSON (``--log-format json``, for services)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from referee.log import get_logger, json_lines
from referee.terminal import printable


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """Call ``update`` after each game. On a terminal it redraws a bar (at most ~10 times a second); otherwise it
    writes a line every ``every_s`` seconds, and always at the end: readable text, or a JSON log line when logs are
    JSON."""

    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None, every_s: float = 5.0,
                 enabled: bool = True) -> None:  # fmt: skip
        self.stream = stream or sys.stderr
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.total, self.start_done, self.done = total, done, done
        self.t0 = time.monotonic()
        self.every_s = every_s
        self._last = 0.0
        self.log = get_logger()

    def rate(self) -> float:
        elapsed = time.monotonic() - self.t0
        return (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0

    def update(self, done: int, top: list[tuple[str, float]], final: bool = False) -> None:
        self.done = done
        if not self.enabled:
            return
        now = time.monotonic()
        if not final and now - self._last < (0.1 if self.tty else self.every_s):
            return
        self._last = now
        rate = self.rate()
        left = (self.total - done) / rate if rate > 0 else None
        eta = _clock(left) if left is not None else "?"
        top3 = printable(", ".join(f"{n} {c:.1f}" for n, c in top[:3]))
        if self.tty:
            width = 24
            fill = int(width * done / self.total) if self.total else width
            line = (f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{self.total} games  {rate:.1f} games/s  "
                    f"ETA {eta}  top: {top3}")  # fmt: skip
            self.stream.write(line[:160].ljust(80) + ("\n" if final else ""))
            self.stream.flush()
        elif json_lines():
            fields: dict[str, Any] = {"done": done, "total": self.total, "games_per_s": round(rate, 2), "eta": eta}
            self.log.info("tournament progress", top=top3, **fields)
        else:
            self.stream.write(f"{done}/{self.total} games  {rate:.1f} games/s  ETA {eta}  top: {top3}\n")
            self.stream.flush()
