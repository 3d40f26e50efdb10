"""Who a ladder may seat now (docs/ladders.md, "Absent bots stand aside"): ``Attendance`` is what a ladder tells
and asks; ``Presence`` is the ladder's own, in memory, for a ladder run from a file. The service passes its
``health.Health`` instead, which keeps the same calls in the store, across ladders, with Hello probes."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


class Attendance(Protocol):
    """Who may be seated: what a ladder tells and asks of it. ``Presence`` is the ladder's own; the service's
    ``tournament.health.Health`` keeps the same calls, in the store and across ladders."""

    def available(self, name: str) -> bool: ...

    def absent(self, name: str, reason: str) -> None: ...

    def missed(self, name: str) -> None: ...

    def played(self, name: str) -> None: ...


@dataclass
class _Down:
    since: float
    wait: float
    retry_at: float
    why: str


@dataclass
class Presence:
    """Who may be seated now. An entrant whose bot could not be reached at its game's start, or whose bot was gone
    mid-game, is down: it stands aside until ``retry_at``, when the next table that seats it asks its Hello
    again (that table does not play if it is still absent). The wait starts at ``first_retry_s`` and doubles up
    to ``max_retry_s``."""

    first_retry_s: float = 5.0
    max_retry_s: float = 600.0
    clock: Callable[[], float] = time.monotonic
    down: dict[str, _Down] = field(default_factory=dict)
    missed_games: Counter[str] = field(default_factory=Counter)

    def available(self, name: str) -> bool:
        d = self.down.get(name)
        return d is None or self.clock() >= d.retry_at

    def absent(self, name: str, why: str) -> None:
        now = self.clock()
        d = self.down.get(name)
        wait = self.first_retry_s if d is None else min(self.max_retry_s, 2 * d.wait)
        self.down[name] = _Down(now if d is None else d.since, wait, now + wait, why)

    def missed(self, name: str) -> None:
        self.missed_games[name] += 1

    def played(self, name: str) -> None:
        """It played a game to its end: up."""
        self.down.pop(name, None)
