"""Live updates: a Server-Sent Events stream per leaderboard (``/t/{tid}/events``) that says ``game`` each time one
of its games is stored, so the page's script fetches the table again. The stream hears the tournament through the
service's Hub, as a gRPC WatchTournament does, and streams are capped in total and per client as the watchers are
(docs/security.md)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from referee.errors import Exhausted
from referee.event_loop import wait_for
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.service.registry import CANCELLED, FINISHED
from referee.service.runs import EVERY, FELL_BEHIND

from .app import Site

KEEPALIVE_S = 15.0  # a comment line this often keeps proxies from closing a quiet stream
RETRY_MS = 1000  # how soon a browser reconnects after the stream ends


class _Stream(StreamingResponse):
    """A stream whose every write must be taken within ``write_timeout_s`` (the gRPC watchers' setting): a client
    that stops reading is cut off, and its place under the caps freed, instead of holding it for ever."""

    def __init__(self, *args: Any, write_timeout_s: float, admitted: AbstractContextManager, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.write_timeout_s = write_timeout_s
        self.admitted = admitted  # its place under the caps, taken before it was answered: freed when it ends

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.admitted.__exit__(None, None, None)

    async def stream_response(self, send: Send) -> None:
        async def timed(message: Message) -> None:
            await wait_for(send(message), self.write_timeout_s)

        with contextlib.suppress(TimeoutError):
            await super().stream_response(timed)


class Live:
    def __init__(self, site: Site) -> None:
        self.site = site

    def client(self, request: Request) -> str:
        who = self.site.who(request)
        if who is not None:
            return f"token:{who.name}"
        return "address:" + (request.client.host if request.client else "")

    async def events(self, request: Request) -> Response:
        """The stream, or: 204 for a tournament that is over (nothing more will happen: a browser's EventSource
        stops there and does not reconnect); 429 for any stream past a cap, its place taken here, before the answer,
        so a burst of requests cannot all pass the check first."""
        tid = request.path_params["tid"]
        service = self.site.service
        row = service.store.tournament(tid)
        if row is None:
            raise HTTPException(404, "no such tournament or ladder on this server")
        if self.site.who(request) is None and not service.auth.open_reads:
            raise HTTPException(401, "sign in to follow this server's tournaments")
        if service.registry.state(tid, row)[0] in (FINISHED, CANCELLED):
            return Response(status_code=204)
        return self._admitted(request, tid)

    async def every(self, request: Request) -> Response:
        """The games of every tournament starting and ending (``started``, ``game``): the home page's and
        ``/live``'s lists of the games being played now. Capped with the leaderboards' streams."""
        if self.site.who(request) is None and not self.site.service.auth.open_reads:
            raise HTTPException(401, "sign in to follow this server's games")
        return self._admitted(request, EVERY)

    def _admitted(self, request: Request, key: str) -> Response:
        """The stream of hub ``key``, its place under the caps taken now, or 429 (503 while the server stops)."""
        service = self.site.service
        if service.draining:
            raise HTTPException(503, "the server is shutting down")
        admitted = self.site.streams.admit_client(self.client(request))
        try:
            admitted.__enter__()
        except Exhausted:
            raise HTTPException(429, "too many live streams open; close a page and try again") from None
        return _Stream(
            self._stream(key),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
            write_timeout_s=service.settings.watch_write_timeout_s,
            admitted=admitted,
        )

    async def _stream(self, tid: str) -> AsyncIterator[str]:
        service = self.site.service
        queue = service.hub.subscribe(tid)
        try:
            yield f"retry: {RETRY_MS}\n\n"
            while True:
                try:
                    event = await wait_for(queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": still here\n\n"
                    continue
                if event is None or event is FELL_BEHIND:
                    return  # the server stops, the tournament ended, or this reader fell behind: the browser retries
                assert isinstance(event, ref_pb.TournamentEvent)
                kind = event.WhichOneof("event")
                if kind == "finished":
                    yield f"event: game\ndata: {json.dumps({'game_id': event.finished.game.game_id})}\n\n"
                elif kind == "started":
                    yield f"event: started\ndata: {json.dumps({'game_id': event.started.game_id})}\n\n"
        finally:
            service.hub.unsubscribe(tid, queue)
