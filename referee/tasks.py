"""Ending an asyncio task from outside it (``cancel_and_wait``), in the one way every caller needs."""

from __future__ import annotations

import asyncio


async def cancel_and_wait(task: asyncio.Task) -> None:
    """Cancels ``task`` (unless it is done) and waits until it has ended, taking in its own CancelledError. A
    cancellation of the caller itself while it waits (a shutdown, an RPC whose client went away) is not the task's:
    it is raised, so the caller stops as it was told to. A failure of the task is raised as well; a caller that
    abandons the task whatever it did takes that in itself."""
    if task.done():
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        if (me := asyncio.current_task()) is not None and me.cancelling():
            raise
