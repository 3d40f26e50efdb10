"""The viewer and report pages as data and text, without a browser."""

from __future__ import annotations

import json
import re

import pytest

from referee.cli import main
from referee.records import record_selfplay
from referee.view import ReplayError, replay, viewer_html
from referee.view.report import rating_plot


def _data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="game-data">(.*?)</script>', page, re.S)
    assert m, "no game data in the page"
    return json.loads(m.group(1))


def test_a_page_has_one_step_per_decision_plus_the_deal_and_loads_nothing_from_elsewhere():
    rec = record_selfplay(11, ["ada", "bob"])
    page = viewer_html(rec)
    data = _data(page)
    assert len(data["steps"]) == len(rec.decisions) + 1
    assert data["game"]["scores"] == list(rec.footer.scores)
    assert data["steps"][-1]["scores"] == list(rec.footer.scores)
    # every one of the 109 cards is somewhere at every step
    for s in data["steps"]:
        stacks = sum(n + j for st in s["stacks"] for _, n, j in st)
        assert sum(map(len, s["hands"])) + stacks + len(s["market"]) + s["pile"] + len(s["discard"]) == 109
    assert not re.search(r'\b(src|href)="(https?:)?//', page)
    assert "@import" not in page and "url(http" not in page


def test_a_player_name_cannot_break_out_of_the_page():
    rec = record_selfplay(5, ["</script><script>alert(1)</script>", "bob"])
    page = viewer_html(rec)
    assert page.count("</script>") == 2  # the data block and the viewer script, nothing from the name
    assert _data(page)["game"]["players"][0]["name"].startswith("</script>")


def test_a_tampered_record_is_refused_with_the_decision_named():
    rec = record_selfplay(5, 3)
    rec.decisions[7].seat = (rec.decisions[7].seat + 1) % 3
    with pytest.raises(ReplayError, match="decision 8"):
        replay(rec)


def test_an_incomplete_record_replays_as_far_as_it_goes():
    rec = record_selfplay(5, 3)
    del rec.decisions[20:]
    rec.ClearField("footer")
    rec.complete = False
    r = replay(rec)
    assert len(r.steps) == 21 and not r.complete
    assert "INCOMPLETE" in viewer_html(r)


def test_rating_plot_draws_one_line_per_entrant():
    svg = rating_plot({"a": [(0, 0.0), (1, 3.5)], "b": [(0, 0.0), (1, -2.0), (2, 1.0)]}, ["a", "b"])
    assert svg.startswith("<svg") and svg.count("<polyline") == 2


def test_cli_view_names_a_missing_record(tmp_path, capsys):
    assert main(["view", "nosuchgame", "--data", str(tmp_path), "-o", str(tmp_path / "x.html")]) == 2
    assert "nosuchgame" in capsys.readouterr().err


def test_cli_report_without_a_store_says_so(tmp_path, capsys):
    assert main(["report", "--data", str(tmp_path / "none"), "-o", str(tmp_path / "r.html")]) == 1  # docs/cli.md
    assert "abluxx.db" in capsys.readouterr().err
