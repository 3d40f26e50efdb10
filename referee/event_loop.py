"""The event loop of a process that plays games (docs/match.md, "Stalls: what the monitor measures").

Every entry point that plays games runs its loop with ``run`` (as it calls ``gc_policy.tune_gc``): the ``abluxx``
commands that play and a tournament's worker process. A Ray actor runs on Ray's own loop and a test on pytest's:
the runner plays the same on any asyncio loop, only without the order below.

Why: asyncio's loop runs, in each turn, every callback that was ready when the turn began, in the order they
became ready, and a timer that falls due or a reply that arrives during a turn waits for its end and then for
the whole next turn. One loop that plays 64 saturated games runs turns of about 64 decisions (6-25 ms of CPU),
and every bot's clock runs on through them: its reply is timed by the seat's reader task, which waited its turn
behind every other game's work.

``RefereeLoop`` is asyncio's selector loop with two lanes. A game's own steps (the task that plays a game,
``game_work``: building a request, the engine, the record) are the bulk lane; everything else is the prompt lane:
I/O (gRPC's completion queue), timers (a seat's deadline, the runner's lag monitor), the Play streams' reader
tasks that time each reply, gRPC's own tasks, a server's handlers. Each turn runs the prompt lane first, then
bulk steps for at most ``BULK_SLICE_S``, then polls again. So a reply is timed, and a deadline fires, within about
one slice of its moment however many games the loop plays; the games' own work is as much as before, in the same
order, only cut into slices.
"""

from __future__ import annotations

import asyncio
import heapq
import inspect
import time
from asyncio import base_events as _base_events
from asyncio import events
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
_asyncio: Any = _base_events  # the constants and helpers of asyncio's own ``_run_once`` (not in typeshed)

BULK_SLICE_S = 0.001  # the bulk lane's share of one turn (seconds of the loop's clock)
PROMPT_ROUNDS = 4  # prompt callbacks that prompt ones made ready (a reply's reader after gRPC's I/O) run in the
# same turn, up to this many rounds


class RefereeLoop(asyncio.SelectorEventLoop):
    """asyncio's selector loop, whose tasks marked by ``game_work`` run after everything else in each turn, for at
    most ``slice_s`` of it (at least one step)."""

    # asyncio's BaseEventLoop's own state, which typeshed does not declare
    _ready: deque[Any]
    _scheduled: list[Any]
    _stopping: bool
    _debug: bool
    _current_handle: Any
    _timer_cancelled_count: int
    _clock_resolution: float
    _selector: Any
    _process_events: Callable[[Any], None]

    def __init__(self, slice_s: float = BULK_SLICE_S) -> None:
        super().__init__()
        self.slice_s = slice_s
        self._bulk: dict[int, asyncio.Task[Any]] = {}  # id -> task: the bulk lane's tasks
        self._bulk_ready: deque[Any] = deque()

    def mark_bulk(self, task: asyncio.Task[Any]) -> bool:
        """Put ``task``'s steps in the bulk lane; False when they were there already."""
        if self._bulk.get(id(task)) is task:
            return False
        self._bulk[id(task)] = task
        return True

    def unmark_bulk(self, task: asyncio.Task[Any]) -> None:
        if self._bulk.get(id(task)) is task:
            del self._bulk[id(task)]

    def _call_soon(self, callback: Callable[..., object], args: Any, context: Any) -> events.Handle:
        # A task's step and its wake-up are its bound methods: ``__self__`` is the task.
        handle: Any = events.Handle(callback, args, self, context)
        if handle._source_traceback:
            del handle._source_traceback[-1]
        owner = getattr(callback, "__self__", None)
        if owner is not None and self._bulk.get(id(owner)) is owner:
            self._bulk_ready.append(handle)
        else:
            self._ready.append(handle)
        return handle

    def close(self) -> None:
        super().close()
        self._bulk_ready.clear()
        self._bulk.clear()

    def _run_once(self) -> None:
        """One turn: poll I/O (without waiting while anything is ready), move the due timers to the prompt lane, run
        the prompt lane, then the bulk lane for one slice. asyncio's own ``_run_once`` with a second queue."""
        self._drop_cancelled_timers()
        timeout = None
        if self._ready or self._bulk_ready or self._stopping:
            timeout = 0.0
        elif self._scheduled:
            timeout = min(max(0.0, self._scheduled[0]._when - self.time()), _asyncio.MAXIMUM_SELECT_TIMEOUT)
        self._process_events(self._selector.select(timeout))
        end_time = self.time() + self._clock_resolution
        scheduled, ready = self._scheduled, self._ready
        while scheduled and scheduled[0]._when < end_time:
            handle = heapq.heappop(scheduled)
            handle._scheduled = False
            ready.append(handle)
        for _ in range(PROMPT_ROUNDS):
            if not ready:
                break
            for _ in range(len(ready)):
                self._run_handle(ready.popleft())
        bulk = self._bulk_ready
        if bulk:
            clock = time.monotonic
            end = clock() + self.slice_s
            for _ in range(len(bulk)):
                self._run_handle(bulk.popleft())
                if clock() >= end or not bulk:
                    break

    def _drop_cancelled_timers(self) -> None:
        """As asyncio's ``_run_once`` begins: cancelled timers off the heap."""
        scheduled = self._scheduled
        count = len(scheduled)
        if (
            count > _asyncio._MIN_SCHEDULED_TIMER_HANDLES
            and self._timer_cancelled_count / count > _asyncio._MIN_CANCELLED_TIMER_HANDLES_FRACTION
        ):
            kept = []
            for handle in scheduled:
                if handle._cancelled:
                    handle._scheduled = False
                else:
                    kept.append(handle)
            heapq.heapify(kept)
            self._scheduled = kept
            self._timer_cancelled_count = 0
            return
        while scheduled and scheduled[0]._cancelled:
            self._timer_cancelled_count -= 1
            handle = heapq.heappop(scheduled)
            handle._scheduled = False

    def _run_handle(self, handle: Any) -> None:
        if handle._cancelled:
            return
        if not self._debug:
            handle._run()
            return
        try:  # asyncio's debug mode: name a slow callback
            self._current_handle = handle
            t0 = self.time()
            handle._run()
            dt = self.time() - t0
            if dt >= self.slow_callback_duration:
                _asyncio.logger.warning("Executing %s took %.3f seconds", _asyncio._format_handle(handle), dt)
        finally:
            self._current_handle = None


@contextmanager
def game_work() -> Iterator[None]:
    """The current task's steps go in the bulk lane until the block ends (nothing on another loop)."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    if not isinstance(loop, RefereeLoop) or task is None or not loop.mark_bulk(task):
        yield
        return
    try:
        yield
    finally:
        loop.unmark_bulk(task)


async def as_game_work(work: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``await work(*args)`` in the bulk lane, from a task of its own: a game's work split over tasks, such as one
    per seat under ``asyncio.gather`` (the seats' Hellos, GameStarts and GameOverNotices), is the game's work too,
    and a lane belongs to a task, not to the code it runs. Its first step is only the marking: a task's first step
    is scheduled before it can be marked, so it yields once, and what ``work`` does runs in the bulk lane.
    ``work`` is called here, not by the caller, so a task cancelled before it runs leaves no coroutine unawaited."""
    loop = asyncio.get_running_loop()
    if not isinstance(loop, RefereeLoop):
        return await work(*args)
    with game_work():
        await asyncio.sleep(0)
        return await work(*args)


def supported(base: type = asyncio.BaseEventLoop, module: Any = _base_events) -> bool:
    """Whether this Python's asyncio has the private parts ``RefereeLoop`` replaces, as 3.11 to 3.13 have them:
    ``_run_once``, ``_call_soon(callback, args, context)`` and the constants of its timer heap. A Python that
    changed them plays on asyncio's own loop (as a Ray actor does) rather than on a loop that half works.
    ``base`` and ``module``: asyncio's loop class and its module, or what a test puts in their place."""
    call_soon = getattr(base, "_call_soon", None)
    constants = ("MAXIMUM_SELECT_TIMEOUT", "_MIN_SCHEDULED_TIMER_HANDLES", "_MIN_CANCELLED_TIMER_HANDLES_FRACTION")
    return (
        callable(getattr(base, "_run_once", None))
        and call_soon is not None
        and list(inspect.signature(call_soon).parameters) == ["self", "callback", "args", "context"]
        and all(hasattr(module, c) for c in constants)
    )


def run(main: Coroutine[Any, Any, T], *, debug: bool | None = None) -> T:
    """``asyncio.run(main)`` on a ``RefereeLoop`` (on asyncio's own loop where ``supported()`` says no)."""
    factory = RefereeLoop if supported() else None  # None: asyncio's own
    with asyncio.Runner(debug=debug, loop_factory=factory) as runner:
        return runner.run(main)


async def wait_for(work: Awaitable[T], timeout: float | None) -> T:
    """``await work``, raising TimeoutError after ``timeout`` seconds (None: no limit): ``asyncio.wait_for`` without
    Python 3.11's fault, which loses a cancel that comes as ``work`` finishes (it returns the result, and the
    cancelled task runs on: a ladder's game player stopped just as a game freed a seat kept playing or waited
    forever; CPython gh-86296, fixed in 3.12). ``asyncio.timeout`` lets every cancel but its own through."""
    async with asyncio.timeout(timeout):
        return await work
