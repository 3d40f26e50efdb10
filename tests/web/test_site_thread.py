"""The site's thread and the service's loop (referee/web/thread.py), in-process with two real event loops on two
threads: a handler runs on the service's loop, a form's on the site's, a streamed body is read on the service's
loop item by item, and a page is rendered on the site's thread as it is sent."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import Iterator

import pytest
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, Router

from referee.web import thread as thread_mod
from referee.web.thread import Page, _read_there, on_service, site_thread


@pytest.fixture
def service_loop() -> Iterator[tuple[asyncio.AbstractEventLoop, int]]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop, thread.ident or 0
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def _run(main) -> tuple[object, int]:
    """``asyncio.run(main())`` on a thread of its own, the site's here (Playwright's sync API, which the browser
    tests of this package leave open, keeps a loop running on the test's thread); (its result, that thread)."""
    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(asyncio.run(main())))
    thread.start()
    thread.join(120)
    assert out, "the site's loop did not finish"
    return out[0], thread.ident or 0


async def _call(app, method: str, path: str, body: bytes = b"", leaves: bool = False) -> tuple[int, bytes]:
    """The app's answer to one request; a client that ``leaves`` goes once a piece of the body reached it (up to
    60 s), one that does not stays for an hour."""
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [], "http_version": "1.1", "scheme": "http", "root_path": ""}  # fmt: skip
    sent: list[dict] = []
    asked = False

    async def receive() -> dict:
        nonlocal asked
        if asked:
            if not leaves:
                await asyncio.sleep(3600)
            async with asyncio.timeout(60):
                while not any(m.get("body") for m in sent):
                    await asyncio.sleep(0.01)
            return {"type": "http.disconnect"}
        asked = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_handlers_run_on_the_services_loop_and_forms_and_rendering_on_the_sites(service_loop) -> None:
    loop, service_thread = service_loop
    seen: dict[str, list[int]] = {"page": [], "form": [], "items": [], "render": [], "closed": []}

    async def page(request: Request) -> Response:
        seen["page"].append(threading.get_ident())
        text = f"<p>{request.url.path}</p>"
        return Page(lambda: seen["render"].append(threading.get_ident()) or text, 200, time.perf_counter())

    @site_thread
    async def form(request: Request) -> Response:
        seen["form"].append(threading.get_ident())
        return PlainTextResponse(await request.body())

    async def stream(request: Request) -> Response:
        async def items():
            try:
                for i in range(3):
                    seen["items"].append(threading.get_ident())
                    yield f"{i};"
            finally:
                seen["closed"].append(threading.get_ident())

        return StreamingResponse(items())

    routes = [Route("/p", page, name="page"), Route("/f", form, methods=["POST"]), Route("/s", stream, name="stream")]
    app = Router([on_service(loop, r) for r in routes])

    async def main() -> list[tuple[int, bytes]]:
        return [
            await _call(app, "GET", "/p"),
            await _call(app, "POST", "/f", b"token=x"),
            await _call(app, "GET", "/s"),
        ]

    answers, site = _run(main)
    assert answers == [(200, b"<p>/p</p>"), (200, b"token=x"), (200, b"0;1;2;")]
    assert app.url_path_for("page") == "/p" and app.url_path_for("stream") == "/s"  # names kept
    assert seen["page"] == [service_thread] and seen["items"] == [service_thread] * 3
    assert seen["closed"] == [service_thread]  # the generator is closed where it runs
    assert seen["form"] == [site] and seen["render"] == [site]


def test_a_stream_its_reader_leaves_is_closed_on_the_services_loop_and_methods_hold(service_loop) -> None:
    loop, service_thread = service_loop
    closed: list[int] = []

    async def endless(request: Request) -> Response:
        async def items():
            try:
                while True:
                    await asyncio.sleep(0.01)
                    yield "."
            finally:
                closed.append(threading.get_ident())

        return StreamingResponse(items())

    async def posted(request: Request) -> Response:
        return PlainTextResponse("posted")

    app = Router([on_service(loop, Route("/s", endless)), on_service(loop, Route("/p", posted, methods=["POST"]))])

    async def main() -> tuple[tuple[int, bytes], tuple[int, bytes], tuple[int, bytes]]:
        left = await _call(app, "GET", "/s", leaves=True)
        return left, await _call(app, "POST", "/s"), await _call(app, "POST", "/p")

    ((status, body), (refused, _), post), _ = _run(main)
    assert post == (200, b"posted")
    deadline = time.monotonic() + 30
    while not closed and time.monotonic() < deadline:  # the close is the service loop's, after the reader left
        time.sleep(0.01)
    assert status == 200 and body.startswith(b".") and closed == [service_thread]
    assert refused == 405  # a bridged route keeps its methods


def test_a_page_says_its_length_and_time_once_rendered_and_renders_once(monkeypatch) -> None:
    made: list[int] = []
    page = Page(lambda: made.append(1) or "<p>é</p>", 404, 10.0)
    assert "content-length" not in page.headers
    monkeypatch.setattr(time, "perf_counter", lambda: 12.5)
    page.rendered()
    assert page.body == "<p>é</p>".encode() and page.headers["content-length"] == str(len(page.body))
    assert page.status_code == 404 and page.headers["server-timing"] == "app;dur=2500.0"
    _run(lambda: _send(page))
    assert made == [1]  # rendered once: sending it does not render it again


def test_a_page_rendered_elsewhere_sends_that_text_and_is_not_rendered_here() -> None:
    """With ``there`` (a render process), the page sent is its text; ``make`` (the site's thread) is not called."""
    made: list[int] = []

    async def there() -> str:
        return "<p>from a render process</p>"

    page = Page(lambda: made.append(1) or "<p>here</p>", 200, time.perf_counter(), there)
    sent = _run(lambda: _send(page))[0]
    assert b"".join(m.get("body", b"") for m in sent) == b"<p>from a render process</p>" and made == []
    assert page.headers["content-length"] == str(len(b"<p>from a render process</p>"))


async def _send(page: Page) -> list[dict]:
    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    await page({"type": "http", "method": "GET", "path": "/", "headers": []}, receive, send)
    return sent


def test_a_stream_left_between_items_is_closed_on_the_services_loop(service_loop) -> None:
    """The reader goes while no item is being made (the generator waits at its yield): it is closed there."""
    loop, service_thread = service_loop
    closed: list[int] = []

    async def items():
        try:
            for i in range(10):
                yield i
        finally:
            closed.append(threading.get_ident())

    made = items()  # kept here: only the close, not the garbage collector, may end it

    async def read_one() -> int:
        reader = _read_there(loop, made)
        first = await reader.__anext__()
        await reader.aclose()
        return first

    assert _run(read_one)[0] == 0
    deadline = time.monotonic() + 30

    def closing_here() -> list[object]:  # other tests' closes may wait on loops that stopped before they ended
        return [t for t in list(thread_mod._CLOSING) if getattr(t, "get_loop", lambda: loop)() is loop]

    while (not closed or closing_here()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert closed == [service_thread]
    assert not closing_here()  # the close's task was held while it ran, and let go when it ended


@pytest.mark.parametrize("closed", [True, False])
def test_a_stream_left_as_the_services_loop_stops_ends_quietly(closed: bool) -> None:
    """The reader goes after the service's loop stopped (a shutdown): closed already, the loop refuses the close
    and nothing is said; stopped and not yet closed, the close is never run there, and no coroutine is left
    behind to be reported "never awaited" when the loop is closed."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def items():
        yield "."
        yield "."

    async def read_one() -> object:
        reader = _read_there(loop, items())
        first = await reader.__anext__()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        if closed:
            loop.close()
        await reader.aclose()
        return first

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _run(read_one)[0] == "."
        loop.close()
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]
