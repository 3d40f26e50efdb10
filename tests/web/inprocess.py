"""The site in this process, as ``abluxx serve --http-port`` runs it but without a socket: the service on an event
loop of its own thread, the site's application (referee/web/routes.py) on another's, requests sent to the
application through httpx's ASGI transport. Mutation testing sees the site's code run here (it cannot see into a
spawned server); the store is a real SQLite file."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from referee.service.server import RefereeService
from referee.service.settings import parse
from referee.store import open_store
from referee.web.app import Site
from referee.web.routes import build

SETTINGS = {"auth": {"organiser_tokens": ["organiser-secret"], "authors": {"alice": "alice-secret"}},
            "http": {"page_size": 2, "render_processes": 0}}  # fmt: skip


def _loop_thread(name: str) -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name=name, daemon=True)
    thread.start()
    return loop, thread


@dataclass
class Served:
    """The site of a store, served in this process: ``get``/``post`` as a browser on ``http://127.0.0.1:8080``."""

    service: RefereeService
    service_loop: asyncio.AbstractEventLoop
    site_loop: asyncio.AbstractEventLoop
    client: httpx.AsyncClient
    site: Site

    def on_site(self, work: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(work, self.site_loop).result(60)

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.on_site(self.client.get(path, **kw))

    def post(self, path: str, **kw: Any) -> httpx.Response:
        return self.on_site(self.client.post(path, **kw))


@contextmanager
def served(data: Path, settings: dict[str, Any] | None = None) -> Iterator[Served]:
    """The site of the store in ``data`` with ``settings`` (default SETTINGS), its two loops on two threads."""
    config = parse(settings or SETTINGS, "<test>", env={})
    service_loop, service_thread = _loop_thread("service")
    site_loop, site_thread = _loop_thread("site")

    async def start() -> tuple[RefereeService, Any, Any]:
        service = RefereeService(open_store(data), config)
        app, site = build(service, config.http, service_loop)
        return service, app, site

    service, app, site = asyncio.run_coroutine_threadsafe(start(), service_loop).result(60)
    asyncio.run_coroutine_threadsafe(asyncio.to_thread(lambda: None), site_loop).result(60)
    site_loop.call_soon_threadsafe(site.open_store)  # the site thread's own store connection
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False, client=("203.0.113.7", 50000))
    client = httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080")
    try:
        yield Served(service, service_loop, site_loop, client, site)
    finally:
        asyncio.run_coroutine_threadsafe(client.aclose(), site_loop).result(60)
        site_loop.call_soon_threadsafe(site.close_store)

        async def close_service() -> None:
            service.reader.close()
            service.store.close()

        asyncio.run_coroutine_threadsafe(close_service(), service_loop).result(60)
        for loop, thread in ((site_loop, site_thread), (service_loop, service_thread)):
            loop.call_soon_threadsafe(loop.stop)
            thread.join(30)
            loop.close()
