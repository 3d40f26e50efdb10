"""The home page's and ``/live``'s lists of the games being played now follow the games in Chromium, without a
reload: a game that starts shows up, and one that ends goes (issue 46, item 5)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from tests.service.helpers import ORGANISER, auth, config, start_bot, stub

from .site import start_site, wait_ready

SLOW = 120_000  # ms: a first page on a loaded machine


def _playing(page) -> list[str]:
    """The game ids the page's list of the games being played now links."""
    return re.findall(r'href="/g/([^"]+)"', page.inner_html("#playing-now"))


def _until(pages, check, what: str, timeout_s: float = 120) -> None:
    """Polled from here (the page's CSP forbids the eval that playwright's wait_for_function needs)."""
    deadline = time.monotonic() + timeout_s
    while not all(check(_playing(p)) for p in pages):
        assert time.monotonic() < deadline, f"{what}: the pages show {[_playing(p) for p in pages]}"
        pages[0].wait_for_timeout(100)


def test_the_home_page_and_live_list_games_as_they_start_and_end_without_a_reload(tmp_path: Path, page_for) -> None:
    slow = start_bot("bad:slow", "--delay-ms", "150")  # a game of it lasts seconds: long enough to be seen
    site = start_site(tmp_path / "data", tmp_path)
    try:
        wait_ready(f"{site.url}/")
        pages = [page_for(1280, 900), page_for(390, 800)]
        for page, path in zip(pages, ("/", "/live"), strict=True):
            page.goto(site.url + path, timeout=SLOW)
            assert "No game is being played right now." in page.inner_text("#playing-now")
            page.evaluate("window.loadedOnce = true")  # gone if the page reloads
            page.wait_for_selector("#live-status:text-is('live')", timeout=SLOW)  # the stream is open
        s = stub(site.address)
        c = config("now", [{"name": "slow", "address": slow.address}, {"name": "house", "policy": "random"}],
                   table_size=2, deals=1, seed=2, seat_orders="rotations", concurrency=1)  # fmt: skip
        tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        _until(pages, lambda ids: len(ids) == 1, "a game started")
        first = _playing(pages[0])[0]
        assert "slow, house" in pages[0].inner_text("#playing-now") or "house, slow" in pages[0].inner_text(
            "#playing-now"
        )
        _until(pages, lambda ids: first not in ids, "the first game ended")
        _until(pages, lambda ids: not ids, "the last game ended")
        for page in pages:
            assert page.evaluate("window.loadedOnce") is True
            assert "No game is being played right now." in page.inner_text("#playing-now")
            assert page.errors == []
    finally:
        site.stop()
        slow.stop()
