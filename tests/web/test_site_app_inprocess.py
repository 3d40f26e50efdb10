"""More of the site's application in this process (tests/web/inprocess.py, web/app.py): the server time a page
reports, a static file's revalidation, the words of a refusal, the live-update streams' caps and their gauge, pages
rendered in render processes, and what the operator's log says. Mutation testing runs these (scripts/mutation.toml,
``site_app``)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from structlog.testing import capture_logs

from referee.web.render import Renderer

from .inprocess import SETTINGS, served
from .test_site_inprocess import ORIGIN, _csrf, _sign_in

pytestmark = pytest.mark.usefixtures("every_log_level")  # tests/conftest.py: capture_logs sees info events
SLOW_S = 0.5  # how long a slow browser takes to send its form


def _settings(**http: object) -> dict:
    return {**SETTINGS, "http": {**SETTINGS["http"], **http}}


def test_a_pages_server_time_counts_from_when_the_request_came_not_from_when_it_was_rendered(tmp_path) -> None:
    with served(tmp_path / "data") as site:
        body = f"token=wrong-secret&csrf={_csrf(site)}".encode()

        async def slowly() -> AsyncIterator[bytes]:
            await asyncio.sleep(SLOW_S)
            yield body

        form = {"origin": ORIGIN, "content-type": "application/x-www-form-urlencoded"}
        r = site.post("/signin", content=slowly(), headers=form)
    assert r.status_code == 401
    assert float(re.fullmatch(r"app;dur=(\d+\.\d)", r.headers["server-timing"])[1]) >= SLOW_S * 1000


def test_a_static_file_revalidated_is_a_304_that_may_be_cached(tmp_path) -> None:
    with served(tmp_path / "data") as site:
        first = site.get("/static/site.js")
        again = site.get("/static/site.js", headers={"if-none-match": first.headers["etag"]})
    assert again.status_code == 304 and "cache-control" not in again.headers
    assert again.headers["x-frame-options"] == "DENY"


def test_refusals_say_why_in_full(tmp_path) -> None:
    closed = {**SETTINGS, "auth": {**SETTINGS["auth"], "open_reads": False}}
    with served(tmp_path / "data", closed) as site:
        assert '<p class="note">This server&#39;s pages are for signed-in readers.</p>' in site.get("/").text
        wrong = _sign_in(site, "wrong-secret")
    assert '<p class="note">That token is not one this server knows.</p>' in wrong.text


def test_live_streams_are_capped_per_client_and_counted_for_the_operator(tmp_path) -> None:
    gauge = "abluxx_site_streams_open"
    with served(tmp_path / "data", _settings(max_event_streams=2, max_event_streams_per_client=1)) as site:
        assert REGISTRY.get_sample_value(gauge) == 0
        held = asyncio.run_coroutine_threadsafe(site.client.get("/live/events"), site.site_loop)  # stays open
        try:
            refused = site.get("/live/events")  # the same visitor's second stream
            assert refused.status_code == 429 and "too many live streams open" in refused.text
            assert REGISTRY.get_sample_value(gauge) == 1
            assert _sign_in(site, "alice-secret").status_code == 303
            other = asyncio.run_coroutine_threadsafe(site.client.get("/live/events"), site.site_loop)  # alice's
            try:
                _until(lambda: REGISTRY.get_sample_value(gauge) == 2)
                site.client.cookies.clear()
                assert site.get("/live/events").status_code == 429  # the server's whole cap: 2
            finally:
                other.cancel()
        finally:
            held.cancel()


def _until(done, timeout_s: float = 60) -> None:
    loop = asyncio.new_event_loop()
    try:
        deadline = loop.time() + timeout_s
        while not done():
            assert loop.time() < deadline, "never happened"
            loop.run_until_complete(asyncio.sleep(0.05))
    finally:
        loop.close()


def test_with_render_processes_pages_are_rendered_in_them_not_on_the_sites_thread(tmp_path, monkeypatch) -> None:
    def not_here(self, template, context):
        raise RuntimeError("rendered on the site's thread")

    with served(tmp_path / "data", _settings(render_processes=1)) as site:
        monkeypatch.setattr(Renderer, "now", not_here)
        r = site.get("/signin")
    assert r.status_code == 200 and 'name="csrf"' in r.text


def test_the_log_says_who_was_refused_and_which_page_failed(tmp_path: Path, monkeypatch) -> None:
    from referee.web.pages import Pages

    async def broken(self, request):
        raise RuntimeError("secret detail")

    def unrenderable(self, template, context):
        raise RuntimeError("no templates")

    settings = {**SETTINGS, "auth": {**SETTINGS["auth"], "max_failed_signins": 1}}
    monkeypatch.setattr(Pages, "bots", broken)
    with capture_logs() as logs, served(tmp_path / "data", settings) as site:
        assert _sign_in(site, "wrong-secret").status_code == 401
        assert _sign_in(site, "again-wrong").status_code == 429
        assert site.get("/bots").status_code == 500
        monkeypatch.setattr(Renderer, "now", unrenderable)
        assert site.get("/bots").status_code == 500
    seen = [(e["event"], e["log_level"], e.get("service"), e.get("peer"), e.get("path")) for e in logs
            if e.get("service") == "site"]  # fmt: skip
    assert seen == [
        ("site sign-in refused", "warning", "site", "203.0.113.7", None),
        ("site sign-in throttled", "warning", "site", "203.0.113.7", None),
        ("page failed", "error", "site", None, "/bots"),
        ("page failed", "error", "site", None, "/bots"),
        ("error page failed", "error", "site", None, "/bots"),
    ]


def test_the_log_says_how_many_sessions_a_revoked_token_ended(tmp_path: Path) -> None:
    with served(tmp_path / "data") as site:
        for _ in range(2):
            assert _sign_in(site, "alice-secret").status_code == 303
            site.client.cookies.clear()
    revoked = {**SETTINGS, "auth": {**SETTINGS["auth"], "authors": {}}}
    with capture_logs() as logs, served(tmp_path / "data", revoked) as site:
        assert site.get("/").status_code == 200
    ended = [e for e in logs if e["event"] == "site sessions ended: their tokens are revoked"]
    assert [(e["log_level"], e["service"], e["sessions"]) for e in ended] == [("info", "site", 2)]


def test_a_forms_mistakes_are_named_and_a_byte_that_is_not_utf8_is_no_error(tmp_path) -> None:
    form = {"origin": ORIGIN, "content-type": "application/x-www-form-urlencoded"}
    with served(tmp_path / "data") as site:
        plain = site.get("/signin")
        assert plain.status_code == 200 and 'class="note"' not in plain.text
        csrf = _csrf(site)
        odd = site.post("/signin", content=b"token=\xff\xfe&csrf=" + csrf.encode(), headers=form)
        assert odd.status_code == 401 and "That token is not one this server knows." in odd.text
        big = site.post("/signin", content=b"t=" + b"x" * 4095, headers=form)
        many = site.post("/signin", content="&".join(f"f{i}=1" for i in range(9)).encode(), headers=form)
        stale = site.post("/signin", content=b"token=alice-secret&csrf=" + b"x" * 43, headers=form)
    assert (big.status_code, many.status_code, stale.status_code) == (413, 400, 403)
    assert "<p>the form is too large</p>" in big.text and "<p>the form has too many fields</p>" in many.text
    stale_why = "the form is out of date or came from another site; load the page and try again"
    assert f"<p>{stale_why}</p>" in stale.text


def test_a_stopped_site_leaves_no_database_open(tmp_path) -> None:
    """SQLite removes a WAL database's ``-wal`` file when its last connection closes: the site's own is closed."""
    with served(tmp_path / "data") as site:
        assert site.get("/").status_code == 200
        wal = Path(site.service.store.path).with_name(Path(site.service.store.path).name + "-wal")
        assert wal.exists()
    assert not wal.exists()
