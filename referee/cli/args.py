"""Arguments several commands share."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from referee.records.paths import DEFAULT_DATA_DIR

T = TypeVar("T")

if TYPE_CHECKING:  # generic only in typeshed
    Commands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]  # what each register() adds to


def add_data_arg(p: argparse.ArgumentParser) -> None:
    """``--data DIR``: the data folder (the store, the records), ``./abluxx-data`` by default."""
    p.add_argument("--data", type=Path, default=DEFAULT_DATA_DIR, metavar="DIR",
                   help=f"data folder (default ./{DEFAULT_DATA_DIR})")  # fmt: skip


def add_tournament_arg(p: argparse.ArgumentParser, latest: bool = True) -> None:
    """The tournament a command is about: an id, or a name one tournament has (cli/lookup.py); with ``latest``, it
    may be left out for the latest."""
    if latest:
        p.add_argument("id", nargs="?", help="the tournament's id or name (default: the latest)")
    else:
        p.add_argument("id", help="the tournament's id or name")


def add_table_formats(p: argparse.ArgumentParser) -> None:
    """``--json`` or ``--csv`` instead of the table: one schema, local or remote (docs/cli.md)."""
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON instead of a table")
    out.add_argument("--csv", action="store_true", help="print CSV instead of a table")


def add_versions_arg(p: argparse.ArgumentParser) -> None:
    """``--all`` (``--all-versions``): a ladder's every bot version, not only each bot's latest; local or remote."""
    p.add_argument("--all", "--all-versions", dest="all_versions", action="store_true",
                   help="every version of each bot, superseded and retired ones marked (default: each bot's "
                   "latest)")  # fmt: skip


def add_worker_args(p: argparse.ArgumentParser, default: str = "the config's [workers], else in this process") -> None:
    """--workers, --backend and --ray-address (docs/scale.md): tournament run|resume, serve, duel and gauntlet."""
    p.add_argument("--workers", type=int, metavar="N", help=f"play the games on N workers (default: {default}; N "
                   "alone means local worker processes)")  # fmt: skip
    p.add_argument("--backend", choices=["inline", "processes", "ray"],
                   help="where the games are played: inline (this process), processes (local worker processes) or "
                   'ray (Ray actors; needs pip install -e ".[ray]")')  # fmt: skip
    p.add_argument("--ray-address", metavar="A", help="the Ray cluster to join (host:port); without it a local Ray "
                   "is started")  # fmt: skip


def add_order_arg(p: argparse.ArgumentParser) -> None:
    """The one order of games everywhere (the CLI, the API, the site): the latest first; ``--oldest-first`` for the
    schedule's own order."""
    p.add_argument("--oldest-first", action="store_true", help="list games in schedule order (default: the latest "
                   "first, as the site lists them)")  # fmt: skip


def in_order(games: Sequence[T], oldest_first: bool) -> list[T]:
    """``games`` in schedule order, as the order flag asks (``add_order_arg``)."""
    return list(games) if oldest_first else list(reversed(games))
