"""Finding a tournament by what a person types: its id, its name when one tournament has it, or nothing for the
latest. The same rule for the local commands (standings, games, report) and the remote ones."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from referee.errors import NotFound, NoTournament

if TYPE_CHECKING:
    from referee.store import SqliteStore


def pick_tournament(known: Sequence[tuple[str, str]], wanted: str | None, where: str) -> str:
    """The id for ``wanted`` among ``known`` (id, name) pairs, oldest first; the latest when ``wanted`` is None.
    ``where`` says where they were looked for ("in abluxx-data/abluxx.db", "on 127.0.0.1:50050").

    Raises NotFound saying why there is none: no tournaments, no such id or name (NoTournament), or a name several
    share.
    """
    if not known:
        raise NotFound(f"there are no tournaments {where} yet")
    if wanted is None:
        return known[-1][0]
    if any(tid == wanted for tid, _ in known):
        return wanted
    named = [tid for tid, name in known if name == wanted]
    if len(named) == 1:
        return named[0]
    if named:
        raise NotFound(f"{len(named)} tournaments are named {wanted!r} {where} ({', '.join(named)}): give its id")
    raise NoTournament(wanted, where, [tid for tid, _ in known])


def open_tournament(data: Path, wanted: str | None) -> tuple[SqliteStore, str]:
    """The store in the data folder ``data`` and the id of the tournament ``wanted`` names there (pick_tournament);
    NotFound when there is none, or no data at all (a read never makes a data folder at a mistyped path). The
    caller closes the store."""
    from referee.store import DATABASE, open_store

    if not (Path(data) / DATABASE).is_file():
        raise NotFound(
            f"no abluxx data in {data} (no {DATABASE} there: run a tournament there first, or pass --data DIR)"
        )
    store = open_store(data)
    try:
        return store, pick_tournament([(t.id, t.name) for t in store.tournaments()], wanted, f"in {store.path}")
    except NotFound:
        store.close()
        raise
