"""Finding a tournament by what a person types: its id, its name when one tournament has it, or nothing for the
latest. The same rule for the local commands (standings, games, report) and the remote ones."""

from __future__ import annotations

from collections.abc import Sequence


def pick_tournament(known: Sequence[tuple[str, str]], wanted: str | None) -> str:
    """The id for ``wanted`` among ``known`` (id, name) pairs, oldest first; the latest when ``wanted`` is None.

    Raises LookupError saying why there is none: no tournaments, no such id or name, or a name several share.
    """
    if not known:
        raise LookupError("there are no tournaments yet")
    if wanted is None:
        return known[-1][0]
    if any(tid == wanted for tid, _ in known):
        return wanted
    named = [tid for tid, name in known if name == wanted]
    if len(named) == 1:
        return named[0]
    if named:
        raise LookupError(f"{len(named)} tournaments are named {wanted!r} ({', '.join(named)}): give its id")
    latest = ", ".join(tid for tid, _ in known[-5:])
    raise LookupError(f"no tournament {wanted!r} (the latest: {latest})")
