"""``referee.tasks.cancel_and_wait``: a task abandoned from outside ends before the caller goes on, and a
cancellation of the caller while it waits is never taken for the task's."""

from __future__ import annotations

import asyncio

import pytest

from referee.tasks import cancel_and_wait


async def _slow_to_end(ending: asyncio.Event) -> None:
    try:
        await asyncio.sleep(3600)
    finally:
        await ending.wait()  # the task's own cleanup takes a while


def test_the_task_has_ended_when_the_caller_goes_on_and_its_cancellation_is_taken_in() -> None:
    async def go() -> None:
        ending = asyncio.Event()
        task = asyncio.create_task(_slow_to_end(ending))
        await asyncio.sleep(0)
        waiter = asyncio.create_task(cancel_and_wait(task))
        await asyncio.sleep(0)
        assert not waiter.done()  # still waiting for the task's cleanup
        ending.set()
        await waiter  # no CancelledError: the task's own
        assert task.cancelled()
        await cancel_and_wait(task)  # a task already done: nothing to do

    asyncio.run(go())


def test_a_caller_cancelled_while_it_waits_is_cancelled() -> None:
    """The case a validation game's cleanup lost: the caller (a SubmitBot whose client went away, a shutdown) is
    cancelled while it waits for an abandoned task to end; it must end cancelled, not carry on."""

    async def go() -> None:
        ending = asyncio.Event()
        task = asyncio.create_task(_slow_to_end(ending))
        await asyncio.sleep(0)
        carried_on = []

        async def caller() -> None:
            await cancel_and_wait(task)
            carried_on.append(True)

        c = asyncio.create_task(caller())
        await asyncio.sleep(0)
        c.cancel()
        ending.set()
        with pytest.raises(asyncio.CancelledError):
            await c
        assert carried_on == [] and task.cancelled()

    asyncio.run(go())


def test_a_task_that_fails_as_it_ends_raises_its_failure() -> None:
    async def go() -> None:
        async def fails_on_cancel() -> None:
            try:
                await asyncio.sleep(3600)
            finally:
                raise RuntimeError("cleanup failed")

        task = asyncio.create_task(fails_on_cancel())
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError, match="cleanup failed"):
            await cancel_and_wait(task)

    asyncio.run(go())
