"""The tournament report in a real browser, checked against the store it was made from."""

from __future__ import annotations

import subprocess
import sys

import pytest

from referee.cli import main
from referee.rating import rate
from referee.records.recordfile import read_record
from referee.store import open_store

pytestmark = pytest.mark.usefixtures("browser")


@pytest.fixture(scope="module")
def report(tournament, tmp_path_factory):
    data, tid = tournament
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", tid, "--data", str(data), "-o", str(out)]) == 0
    return out


def test_standings_match_the_store(page_for, tournament, report):
    data, tid = tournament
    with open_store(data) as store:
        games = store.games(tid)
        names = [e["name"] for e in store.tournament(tid).config["entrants"]]
    ratings = rate(names, [(g.names, g.places) for g in games])
    expected = [name for name, _ in ratings.leaderboard()]

    pg = page_for()
    pg.goto(report.as_uri())
    rows = pg.locator("#standings tbody tr")
    assert [r.get_attribute("data-entrant") for r in rows.all()] == expected
    for r in rows.all():
        want = ratings.get(r.get_attribute("data-entrant"))
        assert float(r.locator(".mu").inner_text()) == pytest.approx(want.mu, abs=0.005)
        assert float(r.locator(".sigma").inner_text().lstrip("± ")) == pytest.approx(want.sigma, abs=0.005)
        assert float(r.locator(".conservative").inner_text()) == pytest.approx(want.conservative, abs=0.005)
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
