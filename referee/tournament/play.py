"""A tournament on the fleet (referee/fleet): its config as the fleet's lineup, and the fleet's games opened for
``play_slots`` (the play function, the entrants' addresses, and the config to schedule with)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from pathlib import Path

from referee.fleet import Lineup, PlayerFactory, PlayFn, WorkerSettings, fresh_bots
from referee.fleet import open_games as open_fleet
from referee.store import SqliteStore

from .config import TournamentConfig


def lineup(config: TournamentConfig) -> Lineup:
    """Who plays ``config``'s games, as the fleet starts, dials or runs them."""
    bots = tuple(e.bot(config.sandbox) for e in config.entrants)
    return Lineup(config.tournament_id, bots, config.fresh_process, config.restart, config.max_restarts)


@contextlib.asynccontextmanager
async def open_games(
    settings: WorkerSettings,
    config: TournamentConfig,
    store: SqliteStore,
    player: PlayerFactory,
    *,
    retry_s: float | None = None,
    keep_trying: Callable[[], bool] = lambda: True,
) -> AsyncIterator[tuple[PlayFn, dict[str, str], TournamentConfig]]:
    """What ``play_slots`` needs to play ``config``'s games on ``settings``' backend: the play function, the
    entrants' addresses as the coordinator knows them, and the config it should schedule with (on workers without
    ``fresh_process``: each worker starts a game's fresh bots itself)."""
    async with open_fleet(
        settings, lineup(config), store.data, player, retry_s=retry_s, keep_trying=keep_trying
    ) as games:
        yield games.play, games.addresses, replace(config, fresh_process=games.lineup.fresh_process)


def fresh_commands(
    config: TournamentConfig, seats: tuple[str, ...], addresses: dict[str, str], log_dir: Path, prefix: str
) -> AbstractAsyncContextManager[dict[str, str]]:
    """The addresses to seat a game with; with ``fresh_process``, its command entrants started for it alone."""
    return fresh_bots(lineup(config), seats, addresses, log_dir, prefix)
