"""The site on a thread and event loop of its own, so that a busy site cannot delay the gRPC service (docs/web.md,
"Speed"; the measurements in docs/notes/2026-12-06-site-loop.md).

uvicorn, Starlette's routing and middleware, the sessions and the forms run on the site's thread. What a page
shows lives on the service's loop (its store connection, the registry, the standings, the live hub): each route's
handler runs there, as bulk work of the referee loop (``referee.event_loop``: the loop's prompt lane, gRPC's I/O and
handlers, goes first in each turn), and returns a ``Page``, which is rendered as it is sent: in a render process
(render.py), or on the site's thread. A handler's context must be values the loop will not change after it returns,
and that pickle can copy to a render process.

- ``on_service(loop, route)``: the route with its handler run on the service's ``loop``; a streamed body (a live
  update) is read there too, one item at a time.
- ``site_thread``: marks a handler that runs on the site's thread instead (one that reads the request's body,
  which only the site's loop can receive: the sign-in forms). It may not touch the service's loop-bound state.
- ``Page``: an HTML response rendered when it is sent (render.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from referee.event_loop import as_game_work

T = TypeVar("T")
Handler = Callable[[Request], Awaitable[Response]]
_DONE = object()


def site_thread(handler: T) -> T:
    """Mark ``handler`` to run on the site's own thread."""
    handler.site_thread = True  # type: ignore[attr-defined]  # read back by on_service
    return handler


async def run_on(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, T]) -> T:
    """``await work`` on ``loop`` (another thread's); cancelling the wait cancels the work."""
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, loop))


async def _read_there(loop: asyncio.AbstractEventLoop, body: AsyncIterable[Any]) -> AsyncIterator[Any]:
    """A streamed body made on ``loop`` (a live update's generator, which waits on the hub there), item by item.
    When the reader leaves mid-item, the step in progress is cancelled and the generator closed there, so that
    its ``finally`` (a hub unsubscribed) runs on ``loop``."""
    items = aiter(body)
    stepping: list[asyncio.Task[Any]] = []  # the step in progress, on ``loop``

    async def step() -> Any:
        stepping[:] = [asyncio.current_task()]  # type: ignore[list-item]  # a coroutine run as a task has one
        try:
            return await items.__anext__()
        except StopAsyncIteration:
            return _DONE

    async def close() -> None:
        if stepping and not stepping[0].done():
            stepping[0].cancel()
            await asyncio.wait(stepping)  # the generator ends with the step
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            await aclose()

    try:
        while (item := await run_on(loop, step())) is not _DONE:
            yield item
    finally:  # not awaited: a reader who left cancels every wait here (Starlette's cancel scope), not the close
        # the close is made there, when the loop runs it: a loop that stops first leaves no close unawaited; a
        # closed loop refuses it (RuntimeError), and nothing is left to close
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_start, close)


_CLOSING: set[asyncio.Task[None]] = set()  # closes under way (a loop holds its tasks only weakly)


def _start(close: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``close()`` as a task of the running loop, held until it ends."""
    task = asyncio.get_running_loop().create_task(close())
    _CLOSING.add(task)
    task.add_done_callback(_CLOSING.discard)


def on_service(loop: asyncio.AbstractEventLoop, route: BaseRoute) -> BaseRoute:
    """``route`` with its handler run on the service's ``loop``, unless marked ``site_thread`` (or not a Route)."""
    if not isinstance(route, Route) or getattr(route.endpoint, "site_thread", False):
        return route
    handler: Handler = route.endpoint

    async def bridged(request: Request) -> Response:
        response = await run_on(loop, as_game_work(handler, request))
        if isinstance(response, StreamingResponse):
            response.body_iterator = _read_there(loop, response.body_iterator)
        return response

    return Route(route.path, bridged, methods=list(route.methods or ()), name=route.name)


class Page(HTMLResponse):
    """An HTML response whose body is rendered as it is sent: by ``there()`` (a render process, render.py) when
    given, else by ``make()`` on the site's thread; ``started`` (perf_counter) is when the request came, for its
    Server-Timing."""

    def __init__(
        self, make: Callable[[], str], status_code: int, started: float,
        there: Callable[[], Awaitable[str]] | None = None,
    ) -> None:  # fmt: skip
        super().__init__(b"", status_code)
        self.make, self.started, self.there = make, started, there
        del self.headers["content-length"]  # set once the body is made

    def rendered(self, text: str | None = None) -> Page:
        """Render now (an error page that must not fail while it is sent), or take ``text``, rendered already."""
        self.body = (self.make() if text is None else text).encode()
        self.headers["content-length"] = str(len(self.body))
        self.headers["server-timing"] = f"app;dur={(time.perf_counter() - self.started) * 1000:.1f}"
        return self

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if "content-length" not in self.headers:
            self.rendered(None if self.there is None else await self.there())
        await super().__call__(scope, receive, send)
