"""asyncio's debug mode on the referee's loop: a callback's "created at" names the line that scheduled it, as on
asyncio's own loop (referee/event_loop.py replaces ``_call_soon``, which trims the loop's own frame off it).

Not in scripts/mutation.toml's tests for the event loop: mutmut's trampolines add their own frames between
``call_soon`` and ``_call_soon``, so under mutmut the unmutated loop would fail this test too."""

from __future__ import annotations

import asyncio
import sys

from referee.event_loop import RefereeLoop


def _made_at(loop: asyncio.AbstractEventLoop) -> list[tuple[str, int]]:
    loop.set_debug(True)
    try:
        line = sys._getframe().f_lineno + 1
        handles = [loop.call_soon(print), loop.call_later(1, print), loop.call_soon_threadsafe(print)]
        made = [h._source_traceback[-1][:2] for h in handles]  # type: ignore[attr-defined]
        for h in handles:
            h.cancel()
        assert all(m == (__file__, line) for m in made), (made, line)
        return made
    finally:
        loop.close()


def test_a_callback_is_said_to_be_made_where_it_was_scheduled() -> None:
    assert _made_at(RefereeLoop()) == _made_at(asyncio.SelectorEventLoop())
