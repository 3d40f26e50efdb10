"""The Watch* streams' caps: how many are open, in total and per client, and how long one message may wait."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import grpc

from referee.errors import Exhausted

from .auth import Principal


class Streams:
    """The open Watch* streams, capped in total and per client (a token's principal, or an address without one),
    so watchers cannot pile up: a stream past a cap is refused with RESOURCE_EXHAUSTED."""

    def __init__(self, total: int, per_client: int, what: tuple[str, str] = ("watchers", "watch streams")) -> None:
        self.total, self.per_client = total, per_client
        self.what = what  # what the caps count, in a refusal: all of them, and one client's
        self.open: dict[str, int] = {}
        self._lock = threading.Lock()

    @staticmethod
    def client(who: Principal | None, context: grpc.aio.ServicerContext) -> str:
        if who is not None:
            return f"token:{who.name}"
        peer = context.peer()  # ipv4:127.0.0.1:5555, ipv6:[::1]:5555
        return "address:" + peer.rpartition(":")[0]

    def admit(self, who: Principal | None, context: grpc.aio.ServicerContext) -> contextlib.AbstractContextManager:
        return self.admit_client(self.client(who, context))

    @contextlib.contextmanager
    def admit_client(self, client: str) -> Iterator[None]:
        """Hold one stream's place for ``client`` (a principal's or an address's key), or raise Exhausted. Taken
        and freed under a lock: the site takes a place on the service's loop and frees it on its own thread."""
        with self._lock:
            if sum(self.open.values()) >= self.total:
                raise Exhausted(f"the server has {self.total} {self.what[0]} already, its limit; try again later")
            if self.open.get(client, 0) >= self.per_client:
                raise Exhausted(
                    f"you have {self.per_client} {self.what[1]} open already, the limit per client; close one first"
                )
            self.open[client] = self.open.get(client, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self.open[client] -= 1
                if not self.open[client]:
                    del self.open[client]
