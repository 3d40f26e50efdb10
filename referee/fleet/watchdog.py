"""The guard of the command bots a referee starts (``LocalBots`` in bots.py): a small process that outlives a
referee killed with SIGKILL, and then kills every bot's whole process group (a shell wrapper's children too).

It reads process group ids on stdin, one a line: ``+PGID`` when a bot starts, ``-PGID`` once the referee has
stopped it. When stdin ends (the referee closed it, or died and the kernel closed it), it sends SIGKILL to every
group still listed, and exits. It is run by path with only the standard library (``python -I -S watchdog.py``),
so it starts in milliseconds and imports nothing of the referee.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys


def main() -> None:
    # A Ctrl-C or hangup is the referee's to handle (it stops its bots itself); the guard waits for its end.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    groups: set[int] = set()
    for line in sys.stdin:
        line = line.strip()
        if line[:1] == "+":
            groups.add(int(line[1:]))
        elif line[:1] == "-":
            groups.discard(int(line[1:]))
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


if __name__ == "__main__":
    main()
