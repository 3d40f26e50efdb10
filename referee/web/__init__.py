"""The competition web site (docs/web.md): served by uvicorn on a thread and event loop of its own, beside the gRPC
service, from the same store, with the same visibility rules (``referee.service.visibility``); each page's data is
gathered on the service's loop (thread.py).

``starter(http)`` gives ``referee.service.serve`` its ``site`` argument: it binds the port, starts uvicorn on the
site's thread, prints ``site on http://HOST:PORT/``, and returns how to stop it (after the service has drained,
which ends every live stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING

from referee.errors import RefereeError
from referee.log import get_logger
from referee.service.server import RefereeService
from referee.service.settings import HttpSettings

if TYPE_CHECKING:
    import uvicorn

    from .app import Site

SHUTDOWN_S = 5  # how long open connections may take to finish once the site stops
WARM_BOARDS = 3  # the latest tournaments whose standings are built as the site starts, before anyone asks


class SiteError(RefereeError):
    """The site cannot start (its port is taken): the message says why."""


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as e:
        sock.close()
        raise SiteError(f"the site cannot listen on {host}:{port}: {e.strerror}") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


Stop = Callable[[], Awaitable[None]]


def _on_thread(server: uvicorn.Server, sock: socket.socket, site: Site) -> Future[None]:
    """Serves ``server`` on ``sock`` from a thread and event loop of its own (thread.py), with the site thread's own
    store connection; the future is done when it stops."""
    done: Future[None] = Future()

    def run() -> None:
        try:
            site.open_store()
            asyncio.run(server.serve(sockets=[sock]))
            done.set_result(None)
        except BaseException as e:  # handed to the service's loop, which awaits the future
            done.set_exception(e)
        finally:
            site.close_store()

    threading.Thread(target=run, name="site", daemon=True).start()
    return done


def starter(http: HttpSettings, open_browser: bool = False) -> Callable[[RefereeService], Awaitable[Stop]]:
    async def start(service: RefereeService) -> Stop:
        import uvicorn

        from .protocol import head_timed
        from .routes import build

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:  # the service handles SIGTERM and SIGINT, then stops us
                yield

        assert http.port is not None
        loop = asyncio.get_running_loop()
        sock = _listen(http.host, http.port)
        app, site = build(service, http, loop)
        config = uvicorn.Config(
            app, log_config=None, access_log=False, lifespan="off", ws="none", server_header=False,
            timeout_graceful_shutdown=SHUTDOWN_S, http=head_timed(http.header_timeout_s),
            timeout_keep_alive=http.idle_timeout_s,
            # X-Forwarded-For and -Proto only from the proxies listed, none by default (docs/web.md, "Behind a proxy")
            proxy_headers=bool(http.trusted_proxies), forwarded_allow_ips=list(http.trusted_proxies),
        )  # fmt: skip
        server = Server(config)
        for row in service.store.tournaments()[-WARM_BOARDS:]:
            service.boards.ready(row.id)  # built off the loop, one at a time, while the site starts
        task = asyncio.wrap_future(_on_thread(server, sock, site))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if task.done():
            sock.close()
            task.result()
            raise SiteError("the site stopped as it started")
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        print(f"site on http://{shown}:{port}/", flush=True)
        get_logger(service="site").info("site serving", url=f"http://{shown}:{port}/")
        if open_browser:
            import webbrowser

            loop.run_in_executor(None, webbrowser.open, f"http://{shown}:{port}/")

        async def stop() -> None:
            server.should_exit = True
            with contextlib.suppress(Exception):
                await task
            sock.close()

        return stop

    return start
