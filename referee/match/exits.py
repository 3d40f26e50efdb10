"""Why a local bot process went away, for the fault of the game it was playing.

The tournament starts command bots (``fleet/bots.py``) and says here which address each one serves
(``watch``) and, when its process ends, how (``exited``: "the bot's process exited with code 7", "... was killed by
signal SIGSEGV"). When a seat's stream or call breaks for good, the match runner asks (``note``) and puts the words
in the fault, so the record, the log and the replay say what happened to the process, not only to the connection.
"""

from __future__ import annotations

import asyncio
import signal

WAIT_S = 1.0  # how long a broken seat waits to hear that its process ended (both are seen within milliseconds)


class _Watch:
    def __init__(self) -> None:
        self.ended = asyncio.Event()
        self.how = ""


_watched: dict[str, _Watch] = {}


def how_it_ended(returncode: int) -> str:
    """A process's end in words, from ``returncode`` (negative: the signal that killed it)."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"the bot's process was killed by signal {name}"
    return f"the bot's process exited with code {returncode}"


def watch(address: str) -> None:
    """A local bot process serves ``address`` from now on."""
    _watched[address] = _Watch()


def exited(address: str, how: str) -> None:
    """The process that served ``address`` has ended, ``how``."""
    w = _watched.get(address)
    if w is not None:
        w.how = how
        w.ended.set()


def forget(address: str) -> None:
    _watched.pop(address, None)


async def note(address: str, wait_s: float = WAIT_S) -> str | None:
    """How the local process at ``address`` ended, waiting up to ``wait_s`` to hear of it; None for an address no
    local process serves, or one still running."""
    w = _watched.get(address)
    if w is None:
        return None
    try:
        await asyncio.wait_for(w.ended.wait(), wait_s)
    except TimeoutError:
        return None
    return w.how
