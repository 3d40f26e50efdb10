"""``abluxx tournament plan``: the game count a config makes (the schedule's own size) and an estimate of its
length, without playing or storing anything."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.cli import main
from referee.tournament.config import parse
from referee.tournament.plan import plan
from referee.tournament.schedule import build

ISSUE_CONFIG = """
name = "three"
deals = 3
[[entrants]]
name = "a"
policy = "random"
[[entrants]]
name = "b"
policy = "greedy"
[[entrants]]
name = "c"
policy = "counter"
"""


def config(n: int, **keys):
    entrants = [{"name": f"e{i}", "policy": "random"} for i in range(n)]
    return parse({"name": "p", **keys, "entrants": entrants}, "<test>")


@pytest.mark.parametrize(
    ("n", "keys"),
    [
        (3, {"deals": 3}),
        (5, {"table_size": 3, "deals": 2}),
        (6, {"table_size": 4, "deals": 1, "seat_orders": "all"}),
        (9, {"table_size": 3, "deals": 2, "tables": 5}),
        (4, {"table_size": 4, "deals": 2}),
    ],
)
def test_the_plans_game_count_is_the_schedules(n, keys):
    c = config(n, **keys)
    p = plan(c)
    assert p.games == len(build(c, bytes(32)))
    assert p.games == p.tables * c.deals * p.orders
    assert p.decisions_per_game > 10


def test_cli_plan_prints_the_count_and_a_duration_and_plays_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "three.toml").write_text(ISSUE_CONFIG)
    assert main(["tournament", "plan", "three.toml"]) == 0
    out = capsys.readouterr().out
    # the issue's 3-entrant, 3-deal config: tables of 2 by default, so 3 tables, each deal once per table (across)
    assert "3 tables x 3 deals x 1 game per deal (across) = 9" in out
    assert "each entrant plays 6 games" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["three.toml"]  # no data folder, no record
    # docs/tournaments.md shows this very output, but for the figures measured now
    doc = (Path(__file__).resolve().parents[2] / "docs" / "tournaments.md").read_text()
    measured = re.compile(r"\d+\.\d\d ms|about \d+ (s|min)")
    assert measured.sub("#", out.strip()) in measured.sub("#", doc)
    (tmp_path / "three.toml").write_text('seat_orders = "rotations"\n' + ISSUE_CONFIG)
    assert main(["tournament", "plan", "three.toml"]) == 0
    assert "3 tables x 3 deals x 2 games per deal (rotations) = 18" in capsys.readouterr().out


def test_the_plan_counts_the_referees_own_cost_per_decision():
    """A run of 9 games took 14.6 s where the plan said 1 s: the referee's own work per decision does not overlap
    across games, so however fast the bots, the run takes at least games x decisions x that cost."""
    p = plan(config(3, deals=3))
    assert p.referee_ms > 0  # measured over gRPC, records written
    floor = p.games * p.decisions_per_game * p.referee_ms / 1000
    assert p.seconds(0) >= floor
    assert f"the referee's own cost: {p.referee_ms:.2f} ms a decision" in p.text()


def test_cli_plan_names_a_bad_config_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("table_size = 7\n" + ISSUE_CONFIG)
    assert main(["tournament", "plan", str(bad)]) == 2
    assert "table_size: 7 is out of range (2 to 5)" in capsys.readouterr().err
