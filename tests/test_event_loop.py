"""The referee's event loop (referee/event_loop.py): a game's own steps run after everything else that is ready, a
slice at a time, and nothing else changes. Orders only: no timing is asserted."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any

import referee
from referee.event_loop import RefereeLoop, as_game_work, game_work, run, wait_for
from referee.match import ChannelPool, EntrantRef, GameSpec, make_seats, play_game


def _on(loop_slice_s: float, main):
    with asyncio.Runner(loop_factory=lambda: RefereeLoop(loop_slice_s)) as runner:
        return runner.run(main())


def test_a_game_task_steps_after_the_prompt_lane() -> None:
    """Two tasks ready in the same turn, the game's first: the other runs first, each step of it."""
    order: list[str] = []

    async def game() -> None:
        with game_work():
            for i in range(3):
                order.append(f"game {i}")
                await asyncio.sleep(0)

    async def other() -> None:
        for i in range(3):
            order.append(f"other {i}")
            await asyncio.sleep(0)

    async def main() -> None:
        g = asyncio.create_task(game())
        await asyncio.sleep(0)  # the game task is marked and has taken its first step
        o = asyncio.create_task(other())
        await asyncio.gather(g, o)

    _on(1.0, main)
    # asyncio's own loop alternates (game 0, other 0, game 1, other 1, ...): here the other task's next step,
    # made ready in the same turn, goes ahead of the game's
    assert order.index("other 1") < order.index("game 1")
    assert [s for s in order if s.startswith("game")] == ["game 0", "game 1", "game 2"]


def _slices(slice_s: float) -> list[str]:
    """Two game tasks a step each at a time; a's second step makes a prompt callback ready."""
    order: list[str] = []

    async def game(name: str) -> None:
        loop = asyncio.get_running_loop()
        with game_work():
            await asyncio.sleep(0)  # from here on, in the bulk lane
            for i in range(3):
                if (name, i) == ("a", 1):
                    loop.call_soon(order.append, "prompt")
                order.append(f"{name} {i}")
                await asyncio.sleep(0)

    async def main() -> None:
        await asyncio.gather(game("a"), game("b"))

    _on(slice_s, main)
    return order


def test_a_slice_of_game_work_ends_the_turn_and_what_is_prompt_goes_next() -> None:
    """A slice of 0 runs one game step a turn, so the callback a step made ready runs before the next game step;
    a long slice runs every game step that was ready first, as asyncio does."""
    assert _slices(0.0) == ["a 0", "b 0", "a 1", "prompt", "b 1", "a 2", "b 2"]
    assert _slices(10.0) == ["a 0", "b 0", "a 1", "b 1", "prompt", "a 2", "b 2"]


def test_game_work_marks_only_while_it_lasts_and_only_once() -> None:
    async def main() -> tuple[bool, bool, bool]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, RefereeLoop)
        task = asyncio.current_task()
        assert task is not None
        with game_work():
            inside = loop._bulk.get(id(task)) is task
            with game_work():  # a game inside a game's task: the outer block keeps the mark
                pass
            still = loop._bulk.get(id(task)) is task
        return inside, still, id(task) in loop._bulk

    assert run(main()) == (True, True, False)


def test_game_work_on_another_loop_does_nothing() -> None:
    async def main() -> str:
        with game_work():
            await asyncio.sleep(0)
        return "done"

    assert asyncio.run(main()) == "done"


def test_a_game_plays_to_the_end_on_the_referee_loop() -> None:
    spec = GameSpec("loop-1", 7, (EntrantRef("a", policy="fallback"), EntrantRef("b", policy="random")))

    async def two() -> list[int]:
        results = await asyncio.gather(play_game(spec), play_game(spec))
        return [r.decisions for r in results]

    a, b = run(two())
    assert a == b > 0


def test_work_a_game_splits_over_tasks_steps_after_the_prompt_lane() -> None:
    """``as_game_work``: a task of the game's own (one per seat under gather) is in the bulk lane from its first
    step of work on, and a step it makes ready waits behind the prompt lane; on another loop it only awaits."""
    order: list[str] = []

    async def seat_work() -> str:
        for i in range(3):
            order.append(f"game {i}")
            await asyncio.sleep(0)
        return "done"

    async def other() -> None:
        for i in range(4):
            order.append(f"other {i}")
            await asyncio.sleep(0)

    async def main() -> list[object]:
        return await asyncio.gather(as_game_work(seat_work), other())

    assert _on(1.0, main)[0] == "done"
    # The first turn runs the prompt lane's rounds (PROMPT_ROUNDS: main's, then each step of the other task that the
    # one before made ready, while the game's task only marks itself), then one step of the game's work; from then
    # on each of its steps waits behind the other task's. asyncio's own loop would alternate them.
    assert order == ["other 0", "other 1", "other 2", "game 0", "other 3", "game 1", "game 2"]
    order.clear()
    assert asyncio.run(main())[0] == "done"  # asyncio's own loop: plain alternation
    assert order[:2] == ["game 0", "other 0"]


def test_work_cancelled_before_it_starts_never_runs_and_leaves_no_coroutine_unawaited(recwarn) -> None:
    ran: list[str] = []

    async def work() -> None:
        ran.append("ran")

    async def main() -> None:
        task = asyncio.create_task(as_game_work(work))
        await asyncio.sleep(0)  # its first step: marked, and waiting
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    _on(1.0, main)
    assert ran == []
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


class _Watched:
    """A built-in seat whose Hello, GameStart and GameOverNotice note whether they ran in the bulk lane."""

    def __init__(self, seat: Any, lanes: list[tuple[str, bool]]) -> None:
        self._seat, self._lanes = seat, lanes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._seat, name)

    def _note(self, what: str) -> None:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        self._lanes.append((what, isinstance(loop, RefereeLoop) and loop._bulk.get(id(task)) is task))

    async def connect(self) -> None:
        self._note("connect")
        await self._seat.connect()

    async def start(self, start: Any) -> None:
        self._note("start")
        await self._seat.start(start)

    async def decide(self, request: bytes, seq: int, allowance_s: float) -> Any:
        self._note("decide")
        return await self._seat.decide(request, seq, allowance_s)

    async def finish(self, notice: Any) -> None:
        self._note("finish")
        await self._seat.finish(notice)


def test_every_part_of_a_game_runs_in_the_bulk_lane() -> None:
    """The seats' Hellos, GameStarts and GameOverNotices run in tasks of their own (one per seat), and they are
    the game's work as much as its decisions: none of them may hold up the replies and timers of other games."""
    spec = GameSpec("loop-2", 7, (EntrantRef("a", policy="fallback"), EntrantRef("b", policy="random")))
    lanes: list[tuple[str, bool]] = []

    async def one() -> int:
        seats = [_Watched(s, lanes) for s in make_seats(spec, ChannelPool())]
        return (await play_game(spec, seats=seats)).decisions

    assert run(one()) > 0
    assert {what for what, _ in lanes} == {"connect", "start", "decide", "finish"}
    assert [what for what, bulk in lanes if not bulk] == []


def test_a_python_whose_asyncio_changed_plays_on_asyncios_own_loop(monkeypatch) -> None:
    """The lanes replace private parts of asyncio; where they are not as this Python has them, ``run`` falls back
    to asyncio's own loop."""
    import types

    import referee.event_loop as event_loop

    async def kind() -> str:
        return type(asyncio.get_running_loop()).__name__

    assert event_loop.supported() and run(kind()) == "RefereeLoop"

    class Renamed(asyncio.BaseEventLoop):
        def _call_soon(self, callback, args, context, *, eager=False):  # type: ignore[no-untyped-def, override]
            raise AssertionError("never called")

    class NoRunOnce:
        _call_soon = asyncio.BaseEventLoop._call_soon  # type: ignore[attr-defined]

    constants = {c: 1 for c in ("MAXIMUM_SELECT_TIMEOUT", "_MIN_SCHEDULED_TIMER_HANDLES")}
    assert not event_loop.supported(Renamed)
    assert not event_loop.supported(NoRunOnce)
    assert not event_loop.supported(module=types.SimpleNamespace(**constants))
    monkeypatch.setattr(event_loop, "supported", lambda: False)
    assert run(kind()) != "RefereeLoop"


def _cancelled_as_it_is_freed(wait) -> list[int]:
    """The loop turns after a notify at which a cancel of a task that ``wait``s on that condition was lost: the
    task was cancelled (``cancel()`` said True) and ended without CancelledError."""

    async def main() -> list[int]:
        lost = []
        for turns in range(8):
            freed = asyncio.Condition()

            async def waiter(c: asyncio.Condition = freed) -> None:
                async with c:
                    await wait(c.wait(), 60.0)

            task = asyncio.create_task(waiter())
            for _ in range(2):
                await asyncio.sleep(0)
            async with freed:
                freed.notify_all()
            for _ in range(turns):
                await asyncio.sleep(0)
            if task.cancel():
                try:
                    await task
                    lost.append(turns)
                except asyncio.CancelledError:
                    pass
        return lost

    return asyncio.run(main())


def test_a_cancel_that_comes_as_the_wait_ends_is_never_lost() -> None:
    """``wait_for`` (every timed wait of the referee's) lets a cancel through however it falls against the end of
    what it waits for. ``asyncio.wait_for`` on Python 3.11 returned the result instead (CPython gh-86296): a ladder
    stopped as one of its games freed a seat kept a game player running, which waited forever."""
    assert _cancelled_as_it_is_freed(wait_for) == []
    if sys.version_info < (3, 12):  # the fault the helper is there for, seen on the interpreter that has it
        assert _cancelled_as_it_is_freed(asyncio.wait_for) != []


def test_wait_for_gives_the_result_or_times_out() -> None:
    async def main() -> tuple[int, bool]:
        got = await wait_for(asyncio.sleep(0, 7), 5.0)
        try:
            await wait_for(asyncio.Event().wait(), 0.01)
        except TimeoutError:
            return got, True
        return got, False

    assert asyncio.run(main()) == (7, True)


def test_no_timed_wait_of_the_referee_uses_asyncio_wait_for() -> None:
    """Every timed wait goes through ``referee.event_loop.wait_for`` (above): the ladder's game players, the health
    prober, a seat's exit, the site's pages and live streams, the dial-in gateway."""
    root = Path(referee.__file__).parent
    uses = [str(p.relative_to(root)) for p in root.rglob("*.py") if "asyncio.wait_for(" in p.read_text()]
    assert uses == []
