"""A seat's requests go out together with the other games' of the same turn (remote._Writes): the decisions that
asked in one turn are let go together at the next, and one cancelled decision holds back no other."""

from __future__ import annotations

import asyncio

from referee.match.remote import _writes_of


def test_the_decisions_that_asked_in_one_turn_go_together_at_the_next() -> None:
    order: list[str] = []

    async def decision(name: str) -> None:
        loop = asyncio.get_running_loop()
        await _writes_of(loop).turn(loop)
        order.append(f"{name} writes")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(decision(n)) for n in "ab"]
        loop.call_soon(order.append, "a turn")  # made ready after the tasks' first steps: runs before their writes
        await asyncio.gather(*tasks)
        await decision("c")  # a later decision asks afresh and is let go too

    asyncio.run(main())
    assert order == ["a turn", "a writes", "b writes", "c writes"]


def test_a_cancelled_decision_holds_back_no_other() -> None:
    async def main() -> list[bool]:
        loop = asyncio.get_running_loop()
        writes = _writes_of(loop)
        first, second = writes.turn(loop), writes.turn(loop)
        first.cancel()
        await second
        return [first.cancelled(), second.done() and not second.cancelled()]

    assert asyncio.run(main()) == [True, True]


def test_each_loop_has_its_own_batch() -> None:
    async def batch() -> object:
        return _writes_of(asyncio.get_running_loop())

    async def twice() -> bool:
        return await batch() is await batch()

    assert asyncio.run(twice())
    assert asyncio.run(batch()) is not asyncio.run(batch())
