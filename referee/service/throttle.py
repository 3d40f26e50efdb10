"""Sign-in throttling, for the gRPC API and the site alike (docs/security.md): failed sign-ins (an unknown token)
are counted per address and per token tried, in fixed windows. Once either count reaches the limit, every sign-in
from that address, or with that token, is refused for the rest of its window, before the token is checked: a
right token is refused too, so a refusal says nothing about the token.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from referee.errors import Exhausted

MAX_KEYS = 100_000  # addresses and tokens tracked at once; beyond, the oldest windows are forgotten


class Throttled(Exhausted):
    """Too many failed sign-ins from one address or with one token: ``retry_after_s`` says for how long."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def token_key(token: str) -> str:
    """The SHA-256 of a token, as the throttle and the site's sessions name it (the token is never kept)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def address_of(peer: str) -> str:
    """A gRPC peer (``ipv4:127.0.0.1:5555``, ``ipv6:[::1]:5555``, ``unix:/path``) without its port."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rsplit(":", 1)[0].strip("[]")
    return peer


class SignInThrottle:
    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._windows: OrderedDict[str, tuple[float, int]] = OrderedDict()  # key -> (window's start, failures)
        self._lock = threading.Lock()  # the gRPC service's loop and the site's thread count alike

    def _count(self, key: str, now: float) -> tuple[float, int]:
        start, failures = self._windows.get(key, (now, 0))
        return (now, 0) if now - start >= self.window_s else (start, failures)

    def check(self, address: str, token: str) -> None:
        """Throttled when the address or the token has used up its failures in this window."""
        with self._lock:
            self._check(address, token)

    def _check(self, address: str, token: str) -> None:
        now = self.clock()
        for key, what in ((f"a:{address}", "from this address"), (f"t:{token_key(token)}", "with this token")):
            start, failures = self._count(key, now)
            if failures >= self.limit:
                wait = max(1, math.ceil(start + self.window_s - now))
                raise Throttled(f"too many failed sign-ins {what}: try again in {wait} s", wait)

    def failed(self, address: str, token: str) -> None:
        """One more failed sign-in from ``address`` with ``token``."""
        with self._lock:
            self._failed(address, token)

    def _failed(self, address: str, token: str) -> None:
        now = self.clock()
        for key in (f"a:{address}", f"t:{token_key(token)}"):
            start, failures = self._count(key, now)
            self._windows[key] = (start, failures + 1)
            self._windows.move_to_end(key)
        while len(self._windows) > MAX_KEYS:
            self._windows.popitem(last=False)
