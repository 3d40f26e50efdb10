"""Sign-in sessions kept in the store, the site behind an HTTPS proxy, and sign-in throttling on the site and the
gRPC API alike, each through a real ``abluxx serve`` over HTTP and gRPC (docs/web.md, "Sign-in")."""

from __future__ import annotations

import http.client
import re
import signal
import time
import urllib.parse
from pathlib import Path

import grpc
import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from tests.service.helpers import ALICE, BOB, ORGANISER, auth, code_of, stub

from .conftest import save_tournament
from .site import Site, get, start_site

PUBLIC = "https://referee.example.org"
PROXY = f'[http]\ntrusted_proxies = ["127.0.0.1"]\npublic_origin = "{PUBLIC}"\n'


def _request(site: Site, method: str, path: str, headers: dict[str, str], body: str = ""):
    u = urllib.parse.urlsplit(site.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.request(method, path, body, headers)
    r = conn.getresponse()
    out = r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
    conn.close()
    return out


def _csrf(site: Site, headers: dict[str, str] | None = None) -> str:
    set_cookie = _request(site, "GET", "/signin", headers or {})[1]["set-cookie"]
    return re.search(r"abluxx_csrf=([^;]+)", set_cookie)[1]


def _form(site: Site, path: str, token: str | None, cookie: str, csrf: str, **headers: str):
    fields = {"csrf": csrf} | ({"token": token} if token is not None else {})
    h = {"content-type": "application/x-www-form-urlencoded", "cookie": f"abluxx_csrf={csrf}; {cookie}", **headers}
    return _request(site, "POST", path, {k.replace("_", "-"): v for k, v in h.items()}, urllib.parse.urlencode(fields))


def _sign_in(site: Site, token: str, **headers: str) -> str:
    """The session cookie (``abluxx_session=...``) of a new sign-in with ``token``."""
    csrf = _csrf(site, {k.replace("_", "-"): v for k, v in headers.items()})
    status, h, _ = _form(site, "/signin", token, "", csrf, **headers)
    assert status == 303, status
    return h["set-cookie"].split(";")[0]


def _who(site: Site, cookie: str) -> str | None:
    """The name the page header shows as signed in, or None."""
    body = get(site.url + "/bots", {"cookie": cookie})[2]
    m = re.search(r'<span class="who"><a href="/authors/([^"]+)">', body)
    return m[1] if m else None


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder, _ = save_tournament(tmp_path_factory.mktemp("sessions") / "data", ("ada", "bob", "cyd"))
    return folder


def test_signing_out_ends_the_session_for_every_copy_of_its_cookie(data: Path, tmp_path: Path) -> None:
    site = start_site(data, tmp_path)
    try:
        kept = _sign_in(site, ALICE)
        other = _sign_in(site, ALICE)  # a second browser of the same author
        assert _who(site, kept) == "alice" and _who(site, other) == "alice"
        csrf = _csrf(site)
        status, headers, _ = _form(site, "/signout", None, kept, csrf)
        assert status == 303 and "abluxx_session=" in headers["set-cookie"]
        assert _who(site, kept) is None  # the copy taken before sign-out signs nobody in
        assert _who(site, other) == "alice"  # the other sign-in is its own session
        assert _who(site, "abluxx_session=" + "A" * 43) is None
    finally:
        site.stop()


def test_a_session_outlives_a_restart_but_not_its_tokens_revocation(data: Path, tmp_path: Path) -> None:
    site = start_site(data, tmp_path)
    try:
        alice, bob = _sign_in(site, ALICE), _sign_in(site, BOB)
    finally:
        site.stop()
    site = start_site(data, tmp_path)  # the sessions are in the store: a restart keeps them
    try:
        assert _who(site, alice) == "alice" and _who(site, bob) == "bob"
    finally:
        site.stop()
    site = start_site(data, tmp_path, revoked=("alice",))  # the organiser revoked alice's token
    try:
        assert _who(site, alice) is None and _who(site, bob) == "bob"
        submit = stub(site.address).SubmitBot
        request = ref_pb.SubmitBotRequest(name="x", address="127.0.0.1:1")
        assert code_of(submit, request, metadata=auth(ALICE)) == grpc.StatusCode.UNAUTHENTICATED
    finally:
        site.stop()


def test_behind_an_https_proxy_sign_in_works_with_secure_cookies(data: Path, tmp_path: Path) -> None:
    """The browser's Origin is the public https one; the proxy (a trusted address) says so in X-Forwarded-Proto."""
    site = start_site(data, tmp_path, extra_settings=PROXY)
    try:
        proxied = {"host": "referee.example.org", "x_forwarded_proto": "https", "x_forwarded_for": "203.0.113.9"}
        csrf = _csrf(site, {"host": "referee.example.org"})
        status, headers, _ = _form(site, "/signin", ALICE, "", csrf, origin=PUBLIC, **proxied)
        assert status == 303 and headers["location"] == "/authors/alice"
        session = headers["set-cookie"]
        assert "abluxx_session=" in session and "Secure" in session and "HttpOnly" in session
        cookie = session.split(";")[0]
        assert _form(site, "/signout", None, cookie, csrf, origin=PUBLIC, **proxied)[0] == 303
        assert _form(site, "/signin", ALICE, "", csrf, origin="https://evil.example", **proxied)[0] == 403
    finally:
        site.stop()


def test_without_proxy_settings_an_https_origin_is_refused_and_cookies_are_not_secure(
    data: Path, tmp_path: Path
) -> None:
    site = start_site(data, tmp_path)
    try:
        csrf = _csrf(site)
        assert _form(site, "/signin", ALICE, "", csrf, origin=PUBLIC, x_forwarded_proto="https")[0] == 403
        assert "Secure" not in _form(site, "/signin", ALICE, "", csrf)[1]["set-cookie"]
    finally:
        site.stop()


def test_site_sign_in_is_throttled_per_address_and_per_token(data: Path, tmp_path: Path) -> None:
    site = start_site(data, tmp_path, extra_settings=PROXY, auth_settings="max_failed_signins = 3\n")
    try:
        csrf = _csrf(site)
        for i in range(3):  # three wrong tokens from one reader behind the proxy
            assert _form(site, "/signin", f"wrong-{i}-token", "", csrf, x_forwarded_for="198.51.100.1")[0] == 401
        status, headers, body = _form(site, "/signin", ALICE, "", csrf, x_forwarded_for="198.51.100.1")
        assert status == 429 and int(headers["retry-after"]) > 0 and "too many failed sign-ins" in body.lower()
        assert _form(site, "/signin", ALICE, "", csrf, x_forwarded_for="198.51.100.2")[0] == 303  # another reader
        for i in range(3):  # one token tried from three addresses
            assert _form(site, "/signin", "guessed-token", "", csrf, x_forwarded_for=f"192.0.2.{i}")[0] == 401
        assert _form(site, "/signin", "guessed-token", "", csrf, x_forwarded_for="192.0.2.99")[0] == 429
    finally:
        site.stop()


def test_grpc_calls_are_throttled_per_address_as_the_site_is(data: Path, tmp_path: Path) -> None:
    site = start_site(data, tmp_path, auth_settings="max_failed_signins = 3\n")
    try:
        api = stub(site.address)
        listing = api.ListTournaments
        for i in range(3):
            assert code_of(listing, ref_pb.ListTournamentsRequest(), metadata=auth(f"wrong-{i}-token")) == (
                grpc.StatusCode.UNAUTHENTICATED
            )
        with pytest.raises(grpc.RpcError) as e:  # now even the organiser's own token, from this address
            listing(ref_pb.ListTournamentsRequest(), metadata=auth(ORGANISER))
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "too many failed sign-ins" in e.value.details()
        assert listing(ref_pb.ListTournamentsRequest()).tournaments  # reads without a token are not sign-ins
        # the site's sign-in from the same address is refused alike: one count for both
        csrf = _csrf(site)
        assert _form(site, "/signin", ALICE, "", csrf)[0] == 429
    finally:
        site.stop()


def test_in_chromium_a_cookie_kept_from_before_sign_out_signs_nobody_in(data: Path, tmp_path: Path, page_for) -> None:
    """A reader signs in and out with the page's own forms; a second browser given the session cookie copied
    before the sign-out is not signed in."""
    site = start_site(data, tmp_path)
    try:
        page = page_for()
        page.goto(site.url + "/signin")
        page.fill("input[name=token]", ALICE)
        page.click("form.signin button")
        page.wait_for_load_state()
        assert page.url.endswith("/authors/alice") and page.locator(".who a").inner_text() == "alice"
        copied = [c for c in page.context.cookies() if c["name"] == "abluxx_session"]
        page.click(".who button")  # Sign out
        page.wait_for_load_state()
        assert page.locator(".who a").inner_text() == "Sign in"
        thief = page_for()
        thief.context.add_cookies(copied)
        thief.goto(site.url + "/authors/alice")
        assert thief.locator(".who a").inner_text() == "Sign in"
    finally:
        site.stop()


def test_a_token_revoked_while_serving_ends_its_sessions_at_sighup(data: Path, tmp_path: Path) -> None:
    """The organiser removes alice's token from the settings file and sends SIGHUP: her sessions and her gRPC
    calls stop at once, without a restart; bob's go on."""
    site = start_site(data, tmp_path)
    try:
        alice, bob = _sign_in(site, ALICE), _sign_in(site, BOB)
        settings = tmp_path / "server.toml"
        settings.write_text(settings.read_text().replace('alice = "alice-secret"\n', ""))
        site.proc.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 60
        while _who(site, alice) is not None:
            assert time.monotonic() < deadline, "alice's session outlived her token's revocation"
            time.sleep(0.1)
        assert _who(site, bob) == "bob"
        request = ref_pb.SubmitBotRequest(name="x", address="127.0.0.1:1")
        assert code_of(stub(site.address).SubmitBot, request, metadata=auth(ALICE)) == grpc.StatusCode.UNAUTHENTICATED
        assert site.proc.proc.poll() is None  # SIGHUP does not stop the server
    finally:
        site.stop()


@pytest.mark.parametrize(
    "table, error",
    [
        ({"http": {"trusted_proxies": "127.0.0.1"}}, "http.trusted_proxies: must be a list of addresses or networks"),
        ({"http": {"trusted_proxies": ["proxy.example"]}}, "http.trusted_proxies: must be a list of addresses"),
        ({"http": {"public_origin": "referee.example.org"}}, "http.public_origin: must be the site's public address"),
        ({"http": {"public_origin": "https://referee.example.org/site"}}, "http.public_origin: must be the site's"),
        ({"http": {"public_origin": "ftp://referee.example.org"}}, "http.public_origin: must be the site's"),
        ({"auth": {"max_failed_signins": 0}}, "auth.max_failed_signins: 0 is out of range"),
        ({"auth": {"signin_window_s": "60"}}, "auth.signin_window_s: must be a whole number"),
    ],
)
def test_the_sign_in_and_proxy_settings_refuse_bad_values_naming_the_key(table, error) -> None:
    from referee.service.settings import ConfigError, parse

    with pytest.raises(ConfigError, match=re.escape(error)):
        parse(table, "server.toml", env={})
    proxied = parse({"http": PROXY_TABLE}, "s", env={}).http
    assert proxied.trusted_proxies == ("127.0.0.1/32", "10.0.0.0/8") and proxied.public_origin == PUBLIC
    assert "referee.example.org" in proxied.hosts()  # the public origin's host is one the site answers to


PROXY_TABLE = {"trusted_proxies": ["127.0.0.1", "10.0.0.0/8"], "public_origin": "https://Referee.example.org/"}
