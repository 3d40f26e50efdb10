"""The site's HTTP/1.1 connections: uvicorn's h11 protocol with a deadline for each request's head.

uvicorn closes a kept-alive connection that stays idle (``timeout_keep_alive``, the ``[http] idle_timeout_s``
setting) but has no deadline for reading a request: a client that sends half a request line and then nothing, or
dribbles its headers, held its connection for ever (300 such were held). Here each request's head (its line and
headers) must be complete within ``[http] header_timeout_s`` of the connection opening or of the previous response
ending; otherwise the connection is closed. The body and the response are the app's to time (a form's body is
small; a live stream times its own writes).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class HeadTimedProtocol(H11Protocol):
    header_timeout_s: float = 10.0  # set on the subclass that ``head_timed`` makes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        super().connection_made(transport)
        self._await_head()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the head is in (or the connection failed): no longer ours
            self._stop_waiting()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._await_head()  # the next request's, on a kept-alive connection

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _await_head(self) -> None:
        self._stop_waiting()
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_late)

    def _stop_waiting(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def head_timed(header_timeout_s: float) -> type[HeadTimedProtocol]:
    """The protocol class for uvicorn's ``http`` setting, with this deadline for a request's head."""
    return type("HeadTimed", (HeadTimedProtocol,), {"header_timeout_s": float(header_timeout_s)})
