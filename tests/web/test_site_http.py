"""The site over plain HTTP, from a real ``abluxx serve --http-port``: security headers on every HTML response,
CSRF on every form, caps on live streams, no trace in an error page, and a live stream that says when a game ends."""

from __future__ import annotations

import http.client
import re
import time
import urllib.parse
from pathlib import Path

import grpc
import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from tests.service.helpers import ORGANISER, auth, code_of, config, start_bot, stub, terminate

from .conftest import save_tournament
from .site import get, slow_game_in_play, start_site

HREF = re.compile(r'href="(/[^"]*)"')


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("site-http")
    data, tid = save_tournament(root / "data", ("ada", "bob", "cyd"))
    site = start_site(data, root, extra_settings="[http]\nmax_event_streams_per_client = 1\npage_size = 5\n")
    yield site, tid
    site.stop()


def test_every_html_response_has_a_content_security_policy_without_inline_script(served) -> None:
    """Every page reachable by links from the home page (and the error pages) says what it may load."""
    site, tid = served
    seen: set[str] = set()
    todo = ["/", f"/t/{tid}", f"/t/{tid}/table", "/no/such/page", f"/t/{tid}?start=x", "/signin"]
    while todo and len(seen) < 60:
        path = todo.pop(0)
        if path in seen or path.startswith(("/static/", "/download/")) or "/record." in path:  # downloads elsewhere
            continue
        seen.add(path)
        _status, headers, body = get(site.url + path)
        assert headers.get("content-type", "").startswith("text/html"), path
        csp = headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0], path
        assert "frame-ancestors 'none'" in csp, path
        assert headers.get("x-content-type-options") == "nosniff", path
        assert headers.get("x-frame-options") == "DENY", path
        assert headers.get("referrer-policy") == "same-origin", path
        assert "<script>" not in body and "onerror" not in body and "onclick" not in body, path
        assert "Traceback" not in body, path
        todo += HREF.findall(body)
    assert len(seen) > 15  # the crawl reached leaderboards, entrants, games and their pages
    assert any(p.startswith("/g/") for p in seen) and any("/e/" in p for p in seen)


def test_a_bad_parameter_is_a_plain_400_and_an_unknown_page_a_404(served) -> None:
    site, tid = served
    assert get(f"{site.url}/t/{tid}?start=-1")[0] == 400
    status, _, body = get(f"{site.url}/t/nope")
    assert status == 404 and "Traceback" not in body and 'File "' not in body


def _post(url: str, fields: dict[str, str], cookie: str = "", origin: str | None = None) -> tuple[int, str]:
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    headers = {"content-type": "application/x-www-form-urlencoded", "cookie": cookie}
    if origin:
        headers["origin"] = origin
    conn.request("POST", u.path, urllib.parse.urlencode(fields), headers)
    r = conn.getresponse()
    out = r.status, r.getheader("set-cookie") or ""
    conn.close()
    return out


def test_forms_need_their_csrf_token_and_the_session_cookie_is_httponly_and_strict(served) -> None:
    site, _ = served
    _, headers, body = get(site.url + "/signin")
    csrf_cookie = re.search(r"abluxx_csrf=([^;]+)", headers["set-cookie"])[1]
    form_token = re.search(r'name="csrf" value="([^"]+)"', body)[1]
    assert form_token == csrf_cookie
    cookie = f"abluxx_csrf={csrf_cookie}"
    assert _post(site.url + "/signin", {"token": ORGANISER}, cookie)[0] == 403  # no token in the form
    assert _post(site.url + "/signin", {"token": ORGANISER, "csrf": "x" * 43}, cookie)[0] == 403  # a wrong one
    assert _post(site.url + "/signin", {"token": ORGANISER, "csrf": form_token}, cookie,
                 origin="https://evil.example")[0] == 403  # fmt: skip
    status, set_cookie = _post(site.url + "/signin", {"token": ORGANISER, "csrf": form_token}, cookie)
    assert status == 303
    assert "abluxx_session=" in set_cookie and "HttpOnly" in set_cookie and "SameSite=strict" in set_cookie
    assert _post(site.url + "/signin", {"token": "not-a-token", "csrf": form_token}, cookie)[0] == 401
    assert _post(site.url + "/signin", {f"f{i}": "x" for i in range(9)}, cookie)[0] == 400  # not a form of ours
    assert _post(site.url + "/signin", {"token": "x" * 5000, "csrf": form_token}, cookie)[0] == 413


def _signed_in(url: str, token: str) -> str:
    """The cookies of a visitor who signed in with ``token``."""
    headers = get(url + "/signin")[1]
    csrf = re.search(r"abluxx_csrf=([^;]+)", headers["set-cookie"])[1]
    status, set_cookie = _post(url + "/signin", {"token": token, "csrf": csrf}, f"abluxx_csrf={csrf}")
    assert status == 303
    return f"abluxx_csrf={csrf}; " + set_cookie.split(";")[0]


def _open_stream(url: str) -> http.client.HTTPResponse:
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    conn.request("GET", u.path)
    return conn.getresponse()


def test_live_streams_are_capped_per_client(served) -> None:
    site, tid = served
    first = _open_stream(f"{site.url}/t/{tid}/events")
    assert first.status == 200 and first.getheader("content-type", "").startswith("text/event-stream")
    assert first.readline().startswith(b"retry:")
    second = _open_stream(f"{site.url}/t/{tid}/events")
    assert second.status == 429  # max_event_streams_per_client = 1
    first.close()
    deadline = time.monotonic() + 60
    while (third := _open_stream(f"{site.url}/t/{tid}/events")).status != 200 and time.monotonic() < deadline:
        third.close()
        time.sleep(0.2)  # the server notices the closed stream at its next write or keep-alive
    assert third.status == 200
    third.close()


def test_the_event_stream_says_when_a_game_finishes_and_sigterm_ends_it(tmp_path: Path) -> None:
    site = start_site(tmp_path / "data", tmp_path)
    try:
        s = stub(site.address)
        c = config("streamed", [{"name": "a", "policy": "random"}, {"name": "b", "policy": "greedy"}],
                   table_size=2, deals=3, seed=1)  # fmt: skip
        tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
        stream = _open_stream(f"{site.url}/t/{tid}/events")
        assert stream.status == 200
        assert stream.readline().startswith(b"retry:")
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        lines = []
        while b"event: game" not in lines[-2:] and len(lines) < 200:
            lines.append(stream.readline().strip())
        assert b"event: game" in lines
        assert terminate(site.proc) == 0  # SIGTERM drains the site with the service
    finally:
        site.stop()


def test_a_game_in_play_is_shown_only_when_the_api_would_show_it(tmp_path: Path) -> None:
    """A slow bot's game whose deal the next seat order still has to play: anonymous readers get neither its events
    on the site nor a WatchGame stream; an organiser gets both."""
    slow = start_bot("bad:slow", "--delay-ms", "600")  # under the 1 s a decision: a game of it lasts many seconds
    site = start_site(tmp_path / "data", tmp_path)
    try:
        s = stub(site.address)
        for attempt in range(3):  # o1 plays once o0 is over, and its deal is then free: read o0 while it plays
            _, game_id = slow_game_in_play(site, slow.address, f"inplay{attempt}")
            status, _, body = get(f"{site.url}/g/{game_id}")
            if game_id.endswith("-o0") and "in play" in body:
                break
        else:  # a machine so loaded that three games of many seconds each ended before one page could be read
            pytest.skip("the first seat order's game ended before it could be read, three times")
        assert status == 200 and "still to be played in 1 other game" in body
        assert 'class="events"' not in body  # no event of it
        code = code_of(lambda: next(iter(s.WatchGame(ref_pb.WatchGameRequest(game_id=game_id), timeout=30))))
        assert code == grpc.StatusCode.FAILED_PRECONDITION  # the API refuses it too
        organiser = get(f"{site.url}/g/{game_id}", {"cookie": _signed_in(site.url, ORGANISER)})[2]
        assert "still to be played" not in organiser and "in play" in organiser
    finally:
        site.stop()
        slow.stop()
