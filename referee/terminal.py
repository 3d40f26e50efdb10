"""Text for a terminal. A bot's Hello strings, its gRPC error details and an entrant's name reach ``abluxx``'s
output; raw, a control character in them could retitle the window (ESC ]0;), clear the screen (ESC [2J), or
overwrite a line (CR). Every text output path escapes them with ``printable``: the CLI prints through ``say``, and
the readable log lines (referee.log) and the progress bar call ``printable`` themselves.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, TextIO

# C0 (but the line break) and C1 controls, DEL, the Unicode line and paragraph separators, and the bidirectional
# embeddings, overrides and isolates, which reorder what a terminal shows.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    return repr(m.group())[1:-1]  # \x1b, \r, \t, \u202e


def printable(text: str) -> str:
    """``text`` with every control character but the line break written as a Python escape (``\\x1b``)."""
    return _CONTROL.sub(_escape, text)


def say(*values: Any, sep: str = " ", end: str = "\n", file: TextIO | None = None, flush: bool = False) -> None:
    """``print``, with control characters escaped (``printable``)."""
    print(printable(sep.join(map(str, values))), end=end, file=file if file is not None else sys.stdout, flush=flush)


def said(value: Any) -> str:
    """A value as a file or a command line spells it (``true``, ``"two"``), for messages: never a Python repr."""
    if value is None:
        return "nothing"
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


class StatusLine:
    """One line redrawn in place on a terminal (a progress bar): each drawing covers the whole of the last one, and
    ``clear`` blanks it and leaves the cursor at the start of the line, so what is printed next starts clean
    (no ``...greedy 25.4^Cabluxx: interrupted`` or leftover ``0-25-00``)."""

    def __init__(self, stream: TextIO, max_chars: int = 160) -> None:
        self.stream = stream
        self.max_chars = max_chars
        self.width = 0  # of what is on the line now

    def draw(self, text: str) -> None:
        line = printable(text)[: self.max_chars]
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = max(self.width, len(line))

    def clear(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
