"""The viewer and report pages as data and text, without a browser."""

from __future__ import annotations

import html
import json
import re

import pytest

from referee.cli import main
from referee.records import record_selfplay
from referee.view import ReplayError, build_replay, viewer_html
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
        build_replay(rec)


def test_an_incomplete_record_replays_as_far_as_it_goes():
    rec = record_selfplay(5, 3)
    del rec.decisions[20:]
    rec.ClearField("footer")
    rec.complete = False
    r = build_replay(rec)
    assert len(r.frames) == 21 and not r.complete
    assert "INCOMPLETE" in viewer_html(r)


def test_rating_plot_draws_one_line_per_entrant():
    svg = rating_plot({"a": [(0, 0.0), (1, 3.5)], "b": [(0, 0.0), (1, -2.0), (2, 1.0)]}, ["a", "b"])
    assert svg.startswith('<figure class="plot"><svg') and svg.count("<polyline") == 2
    assert svg.count('<li data-entrant="') == 2  # the legend, as HTML under the chart


def test_cli_view_names_a_missing_record(tmp_path, capsys):
    assert main(["view", "nosuchgame", "--data", str(tmp_path), "-o", str(tmp_path / "x.html")]) == 2
    assert "nosuchgame" in capsys.readouterr().err


def test_cli_report_without_a_store_says_so(tmp_path, capsys):
    assert main(["report", "--data", str(tmp_path / "none"), "-o", str(tmp_path / "r.html")]) == 1  # docs/cli.md
    assert "abluxx.db" in capsys.readouterr().err


def test_the_report_shows_the_standings_of_abluxx_standings(tmp_path, capsys):
    """The report's standings, head to head and fault counts are `abluxx standings --json`, number for number."""
    from tests.web.conftest import save_tournament  # the browser tests' tournament: 12 games, faults, a retired seat

    data, tid = save_tournament(tmp_path / "data", ("ada", "bob", "cyd"))
    assert main(["standings", tid, "--json", "--data", str(data)]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert main(["report", tid, "--data", str(data), "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    section = page[page.index('id="standings"') : page.index('id="ratings"')]
    shown = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr data-entrant=.*?</tr>", section)]
    strikes = [sum(n for k, n in r["faults"].items() if k not in ("referee", "retired")) for r in cli["standings"]]
    assert [[row[i] for i in (0, 1, 2, 3, 5, 6, 8, 9, 12, 13)] for row in shown] == [
        [str(r["rank"]), r["entrant"], f"{r['conservative']:.2f}" + (" ~" if r["separated_from_next"] is False else ""),
         f"{r['mu']:.2f}", str(r["games"]), str(r["wins"]),
         f"{r['avg_score']:+.1f}", f"{r['dup_avg_score']:+.2f}", str(s), str(r["retired"])]
        for r, s in zip(cli["standings"], strikes, strict=True)
    ]  # fmt: skip
    assert any(strikes) and any(r["retired"] for r in cli["standings"])
    # the 95% interval of the duplicate score (issue 14); ~ after the order's value where a row is not separated
    # from the next (issue 21)
    assert [html.unescape(row[10]) for row in shown] == [
        "\N{EN DASH}" if r["dup_ci95"] is None else f"±{(r['dup_ci95'][1] - r['dup_ci95'][0]) / 2:.2f}"
        for r in cli["standings"]
    ]  # fmt: skip
    assert any(r["dup_ci95"] for r in cli["standings"])
    h2h = page[page.index('id="head-to-head"') : page.index('id="faults"')]
    cells = re.findall(r'title="(\S+) above (\S+) (\d+), below (\d+), level (\d+)[;"]', h2h)
    diff_title = r'title="(\S+) above (\S+) [^"]*; score difference ([^ ]+) &plusmn; ([\d.]+) \(95%\) a game"'
    diffs = re.findall(diff_title, h2h)
    assert len(diffs) == 6 and all(
        [float(m), float(h)] == [round(d["mean_diff"], 1), round((d["ci95"][1] - d["ci95"][0]) / 2, 1)]
        for a, b, m, h in diffs
        for d in [cli["score_diff"][a][b]]
    )
    # the difference is in the cell itself, not only in its title: a phone cannot hover
    shown_diffs = re.findall(r'title="(\S+) above (\S+) [^"]*">[^<]*<span class="diff">([^<]+)</span>', h2h)
    assert len(shown_diffs) == 6 and all(float(m) == round(cli["score_diff"][a][b]["mean_diff"], 1)
                                         for a, b, m in shown_diffs)  # fmt: skip
    assert len(cells) == 6 and all(
        [int(w), int(lost), int(tied)] == [cli["head_to_head"][a][b][k] for k in ("wins", "losses", "ties")]
        for a, b, w, lost, tied in cells
    )
