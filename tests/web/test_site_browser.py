"""The site in Chromium, served by a real ``abluxx serve --http-port``: a leaderboard that follows a running
tournament without a reload, hostile names shown as text, an author's private page, no deck before its reveal, and
tables that fit a phone."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records import record_selfplay
from referee.records.paths import VALIDATION, record_in
from referee.service.registry import Registry
from referee.store import open_store
from referee.terminal import printable
from tests.service.helpers import ALICE, BOB, ORGANISER, auth, config, stub

from .conftest import save_tournament
from .site import half_played, start_site, wait_ready

HOSTILE = ("<b>ada</b>", "</script><img src=x>", "\x1b[31mred\x1b]0;title\x07")
SLOW = 120_000  # ms: a first page builds the standings (and imports scipy) on a loaded machine


def _sign_in(page, url: str, token: str) -> None:
    page.goto(url + "/signin", timeout=SLOW)
    page.fill("input[name=token]", token)
    page.click("form.signin button")
    page.wait_for_load_state()


def _follow(page, link: str, url: str) -> None:
    """Click ``link`` and wait until the page it opens (its address matching the pattern ``url``) has loaded."""
    page.click(link)
    page.wait_for_url(re.compile(url), timeout=SLOW)  # waits for the new page's load event


def _games_shown(page, above: int, timeout_s: float = 120) -> int:
    """The games the leaderboard's table counts, once it counts more than ``above`` (polled from here: the page's
    CSP forbids the eval that playwright's wait_for_function needs)."""
    deadline = time.monotonic() + timeout_s
    while (shown := int(page.get_attribute("#board-table", "data-games") or 0)) <= above:
        assert time.monotonic() < deadline, f"the leaderboard still shows {shown} games"
        page.wait_for_timeout(100)
    return shown


def test_the_leaderboard_updates_while_games_finish_without_a_reload(tmp_path: Path, page_for) -> None:
    site = start_site(tmp_path / "data", tmp_path)
    try:
        s = stub(site.address)
        c = config("live", [{"name": n, "policy": p} for n, p in (("a", "random"), ("b", "greedy"), ("c", "random"))],
                   table_size=2, deals=30, seed=3, concurrency=1)  # fmt: skip
        tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
        page = page_for(1280, 900)
        wait_ready(f"{site.url}/t/{tid}")
        page.goto(f"{site.url}/t/{tid}", timeout=SLOW)
        assert page.get_attribute("#board-table", "data-games") == "0"
        page.evaluate("window.loadedOnce = true")  # gone if the page reloads
        page.wait_for_selector("#board-status:text-is('live')", timeout=SLOW)  # the stream is open
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        first = _games_shown(page, above=0)
        _games_shown(page, above=first)
        assert page.evaluate("window.loadedOnce") is True
        assert "of 90 games played" in page.inner_text("#board-table caption")
        assert page.errors == []
    finally:
        site.stop()


def test_hostile_names_and_bot_texts_show_as_plain_text(tmp_path: Path, page_for) -> None:
    data, tid = save_tournament(tmp_path / "data", HOSTILE)
    with open_store(data) as store:
        Registry(store).add_bot("evil", "127.0.0.1:1", "alice", "</script><script>alert(1)</script>",
                                "<img src=x onerror=alert(2)>\x1b[2J", "validate-evil-1")  # fmt: skip
    site = start_site(data, tmp_path)
    try:
        page = page_for(1280, 900)
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{site.url}/t/{tid}", timeout=SLOW)
        cells = page.locator("#board-table td.name a").all_inner_texts()
        # markup as text; control characters written as escapes, as the CLI writes them
        assert sorted(cells) == sorted(printable(h) for h in HOSTILE) and "\\x1b[31mred" in "".join(cells)
        assert page.locator("#board-table b, #board-table img, main img").count() == 0
        page.goto(f"{site.url}/t/{tid}/e/{HOSTILE[1]}", timeout=SLOW)  # its own page, by its name
        assert page.locator("h1").inner_text().startswith(HOSTILE[1])
        page.goto(f"{site.url}/bots/evil", timeout=SLOW)
        texts = page.locator("td.text").all_inner_texts()
        assert "</script><script>alert(1)</script>" in texts[0] and "\\x1b[2J" in " ".join(texts)
        assert page.locator("main img, main script").count() == 0
        assert dialogs == [] and page.errors == []
    finally:
        site.stop()


def _two_authors_bots(data: Path) -> None:
    """A bot of alice's and one of bob's, each with its validation game's record."""
    with open_store(data) as store:
        registry = Registry(store)
        for bot, owner, port in (("alices", "alice", 40001), ("bobs", "bob", 40002)):
            game = f"validate-{bot}-1"
            registry.add_bot(bot, f"127.0.0.1:{port}", owner, "1.0", owner, game)
            record_selfplay(port, [bot, "greedy", "random"], game_id=game,
                            path=record_in(data / VALIDATION, game))  # fmt: skip


def test_signing_in_shows_the_authors_private_page_and_no_one_elses(tmp_path: Path, page_for) -> None:
    data, _ = save_tournament(tmp_path / "data", ("ada", "bob", "cyd"))
    _two_authors_bots(data)
    site = start_site(data, tmp_path)
    try:
        page = page_for(1280, 900)
        for path in ("/authors/alice", "/bots/alices", "/authors/bob", "/bots/bobs"):
            page.goto(site.url + path, timeout=SLOW)
            assert "127.0.0.1:4000" not in page.content()  # anonymous: no address
        _sign_in(page, site.url, ALICE)
        assert page.url.endswith("/authors/alice")
        assert "127.0.0.1:40001" in page.inner_text("main") and "validate-alices-1" in page.inner_text("main")
        page.goto(site.url + "/bots/alices", timeout=SLOW)
        assert "127.0.0.1:40001" in page.inner_text("main")
        page.click("a:text-is('validate-alices-1')")  # her validation game, in the viewer
        page.wait_for_selector("#game-data", state="attached")
        assert "validate-alices-1" in page.inner_text("header.page")
        for path in ("/authors/bob", "/bots/bobs", "/bots/bobs/validation/1"):
            page.goto(site.url + path, timeout=SLOW)
            assert "127.0.0.1:40002" not in page.content() and "validate-bobs-1" not in page.content()
            assert page.locator("#game-data").count() == 0
        page.click("form[action='/signout'] button")
        page.wait_for_load_state()
        page.goto(site.url + "/authors/alice", timeout=SLOW)
        assert "127.0.0.1:40001" not in page.content()
        _sign_in(page, site.url, BOB)
        page.goto(site.url + "/authors/bob", timeout=SLOW)
        assert "127.0.0.1:40002" in page.inner_text("main") and "127.0.0.1:40001" not in page.content()
    finally:
        site.stop()


def test_no_page_holds_a_deck_before_its_reveal(tmp_path: Path, page_for) -> None:
    data = tmp_path / "data"
    tid, played, pending = half_played(data, ("ada", "bob", "cyd"))
    site = start_site(data, tmp_path)
    try:
        page = page_for(1280, 900)
        paths = ["/", f"/t/{tid}", f"/t/{tid}/games", f"/t/{tid}/e/ada"] + [f"/g/{g}" for g in played + pending]
        for who in (None, ALICE):
            if who:
                _sign_in(page, site.url, who)
            for path in paths:
                page.goto(site.url + path, timeout=SLOW)
                assert page.locator("#game-data").count() == 0, path  # no record, so no deck and no hand
                assert page.locator(".card.face").count() == 0, path
        _sign_in(page, site.url, ORGANISER)  # organisers see everything: the same page holds the replay
        page.goto(f"{site.url}/g/{played[0]}", timeout=SLOW)
        assert page.locator("#game-data").count() == 1
        page.wait_for_selector(".card.face")
    finally:
        site.stop()


@pytest.fixture(scope="module")
def narrow_site(tmp_path_factory):
    """One server for the narrow-screen cases: a long name, submitted bots, a finished tournament."""
    root = tmp_path_factory.mktemp("narrow")
    data, tid = save_tournament(root / "data", ("ada", "bob-with-a-rather-long-name-1", "cyd"))
    _two_authors_bots(data)
    site = start_site(data, root)
    yield site, tid
    site.stop()


@pytest.mark.parametrize("path", ["/t/{tid}", "/t/{tid}/e/ada", "/t/{tid}/games", "/bots", "/"])
def test_at_390_px_the_main_tables_need_no_sideways_scrolling(narrow_site, page_for, path: str) -> None:
    site, tid = narrow_site
    page = page_for(390, 844)
    page.goto(site.url + path.format(tid=tid), timeout=SLOW)
    widths = page.evaluate(
        "[document.documentElement.scrollWidth, ...[...document.querySelectorAll('main table')]"
        ".map(t => t.getBoundingClientRect().right)]"
    )
    assert widths[0] <= 390 and all(right <= 390 for right in widths[1:]), widths
    assert page.locator("main table").count() >= 1


@pytest.mark.parametrize("path", ["/t/{tid}", "/t/{tid}/e/ada"])
def test_at_390_px_the_rating_plots_text_reads_at_11_px_inside_the_plot(narrow_site, page_for, path: str) -> None:
    """The plot scales down to the phone (600 units in about 360 px): its labels were 6.7 px."""
    site, tid = narrow_site
    page = page_for(390, 844)
    page.goto(site.url + path.format(tid=tid), timeout=SLOW)
    texts = page.evaluate("""() => [...document.querySelectorAll('figure.plot svg text')].map(t => {
      const svg = t.ownerSVGElement, r = svg.getBoundingClientRect(), b = t.getBoundingClientRect();
      return {text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * svg.getScreenCTM().a,
              inside: b.left >= r.left - 0.5 && b.right <= r.right + 0.5 && b.top >= r.top - 0.5
                      && b.bottom <= r.bottom + 0.5}; })""")  # fmt: skip
    assert len(texts) == 3, texts
    assert all(t["px"] >= 11 and t["inside"] for t in texts), texts


def test_a_ladder_shows_through_the_same_pages_with_its_versions(tmp_path: Path, page_for) -> None:
    """An open ladder with a submitted bot resubmitted mid-way: its leaderboard shows each bot's latest version
    (linked to the bot's page), every version on request, and each version's entrant page."""
    from tests.service.helpers import start_bots, submit
    from tests.service.test_ladder import games, names, wait_for

    site = start_site(tmp_path / "data", tmp_path)
    bots = start_bots(["greedy", "counter"])
    try:
        s = stub(site.address)
        c = config("open", [{"name": "house-greedy", "policy": "greedy"}, {"name": "house-random", "policy": "random"}],
                   table_size=3, concurrency=2, ladder=ref_pb.LadderConfig(open=True))  # fmt: skip
        tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
        assert submit(s, "ag", bots[0].address, ALICE).HasField("entrant")
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        wait_for("ag.v1 to play", lambda: "ag.v1" in set().union(*map(names, games(s, tid))))
        assert submit(s, "ag", bots[1].address, ALICE).entrant.version == 2
        wait_for("ag.v2 to play", lambda: "ag.v2" in set().union(*map(names, games(s, tid))))
        page = page_for(1280, 900)
        wait_ready(f"{site.url}/t/{tid}")
        page.goto(f"{site.url}/", timeout=SLOW)
        assert "ladder" in page.locator("table.list tbody tr", has_text="open").inner_text()
        page.goto(f"{site.url}/t/{tid}", timeout=SLOW)
        shown = page.locator("#board-table td.name a").all_inner_texts()
        assert "ag.v2" in shown and "ag.v1" not in shown
        assert page.locator("#board-table a", has_text="ag v2").count() == 1  # its version, linked to the bot
        # each click loads a page: read it once it has loaded (a loaded machine saw the old page, or a new one
        # not yet parsed, when the read came straight after the click)
        _follow(page, "a:text-is('every version')", r"/t/[^/]+\?all=1$")
        assert {"ag.v1", "ag.v2"} <= set(page.locator("#board-table td.name a").all_inner_texts())
        _follow(page, "#board-table a:text-is('ag.v1')", r"/e/ag\.v1$")
        assert page.locator("h1").inner_text().startswith("ag.v1")
        _follow(page, "a:text-is('ag v1')", r"/bots/ag$")
        assert [v.strip() for v in page.locator("table.versions td.num").all_inner_texts()] == ["2", "1"]
        assert page.errors == []
    finally:
        site.stop()
        for b in bots:
            b.stop()
