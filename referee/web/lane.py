"""Keeping the site's work from delaying the gRPC service on the event loop they share (docs/web.md, "Speed";
the measurements in docs/notes/2026-12-06-site-loop.md).

- ``PageLane`` puts every site request's task in the referee loop's bulk lane (``referee.event_loop``): each turn
  of the loop runs the prompt lane first (gRPC's I/O and handlers, timers, the bots' replies), then bulk steps
  (pages, and the games' own work) for at most a slice. A burst of page readers then queues behind gRPC calls, not
  in front of them.
- ``Page`` is a page whose template is rendered on a thread when the response is sent, not on the loop: the loop
  gathers what the page shows (the store, the standings) and the thread turns it into HTML. A render of a big
  page no longer holds the loop for its whole length; a gRPC call waits at most for Python's thread switch
  (``sys.getswitchinterval()``). One thread renders every page. What a page is given must be values the loop
  will not change meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from referee.event_loop import game_work

# One thread renders every page, in turn: more would only take turns at the interpreter's lock, each turn a wait
# for the loop's thread.
RENDERER = ThreadPoolExecutor(1, thread_name_prefix="site-render")


class PageLane:
    """Every HTTP request of ``app`` in the bulk lane of the referee loop (a no-op on any other loop)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        with game_work():
            await asyncio.sleep(0)  # a task's first step was scheduled before it was marked: yield once
            await self.app(scope, receive, send)


class Page(HTMLResponse):
    """An HTML response whose body ``make()`` renders on a thread as it is sent; ``started`` (perf_counter) is
    when the request came, for its Server-Timing."""

    def __init__(self, make: Callable[[], str], status_code: int, started: float) -> None:
        super().__init__(b"", status_code)
        self.make, self.started = make, started
        del self.headers["content-length"]  # set once the body is made

    def rendered(self) -> Page:
        """Render now, on the calling thread (an error page that must not fail while it is sent)."""
        self._body(self.make())
        return self

    def _body(self, text: str) -> None:
        self.body = text.encode()
        self.headers["content-length"] = str(len(self.body))
        self.headers["server-timing"] = f"app;dur={(time.perf_counter() - self.started) * 1000:.1f}"
        self.make = lambda: text

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if "content-length" not in self.headers:
            self._body(await asyncio.get_running_loop().run_in_executor(RENDERER, self.make))
        await super().__call__(scope, receive, send)
