"""Why a local bot process went away, for the fault of the game it was playing.

The tournament starts command bots (``fleet/bots.py``) and says here which address each one serves
(``watch``) and, when its process ends, how (``exited``: "the bot's process exited with code 7", "... was killed by
signal SIGSEGV"). When a seat's stream or call breaks for good, the match runner asks (``note``) and puts the words
in the fault, so the record, the log and the replay say what happened to the process, not only to the connection.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable

from referee.event_loop import wait_for

WAIT_S = 1.0  # how long a broken seat waits to hear that its process ended (both are seen within milliseconds)
# ... when its process is already gone: its end is certain to be told, only late on a busy machine
DEAD_WAIT_S = 30.0


class _Watch:
    def __init__(self, alive: Callable[[], bool] | None) -> None:
        self.ended = asyncio.Event()
        self.how = ""
        self.at = 0.0  # when it was heard of (time.monotonic)
        self.alive = alive


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


def watch(address: str, alive: Callable[[], bool] | None = None) -> None:
    """A local bot process serves ``address`` from now on; ``alive()`` says whether it still runs (asked only when
    a seat's connection broke, so a seat waits for the words of an end that is certain)."""
    _watched[address] = _Watch(alive)


def exited(address: str, how: str) -> None:
    """The process that served ``address`` has ended, ``how``."""
    w = _watched.get(address)
    if w is not None:
        w.how = how
        w.at = time.monotonic()
        w.ended.set()


def forget(address: str) -> None:
    """No process serves ``address`` any more (it was stopped): a seat waiting to hear of its end hears nothing."""
    w = _watched.pop(address, None)
    if w is not None and not w.ended.is_set():
        w.ended.set()


async def note(address: str, wait_s: float = WAIT_S) -> str | None:
    """How the local process at ``address`` ended, waiting up to ``wait_s`` to hear of it; None for an address no
    local process serves, or one still running."""
    end = await ended_since(address, 0.0, wait_s)
    return None if end is None else end[0]


async def ended_since(address: str, since: float, wait_s: float = WAIT_S) -> tuple[str, bool] | None:
    """As ``note``, with whether the process had already ended before ``since`` (time.monotonic): a game that
    began after its bot's process died met it dead; one whose Hello or start was under way lost it."""
    w = _watched.get(address)
    if w is None:
        return None
    if not w.ended.is_set() and w.alive is not None and not w.alive():
        wait_s = max(wait_s, DEAD_WAIT_S)
    try:
        await wait_for(w.ended.wait(), wait_s)
    except TimeoutError:
        return None
    return (w.how, w.at < since) if w.how else None
