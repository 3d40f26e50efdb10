"""The site's routes: every page and stream of the site (pages.py, live.py) on one ``Site`` (app.py), behind its
security headers. Kept apart from app.py, which the pages import, so that no two modules import each other."""

from __future__ import annotations

import asyncio
import functools

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from referee.service.server import RefereeService
from referee.service.settings import HttpSettings

from . import api, enter, live, pages, upload
from .app import HERE, VIEW_ASSETS, ClosedReads, SecurityHeaders, Site
from .thread import on_service


def build(service: RefereeService, http: HttpSettings, loop: asyncio.AbstractEventLoop) -> tuple[ASGIApp, Site]:
    """The site's application for ``service``, whose handlers run on the service's ``loop`` (thread.py), and its
    ``Site``."""
    site = Site(service, http)
    p = pages.Pages(site)
    stream = live.Live(site)
    routes = [
        Route("/", p.home),
        Route("/t/{tid}", p.board),
        Route("/t/{tid}/table", p.board_table),
        Route("/t/{tid}/events", stream.events),
        Route("/t/{tid}/games", p.games),
        Route("/t/{tid}/e/{name:path}", p.entrant),
        Route("/g/{game_id}", p.game),
        Route("/bots", p.bots),
        Route("/bots/{name}", p.bot),
        Route("/bots/{name}/validation/{version}", p.validation),
        Route("/live", p.live),
        Route("/live/events", stream.every),
        Route("/authors/{name}", p.author),
        *enter.Enter(site).routes(),
        *api.Api(p).routes(),
        Route("/how-to-enter/upload", upload.Upload(site, loop).post, methods=["POST"]),
        Route("/g/{game_id}/output/{entrant}", functools.partial(upload.output, site)),
        Route("/signin", site.signin_route, methods=["GET", "POST"]),
        Route("/signout", site.signout, methods=["POST"]),
        Mount("/static/view", StaticFiles(directory=VIEW_ASSETS)),
        Mount("/static", StaticFiles(directory=HERE / "static")),
    ]
    routes = [on_service(loop, r) for r in routes]  # every handler on the service's loop, but the forms'
    middleware = [
        # the Host names the site answers to: no page of another name reaches it by its address (DNS rebinding)
        Middleware(TrustedHostMiddleware, allowed_hosts=http.hosts(), www_redirect=False),
        Middleware(ClosedReads, site=site),
    ]
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={HTTPException: site.http_error, 404: site.http_error, 500: site.server_error},
    )
    app.router.redirect_slashes = False  # its redirects are absolute, made from the Host header: ours are relative
    app.state.site = site
    return SecurityHeaders(app), site
