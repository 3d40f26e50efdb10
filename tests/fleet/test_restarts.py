"""Command bots started again after a crash (fleet/bots.py, ``restart = "on-crash"``): the cap on restarts is each
entrant's own. Real processes that print their address and exit with code 7 soon after, in a LocalBots run in the
test's process."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from referee.fleet.bots import LocalBots
from referee.fleet.lineup import Bot

# Serves nothing: says where it listens (the port its argument names), as a bot does, then ends with code 7.
CRASHER = (sys.executable, "-c", "import sys, time; print('listening on 127.0.0.1:' + sys.argv[1], flush=True); "
           "time.sleep(0.3); raise SystemExit(7)")  # fmt: skip


async def _crashes(tmp_path: Path, names: tuple[str, ...], max_restarts: int) -> dict[str, list[bool]]:
    """Each entrant's crashes (whether it was started again), once every one of them is left down."""
    entrants = tuple(Bot(n, command=(*CRASHER, str(9000 + i))) for i, n in enumerate(names))
    bots = LocalBots(entrants, tmp_path, "restarts", restart="on-crash", max_restarts=max_restarts)
    async with bots:
        async with asyncio.timeout(120):
            while {c.entrant for c in bots.crashes if not c.restarted} != set(names):
                await asyncio.sleep(0.05)
        await bots.settled(names)
        return {n: [c.restarted for c in bots.crashes if c.entrant == n] for n in names}


def test_each_command_bot_has_its_own_restart_cap(tmp_path: Path) -> None:
    """Three bots that keep crashing, two restarts each: each is started again twice, then left down; one bot's
    crashes do not use up another's restarts."""
    got = asyncio.run(_crashes(tmp_path, ("ann", "bob", "cyd"), max_restarts=2))
    assert got == {n: [True, True, False] for n in ("ann", "bob", "cyd")}
