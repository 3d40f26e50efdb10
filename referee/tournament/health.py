"""Bot health for a ladder (docs/bot-health.md): an entrant that cannot be reached when its game starts
is **down**, is probed with a Hello at growing intervals, and is **up** again at its first good Hello; down for
longer than ``suspend_after_s`` it is **suspended**, and no longer probed, until its author submits again.

The ladder's scheduler asks ``available`` before it seats an entrant, calls ``absent`` when a seat's bot could not
be reached (or crashed mid-game), and ``missed`` for each game an entrant would have been seated in while down.
``run`` is the prober; it reads time from an injected clock, so tests move time on without waiting. The status is
kept in the store (``store/health.py``), so it survives a restart and every surface reads the same row.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from referee import metrics
from referee.event_loop import wait_for
from referee.log import get_logger
from referee.match.hello import HelloError, hello
from referee.store import SqliteStore
from referee.store import health as health_store
from referee.store.health import HealthRow, Status

Hello = Callable[[str], Awaitable[bool]]
OnChange = Callable[[str, HealthRow], None]

log = get_logger(part="health")


@dataclass(frozen=True)
class HealthSettings:
    """How a down entrant is probed (docs/security.md lists the defaults)."""

    first_probe_s: float = 5.0  # the first probe comes this long after it went down
    max_probe_s: float = 600.0  # the interval doubles up to this
    suspend_after_s: float = 86_400.0  # down for longer than this: suspended until its author submits again
    probe_timeout_s: float = 10.0  # one probe's Hello gets this long

    def __post_init__(self) -> None:
        for key in ("first_probe_s", "max_probe_s", "suspend_after_s", "probe_timeout_s"):
            if not getattr(self, key) > 0:
                raise ValueError(f"health settings: {key} must be above 0, not {getattr(self, key)}")
        if self.max_probe_s < self.first_probe_s:
            raise ValueError("health settings: max_probe_s must be at least first_probe_s")


@dataclass
class _Down:
    since: float  # on the injected clock
    interval: float
    due: float


def hello_at(addresses: Mapping[str, str]) -> Hello:
    """A probe for the entrants at ``addresses`` (name -> address, as ``open_games`` gives them): True at a good
    Hello. An entrant with no address (a built-in policy; a command entrant whose process is gone after its last
    restart) is never good: it stays down, and is suspended in time, like the rest."""

    async def probe(name: str) -> bool:
        address = addresses.get(name)
        if address is None:
            return False
        try:
            await hello(address)
        except HelloError:
            return False
        return True

    return probe


class Health:
    """The health of every entrant of a store's ladders, its prober, and its changes told to ``on_change``."""

    def __init__(
        self,
        store: SqliteStore,
        hello: Hello,
        clock: Callable[[], float] = time.monotonic,
        settings: HealthSettings | None = None,
        on_change: OnChange | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.store, self.hello, self.clock, self.wall = store, hello, clock, wall
        self.settings = settings or HealthSettings()
        self.on_change = on_change
        self._status: dict[str, Status] = {}
        self._down: dict[str, _Down] = {}
        self._seen: set[str] = set()  # every entrant a ladder asked about: the metric's up, down and suspended
        self._wake = asyncio.Event()
        self._load()

    def _load(self) -> None:
        """Resume the probing of entrants that were down when the process stopped (their time down so far
        counts towards suspension)."""
        now, wall = self.clock(), self.wall()
        for name, row in health_store.everything(self.store).items():
            self._status[name] = row.status
            if row.status == "down":
                since = now - max(0.0, wall - row.since)
                self._down[name] = _Down(since, self.settings.first_probe_s, now)

    def status(self, name: str) -> Status:
        return self._status.get(name, "up")

    def available(self, name: str) -> bool:
        """Up: it may be seated now."""
        if name not in self._seen:
            self._seen.add(name)
            self._count()
        return self.status(name) == "up"

    def _count(self) -> None:
        """``abluxx_entrants`` by status, over the entrants the ladders asked about (docs/operations.md)."""
        statuses = [self.status(n) for n in self._seen]
        for status in ("up", "down", "suspended"):
            metrics.ENTRANTS.labels(status=status).set(statuses.count(status))

    def absent(self, name: str, reason: str) -> None:
        """``name`` could not be reached when its game started, or crashed mid-game: it is down, and probing
        begins. Already down or suspended: nothing changes."""
        if self.status(name) != "up":
            return
        now = self.clock()
        self._down[name] = _Down(now, self.settings.first_probe_s, now + self.settings.first_probe_s)
        self._change(name, "down", reason)
        self._wake.set()

    def missed(self, name: str, n: int = 1) -> None:
        """``name`` would have been seated in ``n`` games, but was down."""
        health_store.add_missed(self.store, name, n)

    def played(self, name: str) -> None:
        """It played a game to its end. Nothing changes: an up entrant stays up, and a down one comes back only at
        a good Hello from the prober (a game that was already under way says nothing of its bot now)."""

    def cleared(self, name: str) -> None:
        """Its author submitted it again: up, whatever it was (a suspended entrant's only way back)."""
        self._down.pop(name, None)
        if self.status(name) != "up":
            self._change(name, "up", "submitted again")

    def _change(self, name: str, status: Status, reason: str) -> None:
        self._status[name] = status
        self._seen.add(name)
        self._count()
        row = health_store.set_status(self.store, name, status, reason, self.wall())
        log.info("entrant health", entrant=name, status=status, reason=reason)
        if self.on_change is not None:
            self.on_change(name, row)

    async def probe_once(self) -> float:
        """Probe every down entrant that is due; returns the seconds until the next is due (``max_probe_s`` when
        none is down)."""
        s = self.settings
        for name, down in list(self._down.items()):
            now = self.clock()
            if now - down.since > s.suspend_after_s:
                del self._down[name]
                self._change(name, "suspended", f"down for more than {s.suspend_after_s:g} s")
            elif now >= down.due:
                await self._probe(name, down)
        now = self.clock()
        return min((d.due - now for d in self._down.values()), default=s.max_probe_s)

    async def _probe(self, name: str, down: _Down) -> None:
        try:
            good = await wait_for(self.hello(name), self.settings.probe_timeout_s)
        except Exception as e:  # a probe that fails in any way is a failed probe
            log.debug("health probe failed", entrant=name, error=str(e))
            good = False
        if name not in self._down:
            return  # cleared while the probe was out
        if good:
            del self._down[name]
            self._change(name, "up", "a good Hello")
            return
        health_store.add_probe(self.store, name)
        down.interval = min(down.interval * 2, self.settings.max_probe_s)
        down.due = self.clock() + down.interval

    async def run(self) -> None:
        """The prober: forever, each down entrant is probed when due. Cancel it to stop."""
        while True:
            wait = await self.probe_once()
            self._wake.clear()
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await wait_for(self._wake.wait(), wait)
