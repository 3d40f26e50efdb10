"""What a duel's pair measures (issue 21 item 4): at 3 to 5 players a bot's play moves the other seats' scores
too, so the default measure is the score relative to the table; --measure picks score, table or place."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from referee.cli import main


def _pairs(data: Path) -> list[tuple[float, float, list[dict]]]:
    with sqlite3.connect(data / "duels.db") as db:
        rows = db.execute("SELECT diff, place_diff, games FROM pairs ORDER BY pair").fetchall()
    return [(d, p, json.loads(g)) for d, p, g in rows]


def _relative(game: dict, seat: int) -> float:
    others = [s for i, s in enumerate(game["scores"]) if i != seat]
    return game["scores"][seat] - sum(others) / len(others)


@pytest.mark.parametrize(("size", "flag", "measure"), [(4, [], "table"), (3, ["--measure", "score"], "score"),
                                                       (2, [], "score"), (3, ["--measure", "place"], "place")])
def test_each_pair_measures_what_the_duel_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], size: int, flag: list[str], measure: str
) -> None:
    data = tmp_path / "d"
    code = main(["duel", "counter", "greedy", "--table-size", str(size), *flag, "--max-games", "8", "--json",
                 "--data", str(data)])  # fmt: skip
    assert code == 3
    assert json.loads(capsys.readouterr().out)["measure"] == measure
    for diff, place_diff, (first, second) in _pairs(data):
        seat = first["roles"].index("candidate")
        assert second["roles"][seat] == "baseline"
        if measure == "table":
            assert diff == pytest.approx(_relative(first, seat) - _relative(second, seat))
        elif measure == "score" and size > 2:
            assert diff == first["scores"][seat] - second["scores"][seat]
        elif measure == "place":
            assert diff == place_diff == second["places"][seat] - first["places"][seat]
    if measure == "table":  # counter's play lowers the field's scores: the two measures differ
        assert any(abs(d - (f["scores"][f["roles"].index("candidate")] - s["scores"][f["roles"].index("candidate")]))
                   > 0.1 for d, _, (f, s) in _pairs(data))  # fmt: skip


def test_a_bad_measure_exits_2(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["duel", "counter", "greedy", "--measure", "elo", "--data", str(tmp_path)])
    assert e.value.code == 2
