"""The tournament report in a real browser, checked against the store it was made from."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from referee.cli import main
from referee.rating import rate
from referee.records.recordfile import read_record
from referee.store import open_store
from referee.tournament.standings import compute

from .site import wait_ready

pytestmark = pytest.mark.usefixtures("browser")


def write_report(tournament: tuple, out) -> object:
    data, tid = tournament
    assert main(["report", tid, "--data", str(data), "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def report(tournament, tmp_path_factory):
    return write_report(tournament, tmp_path_factory.mktemp("report") / "report.html")


def test_standings_match_the_store(page_for, tournament, report):
    data, tid = tournament
    with open_store(data) as store:
        games = store.games(tid)
        names = [e["name"] for e in store.tournament(tid).config["entrants"]]
    ratings = rate(names, [(g.names, g.places) for g in games])
    expected = [name for name, _ in ratings.leaderboard()]
    marks = {row.entrant: row.separated_from_next for row in compute(tid, names, games, len(games)).rows}

    pg = page_for()
    pg.goto(report.as_uri())
    rows = pg.locator("#standings tbody tr")
    assert [r.get_attribute("data-entrant") for r in rows.all()] == expected
    for r in rows.all():
        want = ratings.get(r.get_attribute("data-entrant"))
        assert float(r.locator(".mu").inner_text()) == pytest.approx(want.mu, abs=0.005)
        assert float(r.locator(".sigma").inner_text().lstrip("± ")) == pytest.approx(want.sigma, abs=0.005)
        # the order value, then "~" exactly where the standings mark the row not separated from the next
        value, _, mark = r.locator(".conservative").inner_text().partition(" ")
        assert float(value) == pytest.approx(want.conservative, abs=0.005)
        assert (mark == "~") == (marks[r.get_attribute("data-entrant")] is False)
        played = sum(r.get_attribute("data-entrant") in g.names for g in games)
        assert int(r.locator(".games").inner_text()) == played
    assert pg.errors == []
    assert all(u.startswith("file:") for u in pg.requests), pg.requests


def test_plot_head_to_head_and_faults_are_shown(page_for, tournament, report):
    pg = page_for()
    pg.goto(report.as_uri())
    lines = pg.locator("#rating-plot polyline.rating-line")
    assert lines.count() == 3
    # one point for the start and one after each game the entrant played (6 games each)
    assert all(len(pts.split()) == 7 for pts in (x.get_attribute("points") for x in lines.all()))
    assert pg.locator("#head-to-head tbody tr").count() == 3
    faults = {r.get_attribute("data-entrant"): r.inner_text() for r in pg.locator("#faults tbody tr").all()}
    assert faults["ada"].split()[1:] != ["0", "0", "0", "0"]  # ada timed out in game 1
    # every faulted game and the notable ones are listed with a link
    notable = {li.get_attribute("data-why") for li in pg.locator("#notable li").all()}
    assert {"highest score", "faults"} <= notable
    assert pg.locator('#notable li[data-why="faults"]').count() == 2


def test_the_highest_score_link_opens_that_games_viewer(page_for, tournament, report):
    data, _ = tournament
    pg = page_for()
    pg.goto(report.as_uri())
    link = pg.locator('#notable li[data-why="highest score"] a')
    game_id = link.inner_text()
    link.click()
    pg.wait_for_selector(".seat .score")
    assert game_id in pg.inner_text("header")
    pg.keyboard.press("End")
    record = read_record(data / "records" / f"{game_id}.abluxx")
    assert [int(x) for x in pg.locator(".seat .score").all_inner_texts()] == list(record.footer.scores)
    assert max(record.footer.scores) == max(
        max(g.footer.scores) for g in map(read_record, sorted((data / "records").glob("*.abluxx")))
    )


def test_the_demo_tournament_of_real_bots_ends_with_a_report_and_the_best_games_viewer(page_for, tmp_path):
    data = tmp_path / "data"
    # the real command in its own process (Playwright's sync API already runs an event loop in this one)
    cli = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
    done = subprocess.run([*cli, "demo", "--deals", "1", "--data", str(data), "-c", "4"], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    report = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("report: "))
    best = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("best game's viewer: "))
    with open_store(data) as store:
        tid = store.tournaments()[-1].id
        games = store.games(tid)
        names = [e["name"] for e in store.tournament(tid).config["entrants"]]
    ratings = rate(names, [(g.names, g.places) for g in games])
    pg = page_for()
    pg.goto(f"file://{report}")
    shown = [r.get_attribute("data-entrant") for r in pg.locator("#standings tbody tr").all()]
    assert shown == [name for name, _ in ratings.leaderboard()]
    pg.goto(f"file://{best}")
    pg.keyboard.press("End")
    game_id = best.rsplit("/", 1)[1].removesuffix(".html")
    record = read_record(data / "records" / f"{game_id}.abluxx")
    assert [int(x) for x in pg.locator(".seat .score").all_inner_texts()] == list(record.footer.scores)
    assert pg.errors == []
    # its next steps name one command that serves the site on the demo's data (here on a free port, no browser)
    command = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("the site, live, on this"))
    assert command.startswith("abluxx serve ") and "--open" in command and f"--data {data}" in command
    argv = [*cli, *command.split()[1:]]
    argv[argv.index("--http-port") + 1] = "0"
    site = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env={**os.environ, "BROWSER": "true"})
    try:
        url = next(line.split()[-1] for line in site.stdout if line.startswith("site on "))
        wait_ready(f"{url}t/{tid}")
        pg.goto(f"{url}t/{tid}", timeout=300_000)
        assert sorted(pg.locator("#board-table td.name a").all_inner_texts()) == sorted(names)
    finally:
        site.terminate()
        site.wait(60)


def test_entrant_names_with_markup_read_as_written(page_for, markup_tournament, tmp_path):
    """Names reach the report from the store; none may become markup in the standings, tables or plot."""
    from .conftest import MARKUP_NAMES

    data, tid = markup_tournament
    out = tmp_path / "report.html"
    assert main(["report", tid, "--data", str(data), "-o", str(out)]) == 0
    pg = page_for()
    pg.goto(out.as_uri())
    standings = pg.locator("#standings tbody tr")
    assert sorted(r.get_attribute("data-entrant") for r in standings.all()) == sorted(MARKUP_NAMES)
    assert sorted(pg.locator("#standings tbody td.name").all_inner_texts()) == sorted(MARKUP_NAMES)
    assert sorted(pg.locator("#head-to-head tbody th.name").all_inner_texts()) == sorted(MARKUP_NAMES)
    assert sorted(x.get_attribute("data-entrant") for x in pg.locator("#rating-plot polyline").all()) == sorted(
        MARKUP_NAMES
    )
    assert pg.locator("main b").count() == 0, "a name became a <b> element"
    assert "ada" in pg.inner_text("#notable") and pg.locator("#notable li").count() >= 2
    assert pg.errors == []


@pytest.fixture(scope="module")
def big_report(big_tournament, tmp_path_factory):
    return write_report(big_tournament, tmp_path_factory.mktemp("big-report") / "report.html")


def visible_slots(pg) -> list[int]:
    return [int(r.get_attribute("data-slot")) for r in pg.locator("#games-table tbody tr:visible").all()]


def test_every_game_is_linked_and_the_table_pages(page_for, big_report):
    pg = page_for()
    pg.goto(big_report.as_uri())
    rows = pg.locator("#games-table tbody tr")
    assert rows.count() == 60
    links = [a.get_attribute("href") for a in pg.locator("#games-table tbody tr a").all()]
    assert len(links) == 60 and all((big_report.parent / href).is_file() for href in links)
    assert "Every game links to its viewer page" in pg.inner_text("#games")
    assert visible_slots(pg) == list(range(25))
    assert pg.inner_text("#games-count") == "games 1\u201325 of 60"
    pg.click("#games-next")
    assert visible_slots(pg) == list(range(25, 50))
    pg.click("#games-next")
    assert visible_slots(pg) == list(range(50, 60))
    assert pg.is_disabled("#games-next") and pg.inner_text("#games-page") == "page 3 of 3"
    pg.select_option("#games-size", "0")  # all on one page
    assert visible_slots(pg) == list(range(60))
    assert pg.errors == []


def test_the_games_table_sorts_by_a_column_and_filters_by_entrant(page_for, big_tournament, big_report):
    data, tid = big_tournament
    with open_store(data) as store:
        games = store.games(tid)
    decisions = {g.slot: g.decisions for g in games}
    pg = page_for()
    pg.goto(big_report.as_uri())
    pg.click('#games-table th[data-sort="decisions"] button')  # longest first
    shown = [decisions[s] for s in visible_slots(pg)]
    assert shown == sorted(decisions.values(), reverse=True)[:25]
    assert pg.get_attribute('#games-table th[data-sort="decisions"]', "aria-sort") == "descending"
    pg.click('#games-table th[data-sort="decisions"] button')  # and back: shortest first
    assert [decisions[s] for s in visible_slots(pg)] == sorted(decisions.values())[:25]

    pg.select_option("#games-entrant", "ada")
    ada = {g.slot: next(s.score for s in g.seats if s.entrant == "ada") for g in games if "ada" in g.names}
    assert len(ada) == 24 and pg.inner_text("#games-count") == "games 1\u201324 of 24 with ada"
    pg.select_option("#games-size", "0")
    assert sorted(visible_slots(pg)) == sorted(ada)
    pg.click('#games-table th[data-sort="score"] button')  # ada's own score, best first
    assert [ada[s] for s in visible_slots(pg)] == sorted(ada.values(), reverse=True)
    assert pg.errors == []


def test_standings_show_the_duplicate_adjusted_score_and_decision_time_of_the_cli(page_for, big_tournament,
                                                                                  big_report):  # fmt: skip
    from referee.tournament.runner import standings_of

    data, tid = big_tournament
    with open_store(data) as store:
        cli = {r.entrant: r for r in standings_of(store, tid).rows}
    pg = page_for()
    pg.goto(big_report.as_uri())
    for row in pg.locator("#standings tbody tr").all():
        want = cli[row.get_attribute("data-entrant")]
        assert row.locator(".dup").inner_text() == f"{want.dup_avg_score:+.2f}"
        assert want.median_decision_ms is not None
        assert row.locator(".median-ms").inner_text() == f"{want.median_decision_ms:.2f}"
    assert any(abs(r.dup_avg_score) > 0.01 for r in cli.values())


def test_the_report_reads_on_a_phone(page_for, big_report):
    pg = page_for(390, 844)
    pg.goto(big_report.as_uri())
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390  # the page never scrolls sideways
    table, panel = pg.locator("#games-table").bounding_box(), pg.locator("#games").bounding_box()
    assert table["x"] + table["width"] <= panel["x"] + panel["width"], "the games table fits its panel"


# The element that scrolls a table sideways: the nearest ancestor whose content is wider than it and that scrolls.
_SCROLLER = """(t) => { for (let e = t.parentElement; e; e = e.parentElement) {
  const o = getComputedStyle(e).overflowX;
  if ((o === 'auto' || o === 'scroll') && e.scrollWidth > e.clientWidth) return e; } return null; }"""


def _inside(cell: dict, box: dict) -> bool:
    return box["x"] - 0.5 <= cell["x"] and cell["x"] + cell["width"] <= box["x"] + box["width"] + 0.5


def test_on_a_phone_every_standings_column_can_be_scrolled_to_beside_the_name(page_for, big_report):
    """At 390 px the standings are wider than the screen. They scroll sideways in a box of their own: the panel's
    heading and notes stay put, the entrant's name (heading and rows) stays at the box's left edge, every column can
    be brought fully into the box beside it, and a line says the table scrolls. Before, the whole panel scrolled
    with no sign of it, the name's heading scrolled away, and the columns after "wins" looked cut off."""
    pg = page_for(390, 844)
    pg.goto(big_report.as_uri())
    table = pg.locator("#standings table")
    scroller = table.evaluate_handle(_SCROLLER).as_element()
    assert scroller is not None, "the standings are not wider than a phone: this test checks nothing"
    assert pg.evaluate("e => e.closest('section').scrollWidth <= e.closest('section').clientWidth", scroller), (
        "the panel itself scrolls sideways: its heading and notes slide away with the table"
    )
    box = scroller.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert pg.locator("#standings .swipe").is_visible() and "sideways" in pg.inner_text("#standings .swipe")
    heads = pg.locator("#standings thead th")
    names = pg.locator("#standings thead th.name, #standings tbody td.name")
    widths = table.evaluate("t => [...t.querySelectorAll('thead th')].map(th => [th.offsetLeft, th.offsetWidth])")
    name_left, name_width = table.evaluate("t => { const n = t.querySelector('thead th.name'); "
                                           "return [n.offsetLeft, n.offsetWidth]; }")  # fmt: skip
    for i, (left, _) in enumerate(widths):
        # scroll so that column i starts just right of the name, stuck at the box's left edge (as far as it goes)
        scroller.evaluate("(e, x) => { e.scrollLeft = x; }", max(0, left - name_width) if left > name_left else 0)
        cell, name = heads.nth(i).bounding_box(), heads.nth(1).bounding_box()
        assert _inside(cell, box), (heads.nth(i).inner_text(), cell, box)
        assert i == 1 or cell["x"] + cell["width"] <= name["x"] + 0.5 or cell["x"] >= name["x"] + name["width"] - 0.5
        assert all(_inside(n.bounding_box(), box) for n in names.all()), "the name left the box"
    assert scroller.evaluate("e => e.scrollLeft") > 0
    assert pg.locator("#standings tbody tr").first.locator("td").last.is_visible()


def test_on_a_phone_the_rating_chart_reads_at_11_px_and_nothing_is_clipped(page_for, big_report):
    pg = page_for(390, 844)
    pg.goto(big_report.as_uri())
    sizes = pg.evaluate("""() => { const svg = document.querySelector('#rating-plot'), r = svg.getBoundingClientRect();
      return [...svg.querySelectorAll('text')].map(t => { const b = t.getBoundingClientRect();
        return {text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * svg.getScreenCTM().a,
                inside: b.left >= r.left - 0.5 && b.right <= r.right + 0.5 && b.top >= r.top - 0.5
                        && b.bottom <= r.bottom + 0.5}; }); }""")  # fmt: skip
    assert len(sizes) >= 6, sizes
    assert all(s["px"] >= 11 for s in sizes), sizes
    assert all(s["inside"] for s in sizes), [s for s in sizes if not s["inside"]]
    legend = pg.locator("#ratings .legend li")
    assert sorted(legend.all_inner_texts()) == ["ada", "bob", "cyd", "dee", "eve"]
    assert all(float(x.evaluate("e => getComputedStyle(e).fontSize").removesuffix("px")) >= 11 for x in legend.all())
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390


def test_on_a_phone_each_head_to_head_cell_shows_its_difference_and_interval(page_for, big_report):
    """No hover on a phone: the mean score difference and its 95% interval are in the cell, and visible."""
    pg = page_for(390, 844)
    pg.goto(big_report.as_uri())
    cells = pg.locator('#head-to-head td[title*="score difference"]')
    assert cells.count() > 0
    for cell in cells.all():
        cell.scroll_into_view_if_needed()
        diff, ci = cell.locator(".diff"), cell.locator(".ci")
        assert diff.is_visible() and ci.is_visible()
        title = cell.get_attribute("title")
        assert f"score difference {diff.inner_text()}" in title
        assert f"\u00b1 {ci.inner_text()[1:]} (95%)" in title, (title, ci.inner_text())


def test_notable_only_says_which_games_are_linked(page_for, big_tournament, tmp_path):
    data, tid = big_tournament
    out = tmp_path / "report.html"
    assert main(["report", tid, "--data", str(data), "-o", str(out), "--notable-only"]) == 0
    pg = page_for()
    pg.goto(out.as_uri())
    linked = pg.locator("#games-table tbody tr a").count()
    assert 0 < linked < 60
    assert f"Viewer pages were written for the {linked} notable games only" in pg.inner_text("#games")
