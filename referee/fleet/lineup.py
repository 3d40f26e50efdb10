"""Who plays: the bots a run's games seat, as the fleet needs to know them (to start, dial or run them)."""

from __future__ import annotations

from dataclasses import dataclass

from .sandbox import Sandbox


@dataclass(frozen=True)
class Bot:
    """One entrant as the fleet sees it: a running bot at ``address``, a local bot ``command`` the fleet starts
    (on the machine that plays its games), or a built-in ``policy`` played in-process. A command with a
    ``sandbox`` runs only in it (sandbox.py)."""

    name: str
    address: str | None = None
    command: tuple[str, ...] | None = None
    policy: str | None = None
    sandbox: Sandbox | None = None


@dataclass(frozen=True)
class Lineup:
    """A run's bots (``run_id`` names it in logs and log files: a tournament's or a duel's id). With
    ``fresh_process`` each game starts its command bots for itself alone and stops them after it, so no process
    of theirs sees two deals; otherwise they are started once (per worker) and serve every game, and with
    ``restart = "on-crash"`` one whose process ends is started again, up to ``max_restarts`` times."""

    run_id: str
    bots: tuple[Bot, ...]
    fresh_process: bool = False
    restart: str = "never"  # "on-crash": a command bot whose process ends mid-run is started again (bots.LocalBots)
    max_restarts: int = 0  # at most this often per bot

    @property
    def commands(self) -> tuple[Bot, ...]:
        return tuple(b for b in self.bots if b.command)

    def addresses(self) -> dict[str, str]:
        """The address bots' addresses: the ones known before anything starts."""
        return {b.name: b.address for b in self.bots if b.address}
