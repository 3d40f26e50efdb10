"""The referee's event loop (referee/event_loop.py) on a clock the test keeps: each poll for I/O moves the clock by
its timeout instead of waiting, and a game's step costs the time the test says. So what a turn runs, when a timer
fires and how long a slice lasts are exact on any machine, however loaded; nothing here reads a real clock.

Without game work ``RefereeLoop`` is asyncio's own ``_run_once`` (the same timers at the same moments, the same
polls, the same cancelled timers dropped, the same debug mode): the parity tests run one scenario on both loops and
compare all of it. With game work, a due timer waits at most one slice of it."""

from __future__ import annotations

import asyncio
import logging
import re
from asyncio import events
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest

import referee.event_loop as event_loop
from referee.event_loop import BULK_SLICE_S, PROMPT_ROUNDS, RefereeLoop, game_work, run

START = 1024.0  # a float whose small binary fractions add exactly


class Rig:
    """A loop whose clock moves only when the test spends time or the loop polls with a timeout."""

    def __init__(self, loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
        self.loop: Any = loop
        self.now = START
        self.polls: list[float | None] = []  # the timeout of each poll for I/O
        self.trace: list[tuple[str, float]] = []  # (what ran, the clock then)
        self.idle = False  # whether a poll may wait for ever (else it fails the test: nothing would wake it)
        loop.time = self.clock  # type: ignore[method-assign]
        loop._clock_resolution = 2**-10  # type: ignore[attr-defined]
        monkeypatch.setattr(event_loop, "time", SimpleNamespace(monotonic=self.clock))  # the slice's clock
        loop.set_exception_handler(lambda _, context: self.trace.append((f"error: {context['message']}", self.now)))
        real = self.loop._selector
        self.real_select = real.select

        def select(timeout: float | None = None) -> list[Any]:
            self.polls.append(timeout)
            if timeout is None and not self.idle:
                raise AssertionError("the loop would wait for I/O for ever")
            self.now += timeout or 0.0
            return self.real_select(0)

        real.select = select

    def clock(self) -> float:
        return self.now

    def spend(self, seconds: float) -> None:
        self.now += seconds

    def note(self, what: str) -> Callable[[], None]:
        return lambda: self.trace.append((what, self.now))

    def turns(self, n: int) -> None:
        """Run ``n`` turns of the loop by hand (as run_forever would, one after another)."""
        events._set_running_loop(self.loop)
        try:
            for _ in range(n):
                self.loop._run_once()
        finally:
            events._set_running_loop(None)

    def close(self) -> None:
        del self.loop._selector.select
        self.loop.close()


@contextmanager
def rig(loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    r = Rig(loop, monkeypatch)
    try:
        yield r
    finally:
        r.close()


def both(monkeypatch: pytest.MonkeyPatch, scenario: Callable[[Rig], Any]) -> None:
    """``scenario`` on asyncio's own loop and on a RefereeLoop: the same result."""
    seen = []
    for loop in (asyncio.SelectorEventLoop(), RefereeLoop()):
        with rig(loop, monkeypatch) as r:
            seen.append((scenario(r), r.trace, r.polls))
    assert seen[1] == seen[0]


# --- without game work: asyncio's own loop --------------------------------------------------------------------


def test_timers_fire_when_due_as_on_asyncios_loop(monkeypatch) -> None:
    """A timer runs in the turn whose poll ends less than the clock's resolution before it is due; the poll
    waits until the first timer (at most a day); something ready, or a stop asked, polls without waiting."""

    def scenario(r: Rig) -> list[Any]:
        loop, res = r.loop, r.loop._clock_resolution
        timers = [("past", START - 1), ("now", START), ("within", START + res / 2), ("at resolution", START + res),
                  ("later", START + 0.25), ("next day", START + 2 * 86400.0)]  # fmt: skip
        for what, when in timers:
            loop.call_at(when, r.note(what))
        loop.call_soon(r.note("soon"))
        r.turns(4)
        loop.stop()
        r.turns(1)  # nothing ready but the stop: no wait
        loop._stopping = False
        r.turns(1)  # the next day's timer, a day's poll away at most
        return [len(loop._scheduled)]

    both(monkeypatch, scenario)


def test_cancelled_timers_are_dropped_as_on_asyncios_loop(monkeypatch) -> None:
    """Cancelled timers at the head of the heap are dropped; once more than 100 are scheduled and more than half of
    them are cancelled, all the cancelled ones are; a timer cancelled after it ran counts for nothing."""

    def scenario(r: Rig) -> list[Any]:
        loop, seen = r.loop, []
        for total, cancel in [(101, 51), (100, 60), (200, 100), (150, 149)]:
            timers = [loop.call_at(r.now + 1000 + i, r.note(f"t{i}")) for i in range(total)]
            for t in timers[-cancel:]:  # not at the head of the heap
                t.cancel()
            loop.call_soon(r.note("ready"))  # polls without waiting: the timers stay in the future
            r.turns(1)
            seen.append((len(loop._scheduled), loop._timer_cancelled_count))
            for t in timers:
                t.cancel()
            loop.call_soon(r.note("ready"))
            r.turns(1)
            seen.append((len(loop._scheduled), loop._timer_cancelled_count))
        ran = loop.call_at(START, r.note("ran"))
        r.turns(1)
        ran.cancel()
        loop.call_soon(r.note("after"))
        r.turns(1)
        seen.append((len(loop._scheduled), loop._timer_cancelled_count))
        head = loop.call_later(0.5, r.note("head"))
        loop.call_later(1.0, r.note("second"))
        head.cancel()
        r.turns(1)  # the cancelled head is dropped; the poll waits for the second
        seen.append((len(loop._scheduled), loop._timer_cancelled_count))
        return seen

    both(monkeypatch, scenario)


def test_a_cancelled_callback_does_not_run(monkeypatch) -> None:
    """Nor fails: a cancelled handle has no callback left to call (its run would report an error)."""

    def scenario(r: Rig) -> None:
        r.loop.call_soon(r.note("kept"))
        r.loop.call_soon(r.note("cancelled")).cancel()
        r.loop.call_soon(r.note("kept too"))
        r.turns(1)

    both(monkeypatch, scenario)


def test_debug_mode_names_a_slow_callback_where_it_was_made(monkeypatch, caplog) -> None:
    """asyncio's debug mode: a callback that took the loop's slow_callback_duration or more is logged with where it
    was made (the caller of call_soon, not the loop), and the loop knows which callback it runs."""

    def scenario(r: Rig) -> list[Any]:
        loop = r.loop
        loop.set_debug(True)
        loop.slow_callback_duration = 2**-3
        current = []
        start = len(caplog.records)
        for spent in (2**-4, 2**-3, 2**-2):
            loop.call_soon(lambda s=spent: (r.spend(s), current.append(loop._current_handle is not None)))
        r.turns(1)
        loop.set_debug(False)
        loop.call_soon(r.spend, 1.0)
        r.turns(1)
        said = [re.sub(r" created at \S+", "", m.getMessage()) for m in caplog.records[start:]]
        return [current, loop._current_handle, said]

    with caplog.at_level(logging.WARNING, logger="asyncio"):
        both(monkeypatch, scenario)
    took = [m.getMessage().rsplit(" took ", 1)[1] for m in caplog.records]
    assert took == ["0.125 seconds", "0.250 seconds"] * 2  # the callbacks of 1/8 s and 1/4 s, on each loop


def test_callbacks_made_ready_by_callbacks_run_in_the_same_turn_up_to_a_limit(monkeypatch) -> None:
    """Unlike asyncio's loop (one round a turn), a turn runs the prompt callbacks that prompt ones made ready, up to
    PROMPT_ROUNDS rounds, so a reply's reader woken by gRPC's I/O runs in that I/O's turn."""
    with rig(RefereeLoop(), monkeypatch) as r:

        def chain(i: int) -> None:
            r.trace.append((f"c{i}", len(r.polls)))
            if i < 2 * PROMPT_ROUNDS:
                r.loop.call_soon(chain, i + 1)

        r.loop.call_soon(chain, 0)
        r.turns(3)
    turn = [n for _, n in r.trace]
    assert turn == [1] * PROMPT_ROUNDS + [2] * PROMPT_ROUNDS + [3]


# --- game work: the bulk lane ---------------------------------------------------------------------------------


def _games(r: Rig, games: int, steps: int, cost_s: float, timers: list[float]) -> dict[str, Any]:
    """``games`` tasks of game work, each ``steps`` steps costing ``cost_s``; timers due at the ``timers`` offsets
    note their lateness. Returns each game's steps in order, the timers' lateness and the steps run per poll."""
    order: dict[int, list[int]] = {g: [] for g in range(games)}
    late: list[float] = []
    per_poll: list[int] = []
    polls = [0]

    async def game(g: int) -> None:
        with game_work():
            await asyncio.sleep(0)  # from here on, in the bulk lane
            for i in range(steps):
                if len(r.polls) != polls[0]:
                    polls[0] = len(r.polls)
                    per_poll.append(0)
                per_poll[-1] += 1
                order[g].append(i)
                r.spend(cost_s)
                await asyncio.sleep(0)

    async def main() -> None:
        for dt in timers:
            when = r.now + dt
            r.loop.call_at(when, lambda w=when: late.append(r.now - w))
        await asyncio.gather(*(game(g) for g in range(games)))

    r.loop.run_until_complete(main())
    return {"order": order, "late": late, "per_poll": per_poll}


def test_a_due_timer_waits_at_most_one_slice_of_game_work(monkeypatch) -> None:
    """64 games whose steps cost 0.4 ms each: a deadline (a timer) fires after at most the slice under way (1 ms and
    the step that crosses it), where asyncio's loop makes it wait for a whole round of the 64 games' steps."""
    timers = [0.005, 0.0123, 0.0301]
    with rig(RefereeLoop(), monkeypatch) as r:
        lanes = _games(r, 64, 5, 0.0004, timers)
    with rig(asyncio.SelectorEventLoop(), monkeypatch) as r:
        plain = _games(r, 64, 5, 0.0004, timers)
    assert lanes["order"] == plain["order"] == {g: list(range(5)) for g in range(64)}  # the same work, in order
    assert len(lanes["late"]) == 3 and max(lanes["late"]) <= BULK_SLICE_S + 0.0004 + 1e-9, lanes["late"]
    assert max(plain["late"]) > 20 * BULK_SLICE_S, plain["late"]
    # the default slice is BULK_SLICE_S: three 0.4 ms steps reach 1 ms, then the loop polls again
    assert set(lanes["per_poll"][1:-1]) == {3}, lanes["per_poll"]


@pytest.mark.parametrize(("slice_s", "per_turn"), [(2**-10, 2), (2**-10 + 2**-12, 3), (0.0, 1), (1.0, 32)])
def test_a_slice_ends_when_the_clock_reaches_it(monkeypatch, slice_s: float, per_turn: int) -> None:
    """Steps of half a slice: the second ends the slice (the clock reached its end, even on a clock too coarse to
    have moved past it); a slice of 0 runs one step a turn (at least one); a long one every step ready."""
    with rig(RefereeLoop(slice_s), monkeypatch) as r:
        seen = _games(r, 32, 4, 2**-11, [])
    assert set(seen["per_poll"][1:-1]) <= {per_turn} and seen["per_poll"][1] == per_turn, seen["per_poll"]


def test_the_loop_does_not_wait_for_io_while_game_work_is_ready(monkeypatch) -> None:
    """Nothing prompt is ready, only game steps, and the next timer is far off: the loop polls without waiting."""
    with rig(RefereeLoop(0.0), monkeypatch) as r:
        seen = _games(r, 2, 3, 0.0, [3600.0])
        assert r.now == START  # the clock never moved: no poll waited
    assert seen["late"] == [] and r.polls and set(r.polls) == {0}


def _woken(loop: asyncio.AbstractEventLoop) -> list[str]:
    """A game task waits for its seat's answer; a prompt callback gives it, then makes more prompt work ready."""
    order: list[str] = []

    async def main() -> None:
        answer = loop.create_future()

        async def game() -> None:
            with game_work():
                await answer
                order.append("game")

        task = asyncio.ensure_future(game())
        await asyncio.sleep(0)  # the game task waits for its answer

        def reader() -> None:
            answer.set_result(1)  # the game task's wake-up is ready first
            loop.call_soon(order.append, "prompt")

        loop.call_soon(reader)
        await task

    loop.run_until_complete(main())
    loop.close()
    return order


def test_a_game_woken_by_its_answer_steps_after_the_prompt_work_of_its_turn() -> None:
    assert _woken(asyncio.SelectorEventLoop()) == ["game", "prompt"]  # asyncio's: in the order they became ready
    assert _woken(RefereeLoop()) == ["prompt", "game"]


def test_closing_the_loop_forgets_its_game_tasks() -> None:
    loop = RefereeLoop()
    task = loop.create_task(asyncio.sleep(0))
    assert loop.mark_bulk(task) and not loop.mark_bulk(task)
    loop.run_until_complete(task)
    loop._bulk_ready.append(object())
    loop.close()
    assert not loop._bulk and not loop._bulk_ready


def test_run_passes_debug_on() -> None:
    async def debug() -> bool:
        return asyncio.get_running_loop().get_debug()

    assert run(debug(), debug=True) is True
    assert run(debug(), debug=False) is False


def test_a_game_task_keeps_its_own_context_across_its_steps() -> None:
    """A task's steps run in the task's own context (structlog's bound game id lives there), in either lane, and a
    callback scheduled with a context runs in it."""
    import contextvars

    game = contextvars.ContextVar("game", default="none")
    seen: list[tuple[str, str]] = []

    async def play(name: str) -> None:
        game.set(name)
        with game_work():
            for _ in range(3):
                await asyncio.sleep(0)
                seen.append((name, game.get()))

    async def main() -> None:
        ctx = contextvars.copy_context()
        ctx.run(game.set, "given")
        done = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(lambda: done.set_result(game.get()), context=ctx)
        await asyncio.gather(play("a"), play("b"))
        seen.append(("callback", await done))

    run(main())
    assert sorted(seen) == sorted([("a", "a")] * 3 + [("b", "b")] * 3 + [("callback", "given")])


def test_with_nothing_to_do_the_loop_waits_on_io_without_a_timeout(monkeypatch) -> None:
    """No callback ready and no timer: the loop waits on I/O for as long as it takes (a timeout of None), as
    asyncio's does."""

    def scenario(r: Rig) -> None:
        r.idle = True
        r.loop.call_soon(r.note("once"))
        r.turns(2)

    both(monkeypatch, scenario)


def test_a_python_whose_loop_has_no_call_soon_is_not_supported() -> None:
    class Gone:
        def _run_once(self) -> None:
            raise AssertionError("never called")

    assert not event_loop.supported(Gone)
