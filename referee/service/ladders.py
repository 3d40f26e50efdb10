"""Ladders in the service (docs/service.md, "Ladders"): open entry, versions, withdrawal, pause, resume and stop.

An organiser creates a ladder like any tournament (its config has a ``ladder`` table); with ``open``, every bot
that passes SubmitBot's checks joins it at its next round, under its versioned name (``name.vN``), and a new
version of a bot replaces its author's older one from that round on (the older keeps its games and rating).
RetireEntrant withdraws a bot from every ladder. The ladder's rows are read and written through
``referee.store.ladder`` only.
"""

from __future__ import annotations

from referee.store import SqliteStore
from referee.store import ladder as ladder_store
from referee.store.ladder import LadderEntrant
from referee.tournament import board
from referee.tournament.config import LadderSettings, TournamentConfig

from .registry import CREATED, PAUSED, RUNNING, BotVersion, Registry

OPEN_STATES = (CREATED, RUNNING, PAUSED)  # a ladder in these states still takes (and loses) entrants


def _ladders(store: SqliteStore, registry: Registry, open_only: bool) -> list[str]:
    """The ladders that are not over (with ``open_only``, those open to submissions)."""
    return [
        row.id
        for row in store.tournaments()
        if "ladder" in row.config
        and (row.config["ladder"].get("open", False) or not open_only)
        and row.finished_at is None
        and registry.state(row.id)[0] in OPEN_STATES
    ]


def enter(store: SqliteStore, registry: Registry, bot: BotVersion) -> list[str]:
    """``bot`` (just accepted) joins every open ladder at its next round; returns their ids."""
    joined = []
    for tid in _ladders(store, registry, open_only=True):
        ladder_store.submit(store, tid, _entrant(store, tid, bot))
        joined.append(tid)
    return joined


def enter_all(store: SqliteStore, registry: Registry, tid: str) -> list[str]:
    """Every active bot's latest version that is not in the open ladder ``tid`` yet joins it at its next choice,
    whenever it was submitted (before the ladder existed, or while no ladder was open); returns their names. Called
    when a ladder starts or resumes, beside ``enter`` at each submission."""
    row = store.tournament(tid)
    if row is None or not row.config.get("ladder", {}).get("open", False):
        return []
    had = {e.name for e in ladder_store.entrants(store, tid)}
    joined = []
    for bot in registry.bots(active_only=True):
        if bot.entrant_id not in had:
            ladder_store.submit(store, tid, _entrant(store, tid, bot))
            joined.append(bot.entrant_id)
    return joined


def _entrant(store: SqliteStore, tid: str, bot: BotVersion) -> LadderEntrant:
    """``bot`` as an entrant of ladder ``tid``: the games it asked to play at once (else the ladder's), at most the
    ladder's cap."""
    row = store.tournament(tid)
    settings = LadderSettings() if row is None else TournamentConfig.from_json(row.config).ladder or LadderSettings()
    at_once = min(bot.games_at_once or settings.games_at_once, settings.games_at_once_cap)
    return LadderEntrant(bot.entrant_id, bot.owner, bot.name, bot.version, address=bot.address, games_at_once=at_once)


def withdraw(store: SqliteStore, registry: Registry, bot: BotVersion) -> list[str]:
    """``bot`` (every version of it) leaves every ladder it plays in, from the ladder's next round; its games stay.
    Returns the ladders it left."""
    return [tid for tid in _ladders(store, registry, open_only=False) if ladder_store.withdraw(
        store, tid, bot.name, bot.owner) is not None]  # fmt: skip


def shown(store: SqliteStore, tid: str, all_versions: bool) -> set[str] | None:
    """The entrants a ladder's standings show: each bot's latest version, or (``all_versions``, or not a ladder)
    everyone (None)."""
    row = store.tournament(tid)
    return None if row is None else board.shown(store, row, all_versions)
