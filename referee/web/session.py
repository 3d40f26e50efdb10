"""Who is reading the site: a sign-in cookie made from an author's or organiser's token, and the CSRF check every
form passes (docs/web.md, "Security").

- Signing in checks the token with the service's own ``Auth`` (the gRPC API's check), then sets ``abluxx_session``:
  the principal and an expiry, signed with a key this process drew at start (HMAC-SHA256). HttpOnly, SameSite=
  Strict, Path=/; the token itself is never stored. A restart signs everyone out.
- Every form carries ``csrf``, which must equal the ``abluxx_csrf`` cookie (HttpOnly, SameSite=Strict): a page on
  another site can neither read the cookie nor make the browser send it. A POST whose Origin header names another
  site is refused too.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from referee.errors import Unauthenticated
from referee.service.auth import Auth, Principal

SESSION, CSRF = "abluxx_session", "abluxx_csrf"
MAX_TOKEN_CHARS = 200  # a token longer than this is not one we gave


@dataclass
class Sessions:
    auth: Auth
    hours: int
    secure: bool = False  # Secure cookies: only when the site is served over https by something in front
    key: bytes = b""

    def __post_init__(self) -> None:
        self.key = self.key or secrets.token_bytes(32)

    def _sign(self, data: bytes) -> str:
        return hmac.new(self.key, data, hashlib.sha256).hexdigest()

    def who(self, request: Request) -> Principal | None:
        """The signed-in principal, or None (no cookie, a forged or expired one)."""
        raw = request.cookies.get(SESSION, "")
        body, _, mac = raw.rpartition(".")
        # as bytes: compare_digest refuses str with non-ASCII characters, which a cookie may hold
        if not body or not hmac.compare_digest(self._sign(body.encode()).encode(), mac.encode()):
            return None
        try:
            name, organiser, until = json.loads(base64.urlsafe_b64decode(body.encode()))
        except ValueError:
            return None
        return Principal(str(name), bool(organiser)) if time.time() < until else None

    def sign_in(self, token: str) -> Principal:
        """The principal whose token this is, or Unauthenticated."""
        token = token.strip()
        if not token or len(token) > MAX_TOKEN_CHARS:
            raise Unauthenticated("unknown token")
        who = self.auth.who([("authorization", f"Bearer {token}")])
        if who is None:
            raise Unauthenticated("unknown token")
        return who

    def set_session(self, response: Response, who: Principal) -> None:
        until = time.time() + self.hours * 3600
        body = base64.urlsafe_b64encode(json.dumps([who.name, who.organiser, until]).encode()).decode()
        self._cookie(response, SESSION, f"{body}.{self._sign(body.encode())}", self.hours * 3600)

    def end_session(self, response: Response) -> None:
        response.delete_cookie(SESSION, path="/", httponly=True, samesite="strict", secure=self.secure)

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
        if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
            return False
        cookie = request.cookies.get(CSRF, "")
        return len(cookie) == 43 and hmac.compare_digest(cookie.encode(), form_token.encode())

    def _cookie(self, response: Response, name: str, value: str, max_age: int | None) -> None:
        response.set_cookie(
            name, value, max_age=max_age, path="/", httponly=True, samesite="strict", secure=self.secure
        )
