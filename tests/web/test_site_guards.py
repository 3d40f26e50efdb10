"""The site's small guards, each over HTTP against a real ``abluxx serve --http-port`` (issue 46's lows): paging
parameters that are not ASCII digits, a session cookie that is not ASCII, the Host header, a request head sent
slowly or not at all, 405's Allow, a static 404 not cached, Hello texts escaped, live streams that a finished
tournament does not hold and a burst cannot slip past, closed reads that do not tell which ids exist, and a
refused bot's validation game for its author."""

from __future__ import annotations

import http.client
import json
import re
import socket
import time
import urllib.parse

import pytest

from referee.service.registry import Registry
from referee.store import open_store
from tests.service.helpers import ALICE, BOB, ORGANISER, start_bot, stub, submit

from .conftest import save_tournament
from .site import get, start_site
from .test_site_http import _signed_in

SETTINGS = (
    '[http]\nmax_event_streams_per_client = 1\nallowed_hosts = ["referee.example.org"]\n'
    "header_timeout_s = 2\nidle_timeout_s = 1\n"
)
# A Hello text that reorders what follows it (U+202E), clears a terminal and returns to the line's start.
HOSTILE_VERSION = "1.0\u202egnp.exe\x1b[2J"
HOSTILE_AUTHOR = "mallory\rroot"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A site with one tournament in progress (live), one finished, and a bot whose Hello texts are hostile."""
    root = tmp_path_factory.mktemp("site-guards")
    data, live = save_tournament(root / "data", ("ada", "bob", "cyd"))
    _, done = save_tournament(root / "data", ("dee", "eve", "fay"))
    with open_store(data) as store:
        store.finish(done, {}, len(store.games(done)))
        Registry(store).add_bot("hostile", "127.0.0.1:9", "alice", HOSTILE_VERSION, HOSTILE_AUTHOR, "")
    s = start_site(data, root, extra_settings=SETTINGS)
    yield s, live, done
    s.stop()


def _request(url: str, method: str = "GET", headers: dict[str, str | bytes] | None = None):
    """(status, headers with lower-case names, body) of any request, with headers sent as given (bytes too)."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.putrequest(method, u.path + (f"?{u.query}" if u.query else ""), skip_host="host" in (headers or {}))
    for k, v in (headers or {}).items():
        conn.putheader(k, v)
    conn.endheaders()
    r = conn.getresponse()
    out = r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode("utf-8", "replace")
    conn.close()
    return out


def test_paging_parameters_take_only_ascii_digits(site) -> None:
    """``str.isdigit`` takes ``²`` and other scripts' digits, which int() refuses: they were a 500."""
    s, live, _ = site
    for path in (
        f"/t/{live}?start=%C2%B2",
        f"/t/{live}/games?before=%D9%A1",
        "/bots?before=%E2%91%A0",
        "/live?start=%C2%B9",
    ):
        status, headers, body = get(s.url + path)
        assert status == 400 and "must be a whole number" in body, (path, status)
        assert "content-security-policy" in headers
    assert get(f"{s.url}/bots/hostile/validation/%C2%B2")[0] == 404
    assert get(f"{s.url}/t/{live}?start=1")[0] == 200


def test_a_session_cookie_that_is_not_ascii_is_no_session(site) -> None:
    """It made every page a bare 500 without the security headers; it is now no sign-in at all."""
    s, live, _ = site
    for cookie in ("abluxx_session=\xc3\xa9t\xc3\xa9.\xc3\xa9".encode("latin-1"), b"abluxx_session=e30.\xff\xfe"):
        for path in ("/", f"/t/{live}", "/no/such/page"):
            status, headers, body = _request(s.url + path, headers={"cookie": cookie})
            assert status in (200, 404) and "content-security-policy" in headers, (path, status)
            assert "Sign in" in body  # nobody is signed in


def test_the_site_answers_only_to_its_host_names_and_redirects_relatively(site) -> None:
    s, _, _ = site
    port = urllib.parse.urlsplit(s.url).port
    for host in ("evil.example", f"evil.example:{port}", "referee.example.org.evil.example"):
        status, headers, _ = _request(s.url + "/", headers={"host": host})
        assert status == 400 and "content-security-policy" in headers, host
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "referee.example.org", f"REFEREE.example.org:{port}"):
        assert _request(s.url + "/", headers={"host": host})[0] == 200, host
    # no redirect spells out a host: an extra slash is not sent elsewhere, and sign-in's redirect is a path
    status, headers, _ = _request(s.url + "/bots/", headers={"host": "referee.example.org"})
    assert status == 404 and "location" not in headers
    cookie = _signed_in(s.url, ORGANISER)
    assert "abluxx_session=" in cookie


def test_a_request_head_must_arrive_in_time_and_an_idle_connection_is_closed(site) -> None:
    """header_timeout_s = 2: a connection that sends nothing, or half a request, or dribbles its headers a byte
    at a time, is closed (before: held for ever); idle_timeout_s = 1: a kept-alive connection left idle is closed."""
    s, _, _ = site
    u = urllib.parse.urlsplit(s.url)
    silent, half, dribbler = (socket.create_connection((u.hostname, u.port), timeout=60) for _ in range(3))
    half.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    for sock in (silent, half):
        assert sock.recv(100) == b""  # closed by the server (a hang here is the bug: recv times out after 60 s)
    started = time.monotonic()
    closed = False
    dribbler.sendall(b"GET / HTTP/1.1\r\n")
    while not closed and time.monotonic() - started < 60:
        try:
            dribbler.sendall(b"X")
        except OSError:
            closed = True
        time.sleep(0.2)
    assert closed, "a dribbled request head held its connection for 60 s"

    kept = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    kept.request("GET", "/")
    assert kept.getresponse().read()
    assert kept.sock.recv(100) == b""  # the idle connection was closed by the server
    for sock in (silent, half, dribbler):
        sock.close()
    kept.close()


def test_a_405_says_which_methods_are_allowed(site) -> None:
    s, live, _ = site
    for path, method, allowed in (("/signin", "PUT", {"GET", "HEAD", "POST"}), ("/", "DELETE", {"GET", "HEAD"}),
                                  (f"/t/{live}", "POST", {"GET", "HEAD"})):  # fmt: skip
        status, headers, _ = _request(s.url + path, method)
        assert status == 405, (path, method)
        assert {m.strip() for m in headers.get("allow", "").split(",")} == allowed, headers


def test_a_static_files_404_is_not_cached_as_no_page_is(site) -> None:
    """A static 404 is an error page that names who is signed in and carries the CSRF token: never cached."""
    s, _, _ = site
    cookie = _signed_in(s.url, ALICE)
    status, headers, body = _request(s.url + "/static/nope.css", headers={"cookie": cookie})
    assert status == 404 and "alice" in body
    assert headers.get("cache-control") == "no-store"
    status, headers, _ = _request(s.url + "/static/site.css")
    assert status == 200 and headers.get("cache-control") != "no-store"  # a static file served may be cached


def test_hello_texts_are_shown_with_their_controls_escaped_as_the_cli_shows_them(site) -> None:
    s, _, _ = site
    status, _, body = get(s.url + "/bots/hostile")
    assert status == 200
    assert "\u202e" not in body and "\x1b" not in body and "\r" not in body
    assert "1.0\\u202egnp.exe\\x1b[2J" in body and "mallory\\rroot" in body


def _stream(url: str) -> tuple[int, bytes]:
    """(status, its first line) of a live stream, then closed."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    try:
        conn.request("GET", u.path)
        r = conn.getresponse()
        return r.status, (r.readline() if r.status == 200 else r.read())
    finally:
        conn.close()


def test_a_finished_tournament_holds_no_live_stream(site) -> None:
    """204: an EventSource stops there and does not reconnect, and no place under the caps is taken (the cap per
    client is 1 here: the live tournament's stream is still granted after many)."""
    s, live, done = site
    for _ in range(5):
        assert _stream(f"{s.url}/t/{done}/events") == (204, b"")
    status, first = _stream(f"{s.url}/t/{live}/events")
    assert status == 200 and first.startswith(b"retry:")


def test_every_stream_refused_in_a_burst_is_a_429(site) -> None:
    """20 requests of one reader at once, with a cap of 1 per client: one stream, and each refused one a 429, never
    a 200 with an empty body.
    The 20 connections are opened first and their requests written back to back, so the server reads them in one
    turn of its loop."""
    s, live, _ = site
    u = urllib.parse.urlsplit(s.url)
    cookie = _signed_in(s.url, BOB)  # bob's streams are counted apart from the other tests' (by address)
    socks = [socket.create_connection((u.hostname, u.port), timeout=60) for _ in range(20)]
    request = f"GET /t/{live}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n\r\n".encode()
    for sock in socks:
        sock.sendall(request)
    got = []
    for sock in socks:
        r = http.client.HTTPResponse(sock)
        r.begin()
        got.append((r.status, r.readline() if r.status == 200 else r.read()))
    for sock in socks:
        sock.close()
    assert all(status == 429 or line.startswith(b"retry:") for status, line in got), got
    assert [status for status, _ in got].count(200) == 1, got


def test_a_refused_bots_validation_game_is_shown_to_its_author_and_organisers_only(site) -> None:
    s, _, _ = site
    bot = start_bot("bad:hostile")
    try:
        refusal = submit(stub(s.address), "hostile2", bot.address, ALICE).refusal
    finally:
        bot.stop()
    assert refusal.game_id, refusal
    url = f"{s.url}/g/{refusal.game_id}"
    for token in (ALICE, ORGANISER):
        status, _, body = get(url, {"cookie": _signed_in(s.url, token)})
        assert status == 200 and "game-data" in body, (token, status)
    # its Hello texts and fault details (terminal escapes, from the bot) reach the viewer's script escaped
    data = json.loads(body.split('id="game-data">')[1].split("</script>")[0])
    texts = list(_strings(data))
    assert not [t for t in texts if CONTROLS.search(t)], [t for t in texts if CONTROLS.search(t)]
    assert any("\\x1b]0;pwned" in t for t in texts)
    assert get(url)[0] == 404
    assert get(url, {"cookie": _signed_in(s.url, BOB)})[0] == 404


CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _strings(value):
    """Every string in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@pytest.fixture(scope="module")
def closed(tmp_path_factory):
    root = tmp_path_factory.mktemp("site-closed")
    data, tid = save_tournament(root / "data", ("ada", "bob", "cyd"))
    with open_store(data) as store:
        game = store.games(tid)[0].game_id
    s = start_site(data, root, open_reads=False)
    yield s, tid, game
    s.stop()


def test_with_closed_reads_an_anonymous_reader_cannot_tell_which_ids_exist(closed) -> None:
    s, tid, game = closed
    for real, made_up in ((f"/t/{tid}", "/t/nope"), (f"/t/{tid}/events", "/t/nope/events"), (f"/g/{game}", "/g/nope"),
                          (f"/t/{tid}/e/ada", f"/t/{tid}/e/nobody"), ("/bots", "/no/such/page")):  # fmt: skip
        a, b = get(s.url + real), get(s.url + made_up)
        assert a[0] == b[0] == 401, (real, a[0], made_up, b[0])
        assert "Sign in" in a[2] and "Sign in" in b[2]
    assert get(s.url + "/signin")[0] == 200 and get(s.url + "/static/site.css")[0] == 200
    cookie = _signed_in(s.url, BOB)
    assert get(s.url + "/t/nope", {"cookie": cookie})[0] == 404


@pytest.mark.parametrize(
    "http, error",
    [
        ({"allowed_hosts": "referee.example.org"}, "http.allowed_hosts: must be a list of host names without port"),
        ({"allowed_hosts": ["referee.example.org:443"]}, "http.allowed_hosts: must be a list of host names"),
        ({"allowed_hosts": ["*"]}, "http.allowed_hosts: must be a list of host names"),
        ({"header_timeout_s": 0}, "http.header_timeout_s"),
        ({"idle_timeout_s": 7200}, "http.idle_timeout_s"),
        ({"render_processes": -1}, "http.render_processes"),
    ],
)
def test_the_new_site_settings_refuse_bad_values_naming_the_key(http, error) -> None:
    from referee.service.settings import ConfigError, parse

    with pytest.raises(ConfigError, match=error.replace(".", r"\.")):
        parse({"http": http}, "server.toml", env={})
    hosts = parse({"http": {"host": "::1", "allowed_hosts": ["Referee.example.org", "*.example.net"]}}, "s", env={})
    assert hosts.http.hosts() == ["localhost", "127.0.0.1", "[::1]", "referee.example.org", "*.example.net"]
