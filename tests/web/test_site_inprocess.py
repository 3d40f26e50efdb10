"""The site's application in this process (tests/web/inprocess.py), over a real SQLite store: its headers and error
pages (web/app.py), sign-in, sign-out and CSRF (web/session.py), and the JSON API and downloads (web/api.py), seen
as a browser or a script sees them. Mutation testing runs these (scripts/mutation.toml, ``site_app``)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from referee.records import read_record
from referee.web.app import CSP, PLAIN_500

from .conftest import save_tournament
from .inprocess import SETTINGS, served
from .site import half_played

ORIGIN = "http://127.0.0.1:8080"
DETAIL = "<p>{}</p>"  # an error page's one line, whole


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, str, list[str]]:
    """A finished round robin, and a tournament whose played games' decks are still to be played (withheld)."""
    data, tid = save_tournament(tmp_path_factory.mktemp("inprocess") / "data", ("ada", "bob", "zoë"))
    _, secret, _ = half_played(data, ("dee", "eve", "fay"))
    return data, tid, secret


@pytest.fixture
def site(store):
    with served(store[0]) as s:
        yield s


def _csrf(site) -> str:
    """A page's CSRF token, as its forms carry it (the cookie set with the page)."""
    page = site.get("/signin")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)[1]
    assert site.client.cookies.get("abluxx_csrf") == token
    return token


def _built(site, path: str):
    """``path`` once its standings are built: a first build takes longer than a page waits on a loaded machine
    (503, "being computed"), and goes on for the next reader."""
    deadline = time.monotonic() + 300
    while (r := site.get(path)).status_code == 503:
        assert time.monotonic() < deadline, "the standings were never built"
        time.sleep(0.2)
    return r


def _sign_in(site, token: str, **headers: str):
    return site.post("/signin", data={"token": token, "csrf": _csrf(site)}, headers={"origin": ORIGIN, **headers})


def test_every_answer_has_the_security_headers_and_only_static_files_are_cached(site, store) -> None:
    _, tid, _ = store
    for path in ("/", f"/t/{tid}/games", "/nowhere", "/static/site.js", "/static/nothing.js", "/api/", "/api/t/nope"):
        r = site.get(path)
        assert r.headers["content-security-policy"] == CSP and "form-action 'self'" in CSP
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"
        assert r.headers["referrer-policy"] == "same-origin"
        assert r.headers["cross-origin-opener-policy"] == "same-origin"
        assert r.headers["permissions-policy"] == "camera=(), microphone=(), geolocation=()"
        cached = path == "/static/site.js"
        assert ("cache-control" not in r.headers) if cached else r.headers["cache-control"] == "no-store", path
    assert site.get("/static/nothing.js").status_code == 404
    r = site.post("/")
    assert r.status_code == 405 and set(r.headers["allow"].split(", ")) == {"GET", "HEAD"} and "Error 405" in r.text


def test_a_page_says_its_server_time_and_an_unknown_one_is_a_404_page(site, store) -> None:
    _, tid, _ = store
    r = _built(site, f"/t/{tid}")
    assert r.status_code == 200 and 'data-games="6"' in r.text and "webtest" in r.text
    assert re.fullmatch(r"app;dur=\d+\.\d", r.headers["server-timing"])
    assert int(r.headers["content-length"]) == len(r.content)
    missing = site.get("/t/nope")
    assert missing.status_code == 404 and "no such tournament" in missing.text and "Traceback" not in missing.text


def test_a_page_that_fails_is_a_plain_500_with_its_headers_and_no_trace(site, monkeypatch) -> None:
    from referee.web.pages import Pages

    async def broken(self, request):
        raise RuntimeError("secret detail")

    monkeypatch.setattr(Pages, "bots", broken)
    with served(site.service.store.data) as fresh:
        r = fresh.get("/bots")
    assert r.status_code == 500 and "Something went wrong" in r.text and "The server's log says why." in r.text
    assert "secret detail" not in r.text and r.headers["content-security-policy"] == CSP


def test_sign_in_sets_an_httponly_strict_session_and_sign_out_ends_it_for_every_copy(site) -> None:
    r = _sign_in(site, "alice-secret")
    assert r.status_code == 303 and r.headers["location"] == "/authors/alice"
    cookie = r.headers["set-cookie"].lower()
    assert "abluxx_session=" in cookie and "httponly" in cookie and "samesite=strict" in cookie
    assert "secure" not in cookie and "path=/" in cookie and "max-age=43200" in cookie
    kept = site.client.cookies.get("abluxx_session")
    assert "alice" in site.get("/").text and "Sign out" in site.get("/").text
    out = site.post("/signout", data={"csrf": site.client.cookies.get("abluxx_csrf")}, headers={"origin": ORIGIN})
    assert out.status_code == 303 and out.headers["location"] == "/"
    cleared = out.headers["set-cookie"]
    assert cleared.startswith('abluxx_session=""') and "Max-Age=0" in cleared and "Path=/" in cleared
    assert "HttpOnly" in cleared and "samesite=strict" in cleared.lower() and "Secure" not in cleared
    site.client.cookies.set("abluxx_session", kept)  # a copy of the cookie kept from before the sign-out
    again = site.get("/")
    assert f"abluxx_session={kept}" in again.request.headers["cookie"]
    assert "Sign out" not in again.text  # signs nobody in


def test_signing_out_without_a_session_is_a_plain_redirect(site) -> None:
    out = site.post("/signout", data={"csrf": _csrf(site)}, headers={"origin": ORIGIN})
    assert out.status_code == 303 and out.headers["location"] == "/"


def test_an_organiser_signs_in_to_the_home_page(site) -> None:
    r = _sign_in(site, "  organiser-secret ")
    assert r.status_code == 303 and r.headers["location"] == "/"


def test_a_form_without_its_token_from_elsewhere_or_too_big_is_refused(site) -> None:
    csrf = _csrf(site)
    assert site.post("/signin", data={"token": "alice-secret"}, headers={"origin": ORIGIN}).status_code == 403
    other = site.post("/signin", data={"token": "alice-secret", "csrf": csrf}, headers={"origin": "http://evil"})
    assert other.status_code == 403 and "came from another site" in other.text
    wrong = site.post(
        "/signin",
        data={"token": "alice-secret", "csrf": csrf[:-1] + ("A" if csrf[-1] != "A" else "B")},
        headers={"origin": ORIGIN},
    )
    assert wrong.status_code == 403
    big = site.post("/signin", content=b"t=" + b"x" * 4095, headers={"origin": ORIGIN})
    assert big.status_code == 413 and "too large" in big.text
    many = "&".join(f"f{i}=1" for i in range(9))
    form = {"origin": ORIGIN, "content-type": "application/x-www-form-urlencoded"}
    fields = site.post("/signin", content=many.encode(), headers=form)
    assert fields.status_code == 400 and "the form has too many fields" in fields.text
    ok = site.post("/signin", content=f"token=alice-secret&csrf={csrf}".encode(), headers=form)
    assert ok.status_code == 303  # without Origin too (no header: an older browser)


def test_an_unknown_or_overlong_token_is_refused_and_then_throttled(store) -> None:
    settings = {**SETTINGS, "auth": {**SETTINGS["auth"], "max_failed_signins": 2}}
    with served(store[0], settings) as site:
        for token in ("nobody-secret", "x" * 201, "second-secret"):  # the overlong one is no try: not counted
            r = _sign_in(site, token)
            assert r.status_code == 401 and "not one this server knows" in r.text
        r = _sign_in(site, "third-wrong")
        assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
        assert re.search(r"Too many failed sign-ins [^<]*: try again in \d+ s\.<", r.text)
        assert _sign_in(site, "").status_code in (401, 429)


def test_closed_reads_show_the_sign_in_page_everywhere_but_sign_in_and_static(store) -> None:
    _, tid, _ = store
    settings = {**SETTINGS, "auth": {**SETTINGS["auth"], "open_reads": False}}
    with served(store[0], settings) as site:
        for path in ("/", f"/t/{tid}", "/t/nope", "/api/tournaments", "/bots"):
            r = site.get(path)
            assert r.status_code == 401 and "for signed-in readers" in r.text, path
        assert site.get("/signin").status_code == 200 and site.get("/static/site.js").status_code == 200
        assert _sign_in(site, "alice-secret").status_code == 303
        assert site.get(f"/t/{tid}").status_code == 200


def test_behind_an_https_proxy_cookies_are_secure_and_forms_come_from_the_public_origin(store) -> None:
    http = {**SETTINGS["http"], "public_origin": "https://referee.example.org", "trusted_proxies": ["203.0.113.7"]}
    with served(store[0], {**SETTINGS, "http": http}) as site:
        csrf = _csrf(site)
        sent = {"origin": "https://referee.example.org", "cookie": f"abluxx_csrf={csrf}"}  # a Secure cookie, by https
        r = site.post("/signin", data={"token": "alice-secret", "csrf": csrf}, headers=sent)
        assert r.status_code == 303 and "secure" in r.headers["set-cookie"].lower()
        session = r.headers["set-cookie"].split(";")[0]
        out = site.post("/signout", data={"csrf": csrf}, headers={**sent, "cookie": f"{sent['cookie']}; {session}"})
        assert out.status_code == 303 and "Secure" in out.headers["set-cookie"]


def test_the_api_lists_pages_and_errors_as_json(site, store) -> None:
    _, tid, _ = store
    index = site.get("/api/").json()
    assert "/api/t/ID/standings" in index["endpoints"] and index["docs"] == "docs/web.md, JSON API"
    first = site.get("/api/tournaments").json()
    assert first["next"] is None and tid in [t["id"] for t in first["items"]] and len(first["items"]) == 2
    t = site.get(f"/api/t/{tid}").json()
    assert (t["name"], t["kind"], t["games"], t["done"], t["state"]) == ("webtest", "tournament", 6, 6, "created")
    missing = site.get("/api/t/nope")
    assert missing.status_code == 404 and missing.json() == {"error": "no such tournament or ladder on this server",
                                                             "status": 404}  # fmt: skip
    assert missing.headers["content-type"] == "application/json"
    bad = site.get(f"/api/t/{tid}/games?before=²")
    assert bad.status_code == 400 and bad.json()["status"] == 400
    assert site.get("/api/live").json() == {"items": [], "next": None}
    assert site.get("/api/bots").json() == {"items": [], "next": None}
    nobody = site.get("/api/bots/nobody")
    assert nobody.status_code == 404 and nobody.json() == {"error": "no such bot on this server", "status": 404}


def test_the_api_pages_standings_and_games_and_gives_records(site, store) -> None:
    _, tid, _ = store
    standings = _built(site, f"/api/t/{tid}/standings").json()
    assert len(standings["rows"]) == 2 and standings["next"] == f"/api/t/{tid}/standings?start=2"
    rest = site.get(standings["next"]).json()
    assert len(rest["rows"]) == 1 and rest["next"] is None
    named = {r["entrant"] for r in standings["rows"] + rest["rows"]}
    assert named == {"ada", "bob", "zoë"}
    assert b"zo\\u00eb" in site.get(f"/api/t/{tid}/standings?start=0&q=zo").content  # written as an escape
    games, seen = site.get(f"/api/t/{tid}/games?entrant=ada").json(), []
    while True:
        seen += [g["game_id"] for g in games["items"]]
        if games["next"] is None:
            break
        assert "entrant=ada" in games["next"] and "before=" in games["next"]
        games = site.get(games["next"]).json()
    assert len(seen) == len(set(seen)) == 6
    record = site.get(f"/api/games/{seen[0]}").json()
    assert record["header"]["game_id"] == seen[0] and record["deal_withheld"] is False and record["decisions"]
    assert site.get("/api/games/nope").status_code == 404


def test_a_record_downloads_as_the_record_file_and_as_json(site, store, tmp_path: Path) -> None:
    _, tid, _ = store
    game = site.get(f"/api/t/{tid}/games").json()["items"][0]["game_id"]
    raw = site.get(f"/g/{game}/record.abluxx")
    assert raw.status_code == 200 and raw.headers["content-type"] == "application/octet-stream"
    assert raw.headers["content-disposition"] == f'attachment; filename="{game}.abluxx"'
    (tmp_path / "r.abluxx").write_bytes(raw.content)
    assert read_record(tmp_path / "r.abluxx").header.game_id == game
    as_json = site.get(f"/g/{game}/record.json")
    assert as_json.headers["content-disposition"] == f'attachment; filename="{game}.json"'
    assert (
        json.loads(as_json.content)["header"]["game_id"] == game
        and as_json.headers["content-type"] == "application/json"
    )
    assert (
        as_json.content.startswith(b'{\n "header": {\n  "') and b"zo\\u00eb" in as_json.content
    )  # indented, ASCII only
    other = site.get(f"/g/{game}/record.txt")
    assert (
        other.status_code == 404 and DETAIL.format("a record downloads as record.abluxx or record.json") in other.text
    )
    assert site.get("/g/nope/record.json").status_code == 404


def test_no_deck_leaves_the_api_or_a_download_before_its_reveal(site, store) -> None:
    _, _, secret = store
    record = site.get(f"/api/games/{secret[0]}").json()
    assert record["deal_withheld"] is True and record["decisions"] == [] and record["header"]["game_id"] == secret[0]
    raw = site.get(f"/g/{secret[0]}/record.abluxx")
    assert (
        raw.status_code == 409
        and DETAIL.format("this game&#39;s deal is still to be played elsewhere: its record is shown after") in raw.text
    )
    assert json.loads(site.get(f"/g/{secret[0]}/record.json").content)["deal_withheld"] is True
    assert _sign_in(site, "organiser-secret").status_code == 303
    assert site.get(f"/g/{secret[0]}/record.abluxx").status_code == 200  # an organiser sees everything


def test_when_the_error_page_itself_fails_a_plain_500_still_has_its_headers(store, monkeypatch) -> None:
    from referee.web.pages import Pages
    from referee.web.render import Renderer

    async def broken(self, request):
        raise RuntimeError("secret detail")

    def unrenderable(self, template, context):
        raise RuntimeError("no templates")

    monkeypatch.setattr(Pages, "bots", broken)
    monkeypatch.setattr(Renderer, "now", unrenderable)
    with served(store[0]) as site:
        r = site.get("/bots")
    assert r.status_code == 500 and r.text == PLAIN_500 and r.headers["content-security-policy"] == CSP


def test_a_downloads_file_name_keeps_only_what_a_file_name_and_a_header_take() -> None:
    from referee.web.api import _file_name

    assert _file_name('t-1/../é"x.y_z') == "t-1_..___x.y_z"
    assert _file_name("g" * 150) == "g" * 100 and _file_name("") == "game"


def test_a_revoked_tokens_sessions_end_as_the_site_starts(store) -> None:
    from referee.store import open_store

    def sessions_of(name: str) -> int:
        with open_store(store[0]) as s:
            return s.db.execute("SELECT COUNT(*) FROM site_sessions WHERE principal = ?", (name,)).fetchone()[0]

    with served(store[0]) as site:
        assert _sign_in(site, "alice-secret").status_code == 303
    assert sessions_of("alice") >= 1
    revoked = {**SETTINGS, "auth": {"organiser_tokens": ["organiser-secret"], "authors": {}}}
    with served(store[0], revoked) as site:
        assert site.get("/").status_code == 200  # served after its store was opened, on the site's thread
    assert sessions_of("alice") == 0
