"""The site's ASGI application: routes, security headers on every response, error pages without traces, sign-in
and sign-out (docs/web.md). Pages are in pages.py, live updates in live.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, quote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.errors import Unauthenticated
from referee.log import get_logger
from referee.metrics import SITE_STREAMS
from referee.service.auth import Principal
from referee.service.server import RefereeService
from referee.service.settings import HttpSettings
from referee.service.streams import Streams
from referee.service.throttle import Throttled
from referee.store import SqliteStore

from .render import Renderer
from .session import Sessions
from .thread import Page, site_thread

HERE = Path(__file__).parent
VIEW_ASSETS = HERE.parent / "view" / "assets"
MAX_FORM_BYTES = 4096  # a sign-in form is a token and a CSRF token
# No inline script anywhere: scripts and styles are our own files. The viewer colours cards with style attributes
# (style-src-attr), which cannot run code.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]


class SecurityHeaders:
    """Adds HEADERS to every HTTP response, pages, fragments, static files and errors alike. Nothing but a static
    file served is cached: pages depend on who is signed in, and so does an error page (a static file's 404 too).
    Every scope is HTTP: the server runs without lifespan and WebSocket protocols (``serve`` in __init__.py)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope.setdefault("state", {})["started"] = time.perf_counter()  # the page's Server-Timing counts from here

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += HEADERS
                if not (scope["path"].startswith("/static/") and message["status"] in (200, 304)):
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


class Site:
    """What every page needs: the service (its store, reader, boards, registry, hub and live games), the
    templates, the sign-in sessions and the cap on live-update streams."""

    def __init__(self, service: RefereeService, http: HttpSettings) -> None:
        self.service = service
        self.http = http
        secure = http.public_origin.startswith("https://")
        self.sessions = Sessions(service.auth, None, http.session_hours, secure, http.public_origin)
        self.streams = Streams(http.max_event_streams, http.max_event_streams_per_client)
        SITE_STREAMS.set_function(lambda: sum(self.streams.open.values()))
        self.renderer = Renderer(http.render_processes)
        self.log = get_logger(service="site")

    def open_store(self) -> None:
        """The site thread's own connection to the store (one per thread), for the sessions; the sessions of
        tokens this server no longer knows (revoked) end now. The render processes start too."""
        self.renderer.start()
        self.sessions.store = SqliteStore(self.service.store.data)
        if ended := self.sessions.end_revoked():
            self.log.info("site sessions ended: their tokens are revoked", sessions=ended)

    def close_store(self) -> None:
        self.renderer.close()
        if self.sessions.store is not None:
            self.sessions.store.close()

    def who(self, request: Request) -> Principal | None:
        return self.sessions.who(request)

    def render(self, request: Request, template: str, code: int = 200, **context: Any) -> Page:
        started = request.state.started  # when SecurityHeaders saw the request come
        context.update(who=self.who(request), csrf=self.sessions.csrf_token(request))
        make, there = self.renderer.now, self.renderer.render  # rendered off the service's loop (render.py)
        response = Page(lambda: make(template, context), code, started, lambda: there(template, context))
        self.sessions.keep_csrf(request, response)
        return response

    async def form(self, request: Request) -> dict[str, str]:
        """A urlencoded form of at most MAX_FORM_BYTES, its CSRF token checked; 400/403 otherwise."""
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                raise HTTPException(413, "the form is too large")
        try:
            fields = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), max_num_fields=8).items()}
        except ValueError:  # more fields than any form of ours has
            raise HTTPException(400, "the form has too many fields") from None
        if not self.sessions.csrf_ok(request, fields.get("csrf", "")):
            raise HTTPException(403, "the form is out of date or came from another site; load the page and try again")
        return fields

    # -- sign-in ------------------------------------------------------------------------------------------------

    @site_thread
    async def signin_route(self, request: Request) -> Response:
        """GET shows the form, POST signs in: one route, so a 405 lists both methods."""
        return await (self.signin(request) if request.method == "POST" else self.signin_page(request))

    async def signin_page(self, request: Request) -> Response:
        return self.render(request, "signin.html", note="")

    async def signin(self, request: Request) -> Response:
        fields = await self.form(request)
        address = request.client.host if request.client else ""  # the reader's, past a trusted proxy
        try:
            who, token_hash = self.sessions.sign_in(fields.get("token", ""), address)
        except Throttled as e:
            self.log.warning("site sign-in throttled", peer=address)
            refused = self.render(request, "signin.html", 429, note=f"{e.message[:1].upper()}{e.message[1:]}.")
            refused.headers["retry-after"] = str(e.retry_after_s)
            return refused
        except Unauthenticated:
            self.log.warning("site sign-in refused", peer=address)
            return self.render(request, "signin.html", 401, note="That token is not one this server knows.")
        response = RedirectResponse(f"/authors/{quote(who.name, safe='')}" if not who.organiser else "/", 303)
        self.sessions.set_session(response, who, token_hash)
        return response

    @site_thread
    async def signout(self, request: Request) -> Response:
        await self.form(request)
        response = RedirectResponse("/", 303)
        self.sessions.end_session(request, response)
        return response

    # -- errors -------------------------------------------------------------------------------------------------

    async def http_error(self, request: Request, exc: Exception) -> Response:
        """The error page of an HTTPException (routes.py hands it those, and 404s, which are those too)."""
        exc = cast(HTTPException, exc)
        response = self.render(request, "error.html", exc.status_code, status=exc.status_code, detail=exc.detail)
        if exc.headers:  # a 405's Allow
            response.headers.update(exc.headers)
        return response

    async def server_error(self, request: Request, exc: Exception) -> Response:
        self.log.exception("page failed", path=request.url.path)  # the trace goes to the log, never the page
        try:
            return self.render(request, "error.html", 500, status=500, detail="").rendered()
        except Exception:  # the error page itself failed: a plain one, still with the security headers
            self.log.exception("error page failed", path=request.url.path)
            return HTMLResponse(PLAIN_500, 500)

    async def closed_reads(self, request: Request) -> Response | None:
        """With ``open_reads = false``, the sign-in page (401) for anyone not signed in, whatever the address:
        before any lookup, so that 401 and 404 cannot tell which tournaments, games or bots exist."""
        if self.service.auth.open_reads or request.url.path.startswith(OPEN_PATHS) or self.who(request) is not None:
            return None
        return self.render(request, "signin.html", 401, note="This server's pages are for signed-in readers.")


PLAIN_500 = "<!doctype html><title>500</title><p>The server failed to answer; its log says why.</p>"
OPEN_PATHS = ("/signin", "/signout", "/static/")  # what a visitor reaches when reads are closed


class ClosedReads:
    """``Site.closed_reads`` in front of every route, once the reader is looked up (on the site's thread). Every
    scope is HTTP (SecurityHeaders)."""

    def __init__(self, app: ASGIApp, site: Site) -> None:
        self.app, self.site = app, site

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        self.site.who(request)  # looked up here, on the site's thread, for the handler on the loop's
        if (refused := await self.site.closed_reads(request)) is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)
