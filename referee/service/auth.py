"""Who is calling: bearer tokens from the ``authorization`` metadata, matched against the server's settings.

Organisers may do everything; an author may submit and retire only bots they own. Checks happen before a call
touches anything, so a refused call has no side effect. Unknown tokens are throttled per address and per token
(throttle.py), for the API and the site's sign-in alike.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from dataclasses import dataclass

import grpc

from referee.errors import Denied, Unauthenticated
from referee.log import get_logger

from .settings import Settings
from .throttle import SignInThrottle, address_of, token_key


@dataclass(frozen=True)
class Principal:
    name: str  # the author's name, or "organiser"
    organiser: bool


class Auth:
    def __init__(self, settings: Settings) -> None:
        self.throttle = SignInThrottle(settings.max_failed_signins, settings.signin_window_s)
        self.replace(settings)

    def replace(self, settings: Settings) -> None:
        """Take the tokens (and ``open_reads``) of ``settings`` from now on: a token gone from them is revoked, for
        the next call and every site session made with it (``abluxx serve`` does this on SIGHUP)."""
        tokens = [
            (t.encode(), Principal(f"organiser{i + 1}" if len(settings.organiser_tokens) > 1 else "organiser", True))
            for i, t in enumerate(settings.organiser_tokens)
        ]
        tokens += [(t.encode(), Principal(name, False)) for name, t in settings.author_tokens.items()]
        self._tokens, self._known = tokens, {token_key(t.decode()) for t, _ in tokens}
        self.open_reads = settings.open_reads

    def known(self) -> set[str]:
        """The SHA-256 of every token the server knows now (a site session lives while its token's is here)."""
        return self._known

    def who(self, metadata: Iterable[tuple[str, str | bytes]] | None, address: str = "") -> Principal | None:
        """The caller, or None when no token is given; Unauthenticated for a malformed header or an unknown token;
        Throttled when ``address`` or the token has failed too often lately."""
        values = [v for k, v in metadata or () if k.lower() == "authorization"]
        if not values:
            return None
        value = values[0] if isinstance(values[0], str) else values[0].decode("latin-1")
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("the authorization metadata must be 'Bearer <token>'")
        return self.token(token.strip(), address)

    def token(self, token: str, address: str) -> Principal:
        """The principal of ``token``; Unauthenticated (and one more failure counted) for an unknown one."""
        self.throttle.check(address, token)
        given = token.encode("utf-8", "surrogatepass")
        found = None
        for known, principal in self._tokens:  # compare with every token, in constant time each
            if hmac.compare_digest(known, given):
                found = principal
        if found is None:
            self.throttle.failed(address, token)
            raise Unauthenticated("unknown token")
        return found

    def _who(self, context: grpc.aio.ServicerContext) -> Principal | None:
        """``who`` for a call; a refused token is logged with the caller's address (never the token)."""
        try:
            return self.who(context.invocation_metadata(), address_of(context.peer()))
        except Unauthenticated as e:
            get_logger(service="referee").warning("token refused", peer=context.peer(), reason=e.message)
            raise

    def caller(self, context: grpc.aio.ServicerContext) -> Principal:
        """A caller with a valid token, or Unauthenticated."""
        who = self._who(context)
        if who is None:
            raise Unauthenticated("this call needs a token: send 'authorization: Bearer <token>' metadata")
        return who

    def organiser(self, context: grpc.aio.ServicerContext, what: str) -> Principal:
        who = self.caller(context)
        if not who.organiser:
            raise Denied(f"only an organiser may {what}")
        return who

    def reader(self, context: grpc.aio.ServicerContext) -> Principal | None:
        """Anyone when reads are open (a token given is still checked); else a caller with a valid token."""
        if self.open_reads:
            return self._who(context)
        return self.caller(context)
