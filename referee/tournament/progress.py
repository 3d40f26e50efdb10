"""Progress of a long run: a one-line bar on a terminal; otherwise a plain line now and then, or a log line when
logs are JSON (``--log-format json``, for services)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from referee.log import get_logger, json_lines
from referee.match.spec import GameResult
from referee.terminal import StatusLine, printable


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """Call ``update`` after each game. On a terminal it redraws a bar (at most ~10 times a second); otherwise it
    writes a line every ``every_s`` seconds, and always at the end: readable text, or a JSON log line when logs are
    JSON."""

    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None, every_s: float = 5.0,
                 enabled: bool = True, games_log: TextIO | None = None) -> None:  # fmt: skip
        self.stream = stream or sys.stderr
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.bar = StatusLine(self.stream)
        self.games_log = games_log  # one line per finished game goes here (``--games-log``), the bar cleared first
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
            self.bar.draw(f"[{'#' * fill}{'.' * (width - fill)}] {done}/{self.total} games  {rate:.1f} games/s  "
                          f"ETA {eta}  top: {top3}")  # fmt: skip
            if final:
                self.stream.write("\n")
                self.bar.width = 0
        elif json_lines():
            fields: dict[str, Any] = {"done": done, "total": self.total, "games_per_s": round(rate, 2), "eta": eta}
            self.log.info("tournament progress", top=top3, **fields)
        else:
            self.stream.write(f"{done}/{self.total} games  {rate:.1f} games/s  ETA {eta}  top: {top3}\n")
            self.stream.flush()

    def clear(self) -> None:
        """Blank the bar, so that what is printed next (an error, Ctrl-C's message) starts on a clean line."""
        if self.tty:
            self.bar.clear()

    def finished(self, n: int, seats: tuple[str, ...], result: GameResult) -> None:
        """With a games log: one line for a finished game, above the bar (which the next update draws again)."""
        if self.games_log is None:
            return
        self.clear()
        self.games_log.write(game_line(n, self.total, seats, result) + "\n")
        self.games_log.flush()


def game_line(n: int, total: int, seats: tuple[str, ...], result: GameResult) -> str:
    """``finished game 3/36 t-0003: 1. greedy +12  2. random +3  3. crasher -5 (disconnected 1; retired)``, as
    cutechess-cli's "Finished game" lines: who played, places, scores and faults, best place first."""
    parts = []
    for i in sorted(range(len(seats)), key=lambda i: (result.places[i], i)):
        s = result.seats[i]
        parts.append(f"{result.places[i]}. {seats[i]} {result.scores[i]:+d}{seat_notes(s.faults, s.retired)}")
    return printable(f"finished game {n}/{total} {result.game_id}: " + "  ".join(parts))


def seat_notes(faults: dict[str, int], retired: bool) -> str:
    """`` (timeout 1, invalid 2; retired)``: a seat's faults by kind and whether it retired, or nothing, for the
    lines that list games (``--games-log``, ``abluxx games``)."""
    notes = [", ".join(f"{kind} {n}" for kind, n in sorted(faults.items()) if kind != "retired")]
    notes = [x for x in notes if x] + (["retired"] if retired else [])
    return f" ({'; '.join(notes)})" if notes else ""
