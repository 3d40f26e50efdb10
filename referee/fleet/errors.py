"""The fleet's errors, under the referee's error root (referee/errors.py)."""

from __future__ import annotations

from referee.errors import Precondition, RefereeError, Unavailable


class FleetError(RefereeError):
    """Games that cannot be played where they were sent: the message says why (a rerun or resume plays them)."""

    local = True  # it names files, folders or bot addresses


class WorkerError(FleetError, status=Unavailable.status, exit_code=2):  # 2: a resume would not help
    """The workers cannot be had: their Ray cluster cannot be reached, or a worker keeps dying at start."""


class EntrantError(Precondition):
    """An entrant that cannot take part (its command does not start, it does not answer Hello): nothing starts."""

    local = True  # it names files, folders or bot addresses


class WorkerLost(Exception):
    """A worker died (its process was killed, its Ray actor or node died) with this game in flight. Internal: the
    pool plays the game again elsewhere."""
