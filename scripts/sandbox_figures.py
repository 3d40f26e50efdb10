"""The sandbox's figures for scripts/bench_referee.py (docs/sandbox.md): how long a sandbox takes to start, and
what a decision costs the referee over a Unix socket against TCP on loopback.

- ``sandbox_start_ms``: from starting a sandboxed command (fleet/bots.LocalBots with ``Sandbox()``) to its
  ``listening on`` line, for ``sh`` printing it at once: the sandbox's own cost (bwrap, its namespaces and
  mounts, the launcher), the median of STARTS; ``sandbox_python_bot_start_ms`` the same for a Python bot of the
  kit, and ``python_bot_start_ms`` for that bot without a sandbox;
- ``unix_vs_tcp_cpu``: the referee's CPU per decision, stream transport, 64 games at once, against one instant
  bot over its Unix socket, over that over its TCP port (below 1: the Unix socket costs less).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from referee.fleet.bots import LocalBots
from referee.fleet.lineup import Bot
from referee.fleet.sandbox import Sandbox

STARTS = 5
SH = ("sh", "-c", "echo listening on {listen}; exec sleep 600")
PY_BOT = (sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())", "bot", "greedy",
          "--port", "0")  # fmt: skip


async def start_ms(command: tuple[str, ...], sandboxed: bool) -> float:
    """The median time, in ms, from starting ``command`` to its ``listening on`` line, over STARTS starts."""
    took = []
    with tempfile.TemporaryDirectory() as logs:
        for _ in range(STARTS):
            t0 = time.perf_counter()
            async with LocalBots((Bot("b", command=command, sandbox=Sandbox() if sandboxed else None),), Path(logs),
                                 "bench"):  # fmt: skip
                took.append((time.perf_counter() - t0) * 1000)
    return statistics.median(took)


async def start_figures() -> dict[str, float]:
    return {
        "sandbox_start_ms": await start_ms(SH, True),
        "sandbox_python_bot_start_ms": await start_ms(PY_BOT, True),
        "python_bot_start_ms": await start_ms(PY_BOT, False),
    }
