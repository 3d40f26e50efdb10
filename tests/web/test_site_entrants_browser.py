"""What entrants expect, in Chromium against a real ``abluxx serve --http-port`` (issue 46, items 2 and 5): each bot
version's private details for its own owner, the leaderboard sorted and searched and the games filtered from their
forms (deep links that page), a record downloaded from the game page, a link to one move of a replay, and a rating
plot and a list of the games being played that follow a running tournament without a reload."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records import read_record, record_selfplay
from referee.records.paths import VALIDATION, record_in
from referee.service.registry import Registry
from referee.store import health as health_store
from referee.store import open_store
from tests.service.helpers import ALICE, BOB, ORGANISER, auth, config, start_bot, stub, submit

from .conftest import save_tournament
from .site import start_site, wait_ready
from .test_site_browser import SLOW, _sign_in


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The webtest round robin, and the bot ``shared``: v1 alice's, v2 bob's (an organiser submitted it for him)."""
    root = tmp_path_factory.mktemp("site-entrants")
    data, tid = save_tournament(root / "data", ("ada", "bob", "cyd"), table_size=2, deals=3)
    with open_store(data) as store:
        registry = Registry(store)
        for owner, port in (("alice", 41001), ("bob", 41002)):
            game = f"validate-shared-{owner}"
            registry.add_bot("shared", f"127.0.0.1:{port}", owner, "1.0", owner, game)
            record_selfplay(port, ["shared", "greedy", "random"], game_id=game, path=record_in(data / VALIDATION, game))
    s = start_site(data, root, extra_settings="[http]\npage_size = 4\n")
    yield s, tid, data
    s.stop()


def test_bob_sees_his_version_of_a_shared_bot_and_not_alices(site, page_for) -> None:
    s, _, _ = site
    page = page_for(1280, 900)
    _sign_in(page, s.url, BOB)
    page.goto(s.url + "/bots/shared", timeout=SLOW)
    rows = {r.split("\t")[0]: r for r in page.locator("table.versions tbody tr").all_inner_texts()}
    assert "127.0.0.1:41002" in rows["2"] and "validate-shared-bob" in rows["2"]
    assert "127.0.0.1:41001" not in page.content() and "validate-shared-alice" not in page.content()
    page.click("a:text-is('validate-shared-bob')")  # his validation game, in the viewer
    page.wait_for_selector("#game-data", state="attached")
    page.goto(s.url + "/bots/shared/validation/1", timeout=SLOW)
    assert page.locator("#game-data").count() == 0 and "Not found" in page.inner_text("h1")
    page.goto(s.url + "/api/bots/shared", timeout=SLOW)  # the JSON API, with the browser's sign-in
    by_version = {e["version"]: e for e in json.loads(page.inner_text("body"))["items"]}
    assert by_version[2]["address"] == "127.0.0.1:41002" and by_version[1]["address"] == ""
    assert page.errors == []


def test_an_author_finds_a_refusal_and_its_validation_game_and_each_bots_health(site, page_for) -> None:
    s, _, data = site
    bot = start_bot("bad:hostile")
    try:
        refusal = submit(stub(s.address), "refusedb", bot.address, token=ALICE).refusal
    finally:
        bot.stop()
    assert refusal.game_id
    with open_store(data) as store:
        health_store.set_status(store, "shared.v1", "down", "unreachable at Hello", 1_800_000_000.0)
    page = page_for(1280, 900)
    _sign_in(page, s.url, ALICE)
    assert page.url.endswith("/authors/alice")
    assert "down since 2027-01-15T08:00:00Z" in page.inner_text("td.health")
    row = page.locator("#refused tbody tr").first
    assert row.locator("td.name").inner_text() == "refusedb" and "fault" in row.locator("td.text").inner_text()
    row.locator("a.fault-move").click()  # straight to the decision that faulted, in the full view
    page.wait_for_selector(f"body[data-step='{refusal.seq}'][data-pov='full']")
    assert refusal.game_id in page.inner_text("header.page")
    assert page.locator("#moves li[aria-current=step]").get_attribute("class") == "fault"
    assert page.errors == []


def test_the_games_filter_form_makes_a_deep_link_that_pages(site, page_for) -> None:
    s, tid, data = site
    with open_store(data) as store:
        want = [g.game_id for g in store.games(tid) if {"ada", "cyd"} <= set(g.names)]
    assert len(want) > 4  # more than one page of 4
    page = page_for(1280, 900)
    page.goto(f"{s.url}/t/{tid}/games", timeout=SLOW)
    page.fill("form.filters input[name=entrant]", "ada")
    page.fill("form.filters input[name=opponent]", "cyd")
    page.click("form.filters button")
    page.wait_for_load_state()
    assert "entrant=ada" in page.url and "opponent=cyd" in page.url
    seen = []
    while True:
        seen += page.locator("table.games-table tbody tr td:nth-child(2) a").all_inner_texts()
        nxt = page.locator("nav.pager a[rel=next]")
        if nxt.count() == 0:
            break
        nxt.click()
        page.wait_for_load_state()
        assert "opponent=cyd" in page.url  # the filter is kept from page to page
    assert sorted(seen) == sorted(want)
    assert page.input_value("form.filters input[name=opponent]") == "cyd"


def test_the_leaderboard_sorts_and_searches_from_its_form(site, page_for) -> None:
    s, tid, _ = site
    page = page_for(1280, 900)
    page.goto(f"{s.url}/t/{tid}", timeout=SLOW)
    page.select_option("form.filters select[name=sort]", "name")
    page.check("form.filters input[name=desc]")
    page.click("form.filters button")
    page.wait_for_load_state()
    assert page.locator("#board-table td.name a").all_inner_texts() == ["cyd", "bob", "ada"]
    page.fill("form.filters input[name=q]", "B")
    page.click("form.filters button")
    page.wait_for_load_state()
    assert page.locator("#board-table td.name a").all_inner_texts() == ["bob"]
    assert "q=B" in page.url and page.errors == []


def test_a_record_downloads_from_the_game_page_and_a_move_has_its_link(site, page_for, tmp_path: Path) -> None:
    s, tid, data = site
    with open_store(data) as store:
        game = store.games(tid)[0]
    page = page_for(1280, 900)
    page.goto(f"{s.url}/g/{game.game_id}#step=5", timeout=SLOW)
    page.wait_for_selector("body[data-step='5']")
    with page.expect_download() as download:
        page.click("a:text-is('.abluxx')")
    got = read_record(Path(download.value.path()))
    assert got.header.game_id == game.game_id and len(got.decisions) == game.decisions
    page.click("#next-btn")
    page.wait_for_selector("body[data-step='6']")
    assert page.url.endswith("#step=6&view=public")  # the address is a link to this move
    assert page.get_attribute("#move-link", "href") == "#step=6&view=public"
    other = page_for(1280, 900)
    other.goto(page.url, timeout=SLOW)  # the link, opened elsewhere, shows the same move
    other.wait_for_selector("body[data-step='6']")
    other.goto(f"{s.url}/g/{game.game_id}#step=12&view=full", timeout=SLOW)  # a link within the page: hashchange
    other.wait_for_selector("body[data-step='12'][data-pov='full']")
    assert page.errors == [] and other.errors == []


OBSERVE = """() => {
  window.seenNow = []; window.plotGames = [];
  new MutationObserver(() => {
    document.querySelectorAll("#playing-now a").forEach((a) => {
      if (!window.seenNow.includes(a.textContent)) window.seenNow.push(a.textContent);
    });
    const p = document.getElementById("rating-plot");
    if (p) window.plotGames.push(Number(p.dataset.games));
  }).observe(document.querySelector("main"), { childList: true, subtree: true });
}"""


def test_the_rating_plot_and_the_games_being_played_follow_a_running_tournament(tmp_path: Path, page_for) -> None:
    # its first game lasts seconds (15 decisions of 0.3 s, the rest at once), long enough to be listed in play: the
    # page fetches the list when a game starts, and a loaded machine can take a second or two over that fetch (at
    # 40 ms a decision a game was over in a second or two)
    slow = start_bot("bad:slow", "--delay-ms", "300", "--bad-count", "15")
    site = start_site(tmp_path / "data", tmp_path)
    try:
        s = stub(site.address)
        entrants = [{"name": "slow", "address": slow.address}, {"name": "b", "policy": "greedy"},
                    {"name": "c", "policy": "random"}]  # fmt: skip
        c = config("plotted", entrants, table_size=2, deals=1, seed=5, concurrency=1)
        tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
        wait_ready(f"{site.url}/t/{tid}")
        page = page_for(1280, 900)
        page.goto(f"{site.url}/t/{tid}", timeout=SLOW)
        assert page.get_attribute("#rating-plot", "data-games") == "0"
        scheduled = int(page.inner_text("#board-table caption").split(" of ")[1].split()[0])
        assert "No game of this tournament is being played" in page.inner_text("#playing-now")
        page.evaluate("window.loadedOnce = true")
        page.evaluate(OBSERVE)
        page.wait_for_selector("#board-status:text-is('live')", timeout=SLOW)
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        deadline = time.monotonic() + 240
        while page.evaluate("Math.max(0, ...window.plotGames)") < scheduled:  # every game of the round robin
            assert time.monotonic() < deadline, page.evaluate("window.plotGames")
            page.wait_for_timeout(200)
        seen = page.evaluate("window.seenNow")
        assert seen and all(g.startswith(tid) for g in seen), seen  # games were listed while in play
        plotted = page.evaluate("window.plotGames")
        assert plotted == sorted(plotted) and plotted[-1] == scheduled > 2  # the plot followed, never back
        assert page.locator("#rating-plot polyline").count() == 3
        assert page.evaluate("window.loadedOnce") is True and page.errors == []
    finally:
        site.stop()
        slow.stop()
