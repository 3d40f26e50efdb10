"""The referee's own health: how late its event loop runs (docs/match.md: referee faults are told apart)."""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque


class LagMonitor:
    """Measures how late the event loop runs: a task that sleeps ``tick_s`` and records each late wake-up.

    The match runner takes the worst lag seen during a decision off the bot's time, and a decision that timed out
    while the loop stalled for at least the grace margin is the referee's fault (FAULT_KIND_REFEREE), not the
    bot's."""

    def __init__(self, tick_s: float = 0.01, keep: int = 512) -> None:
        self.tick_s = tick_s
        self._stalls: deque[tuple[float, float]] = deque(maxlen=keep)  # (when it ended, how long)
        self._due = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        tick, now = self.tick_s, time.perf_counter
        while True:
            self._due = now() + tick
            await asyncio.sleep(tick)
            t = now()
            if t - self._due > 0.002:
                self._stalls.append((t, t - self._due))

    def worst_since(self, t0: float) -> float:
        """The longest stall (seconds) that ended after ``t0``, or the one going on now."""
        now = time.perf_counter()
        current = now - self._due if self._due and now > self._due else 0.0
        return max(current, max((lag for t, lag in self._stalls if t > t0), default=0.0))


_monitors: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LagMonitor] = weakref.WeakKeyDictionary()


def lag_monitor() -> LagMonitor:
    """The running loop's monitor, started on first use."""
    loop = asyncio.get_running_loop()
    m = _monitors.get(loop)
    if m is None:
        m = _monitors[loop] = LagMonitor()
        m.start()
    return m
