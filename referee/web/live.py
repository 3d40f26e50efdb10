"""Live updates: a Server-Sent Events stream per leaderboard (``/t/{tid}/events``) that says ``game`` each time one
of its games is stored, so the page's script fetches the table again. The stream hears the tournament through the
service's Hub, as a gRPC WatchTournament does, and streams are capped in total and per client as the watchers are
(docs/security.md)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Message, Send

from referee.errors import Exhausted
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.service.runs import FELL_BEHIND

from .app import Site

KEEPALIVE_S = 15.0  # a comment line this often keeps proxies from closing a quiet stream
RETRY_MS = 1000  # how soon a browser reconnects after the stream ends


class _Stream(StreamingResponse):
    """A stream whose every write must be taken within ``write_timeout_s`` (the gRPC watchers' setting): a client
    that stops reading is cut off, and its place under the caps freed, instead of holding it for ever."""

    def __init__(self, *args: Any, write_timeout_s: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.write_timeout_s = write_timeout_s

    async def stream_response(self, send: Send) -> None:
        async def timed(message: Message) -> None:
            await asyncio.wait_for(send(message), self.write_timeout_s)

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
        tid = request.path_params["tid"]
        service = self.site.service
        if service.store.tournament(tid) is None:
            raise HTTPException(404, "no such tournament or ladder on this server")
        if self.site.who(request) is None and not service.auth.open_reads:
            raise HTTPException(401, "sign in to follow this server's tournaments")
        client = self.client(request)
        streams = self.site.streams
        if sum(streams.open.values()) >= streams.total or streams.open.get(client, 0) >= streams.per_client:
            raise HTTPException(429, "too many live streams open; close a page and try again")
        if service.draining:
            raise HTTPException(503, "the server is shutting down")
        return _Stream(
            self._stream(tid, client),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
            write_timeout_s=service.settings.watch_write_timeout_s,
        )

    async def _stream(self, tid: str, client: str) -> AsyncIterator[str]:
        service = self.site.service
        try:
            admitted = self.site.streams.admit_client(client)
            admitted.__enter__()
        except Exhausted:
            return
        queue = service.hub.subscribe(tid)
        try:
            yield f"retry: {RETRY_MS}\n\n"
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
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
            admitted.__exit__(None, None, None)
