"""exits.py, alone: how long a broken seat waits to hear how its command bot's process ended."""

from __future__ import annotations

import asyncio
import time

from referee.match import exits

HOW = "the bot's process exited with code 7"


def test_a_seat_waits_for_the_words_of_an_end_that_is_certain() -> None:
    """The process is gone (its group runs nothing) but the runner hears of it only after 1.5 s, later than the
    1 s a seat waits while the process may still run (as on a loaded machine): the fault still names the crash."""

    async def go() -> tuple[object, object]:
        exits.watch("gone:1", alive=lambda: False)
        exits.watch("running:1", alive=lambda: True)
        loop = asyncio.get_running_loop()
        loop.call_later(1.5, exits.exited, "gone:1", HOW)
        loop.call_later(1.5, exits.exited, "running:1", HOW)
        try:
            return await asyncio.gather(exits.note("gone:1"), exits.note("running:1"))
        finally:
            exits.forget("gone:1")
            exits.forget("running:1")

    gone, running = asyncio.run(go())
    assert gone == HOW
    assert running is None  # a process that still runs: the seat does not wait on it longer than WAIT_S


def test_a_stopped_bot_wakes_a_seat_waiting_on_it() -> None:
    async def go() -> tuple[object, float]:
        exits.watch("stopped:1", alive=lambda: False)
        asyncio.get_running_loop().call_later(0.2, exits.forget, "stopped:1")
        t0 = time.monotonic()
        said = await exits.ended_since("stopped:1", t0)
        return said, time.monotonic() - t0

    said, waited = asyncio.run(go())
    assert said is None and waited < exits.DEAD_WAIT_S / 2
