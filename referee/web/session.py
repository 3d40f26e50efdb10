"""Who is reading the site: a sign-in session made from an author's or organiser's token, kept in the store, and
the CSRF check every form passes (docs/web.md, "Sign-in" and "Security").

- Signing in checks the token with the service's own ``Auth`` (the gRPC API's check, throttled alike), then
  stores a session (``store/sessions.py``) and sets ``abluxx_session`` to its random id: HttpOnly, SameSite=Strict,
  Path=/, and Secure when the site's public origin is https. The store keeps the id's SHA-256, the principal, an
  expiry and the SHA-256 of the token; the token itself is never stored. Signing out deletes the row, so a copy of
  the cookie taken before is no sign-in; a session whose token the server no longer knows (revoked) is none either.
- Every form carries ``csrf``, which must equal the ``abluxx_csrf`` cookie (HttpOnly, SameSite=Strict): a page on
  another site can neither read the cookie nor make the browser send it. A POST whose Origin header names neither
  the site's public origin nor the address it was asked by is refused too.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from referee.errors import Unauthenticated
from referee.service.auth import Auth, Principal
from referee.service.throttle import token_key
from referee.store import SqliteStore
from referee.store import sessions as stored

SESSION, CSRF = "abluxx_session", "abluxx_csrf"
MAX_TOKEN_CHARS = 200  # a token longer than this is not one we gave
SESSION_ID_CHARS = 43  # secrets.token_urlsafe(32)
MAX_SESSIONS_PER_PRINCIPAL = 20  # one more sign-in ends that principal's oldest session


def _id_hash(raw: str) -> str | None:
    """The stored key of a session id from a cookie, or None for a value that cannot be one of ours."""
    if len(raw) != SESSION_ID_CHARS or not raw.isascii():
        return None
    return hashlib.sha256(raw.encode()).hexdigest()


@dataclass
class Sessions:
    auth: Auth
    store: SqliteStore | None  # the site thread's own connection, opened on that thread (Site.open_store)
    hours: int
    secure: bool = False  # Secure cookies: when the site's public origin is https (a proxy in front)
    origin: str = ""  # the site's public origin (https://host), from which forms may come

    def who(self, request: Request) -> Principal | None:
        """The signed-in principal, or None (no cookie, an unknown, ended or expired session, a revoked token)."""
        state = request.scope.setdefault("state", {})
        if "who" not in state:
            state["who"] = self._lookup(request.cookies.get(SESSION, ""))
        return state["who"]

    def _lookup(self, raw: str) -> Principal | None:
        key = _id_hash(raw)
        row = None if key is None else stored.find(self._store(), key, time.time())
        if row is None or row.token_hash not in self.auth.known():
            return None
        return Principal(row.principal, row.organiser)

    def sign_in(self, token: str, address: str) -> tuple[Principal, str]:
        """(the principal whose token this is, the token's hash), or Unauthenticated; Throttled (from ``Auth``)
        after too many failures from ``address`` or with ``token``."""
        token = token.strip()
        if not token or len(token) > MAX_TOKEN_CHARS:
            raise Unauthenticated("unknown token")
        return self.auth.token(token, address), token_key(token)

    def set_session(self, response: Response, who: Principal, token_hash: str) -> None:
        """Stores a new session for ``who`` and sets its cookie."""
        raw = secrets.token_urlsafe(32)
        now = time.time()
        row = stored.SessionRow(who.name, who.organiser, token_hash, now + self.hours * 3600)
        stored.add(self._store(), hashlib.sha256(raw.encode()).hexdigest(), row, now, MAX_SESSIONS_PER_PRINCIPAL)
        self._cookie(response, SESSION, raw, self.hours * 3600)

    def end_session(self, request: Request, response: Response) -> None:
        """Ends the session the request's cookie names, in the store, and clears the cookie."""
        if (key := _id_hash(request.cookies.get(SESSION, ""))) is not None:
            stored.end(self._store(), key)
        response.delete_cookie(SESSION, path="/", httponly=True, samesite="strict", secure=self.secure)

    def end_revoked(self) -> int:
        """Ends every stored session whose token the server no longer knows; how many."""
        return stored.end_unknown(self._store(), self.auth.known())

    def _store(self) -> SqliteStore:
        assert self.store is not None, "the site's thread opens its store before it serves"
        return self.store

    def csrf_token(self, request: Request) -> str:
        """The token this visitor's forms carry (its cookie's value; a fresh one when it has none)."""
        token = request.cookies.get(CSRF, "")
        if len(token) != 43:
            token = request.scope.setdefault("state", {}).setdefault("new_csrf", secrets.token_urlsafe(32))
        return token

    def keep_csrf(self, request: Request, response: Response) -> None:
        """Set the CSRF cookie a page's forms were made with, if the visitor did not have it yet."""
        if new := request.scope.get("state", {}).get("new_csrf"):
            self._cookie(response, CSRF, new, None)

    def csrf_ok(self, request: Request, form_token: str) -> bool:
        origin = request.headers.get("origin")
        if origin is not None and origin not in {self.origin or None, f"{request.url.scheme}://{request.url.netloc}"}:
            return False
        cookie = request.cookies.get(CSRF, "")
        return len(cookie) == 43 and secrets.compare_digest(cookie.encode(), form_token.encode())

    def _cookie(self, response: Response, name: str, value: str, max_age: int | None) -> None:
        response.set_cookie(
            name, value, max_age=max_age, path="/", httponly=True, samesite="strict", secure=self.secure
        )
