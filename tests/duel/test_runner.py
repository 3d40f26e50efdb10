"""The duel runner (referee/duel/runner.py) in this process: built-in policies, so a whole duel runs in the test's
process (mutation testing sees only in-process calls; scripts/mutation.py), and its parts one by one. The same
duels against bots over gRPC, through the real `abluxx duel` process, are in test_cli.py."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from referee.cli import main
from referee.duel.runner import (
    DuelSettings,
    DuelState,
    PairPlan,
    _bot_seed,
    default_field,
    field_size,
    new_id,
    paired_difference,
)
from referee.duel.store import PairRow
from referee.engine import EndReason
from referee.match.spec import GameResult, SeatStats
from referee.stats import Sprt, Verdict
from referee.tournament.config import EntrantConfig


def _duel(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["duel", *args, "--json", "--data", str(tmp_path / "d")])
    return code, json.loads(capsys.readouterr().out)


def test_counter_against_random_in_process_is_h1_and_places_better(tmp_path, capsys) -> None:
    code, result = _duel(tmp_path, capsys, "counter", "random")
    assert code == 0 and result["verdict"] == "H1" and result["games"] == 2 * result["pairs"]
    assert result["mean_diff"] > 0 and result["place_diff"] > 0 and result["ci95"][0] > 0
    with sqlite3.connect(tmp_path / "d" / "duels.db") as db:
        rows = db.execute("SELECT pair, diff, place_diff, games FROM pairs ORDER BY pair").fetchall()
    counted = rows[: result["pairs"]]
    assert [r[0] for r in counted] == list(range(result["pairs"]))
    assert result["mean_diff"] == pytest.approx(sum(r[1] for r in counted) / len(counted))
    for _, diff, place_diff, games in rows:
        first, second = json.loads(games)
        assert first["game_id"] == second["game_id"] and first["roles"] == second["roles"][::-1]
        c, b = first["roles"].index("candidate"), first["roles"].index("baseline")
        assert diff == ((first["scores"][c] - second["scores"][c]) + (second["scores"][b] - first["scores"][b])) / 2
        cand, base = second["places"][c] - first["places"][c], first["places"][b] - second["places"][b]
        assert place_diff == (cand + base) / 2
        assert all((tmp_path / g["record"]).is_file() or Path(g["record"]).is_file() for g in (first, second))


def test_a_weaker_candidate_is_h0_and_a_spent_budget_inconclusive(tmp_path, capsys) -> None:
    code, result = _duel(tmp_path / "weak", capsys, "random", "counter")
    assert code == 1 and result["verdict"] == "H0" and result["mean_diff"] < 0 and result["place_diff"] < 0
    code, result = _duel(tmp_path / "short", capsys, "counter", "random", "--max-games", "6")
    assert code == 3 and result["verdict"] == "inconclusive" and result["pairs"] == 3 and result["games"] == 6


def test_three_players_hold_the_candidates_seat_in_turn_against_one_field(tmp_path, capsys) -> None:
    code, _ = _duel(tmp_path, capsys, "counter", "random", "--table-size", "3", "--max-games", "8")
    assert code in (0, 3)
    with sqlite3.connect(tmp_path / "d" / "duels.db") as db:
        rows = db.execute("SELECT pair, seat, games FROM pairs ORDER BY pair").fetchall()
    assert [(p, s) for p, s, _ in rows] == [(p, p % 3) for p in range(len(rows))]
    for _, seat, games in rows:
        first, second = json.loads(games)
        assert first["roles"][seat] == "candidate" and second["roles"][seat] == "baseline"
        assert [r for i, r in enumerate(first["roles"]) if i != seat] == ["field0", "field1"]


def _settings(**kw) -> DuelSettings:
    base = {"candidate": EntrantConfig("c", policy="counter"), "baseline": EntrantConfig("b", policy="random"),
            "field": ()}  # fmt: skip
    return DuelSettings(**{**base, **kw})


def test_settings_are_checked_and_stored_as_they_were_given() -> None:
    s = _settings(table_size=3, field=default_field(3), max_games=41, test=Sprt(0.01, 0.2, 0.5))
    assert DuelSettings.from_json(json.loads(json.dumps(s.to_json()))) == s
    assert s.max_pairs == 20
    assert [e.name for e in default_field(5)] == ["greedy#2", "counter#3", "random#4", "greedy#5"]
    assert [e.policy for e in default_field(3)] == ["greedy", "counter"] and default_field(2) == ()
    assert [field_size(k) for k in (2, 3, 4, 5)] == [0, 2, 3, 4]
    cmd = _settings(candidate=EntrantConfig("c", command=("bot", "--port", "0")), baseline=EntrantConfig("b", "h:1"))
    assert DuelSettings.from_json(cmd.to_json()) == cmd
    for bad, says in [
        ({"table_size": 1}, "--table-size must be 2 to 5, got 1"),
        ({"table_size": 6}, "--table-size must be 2 to 5, got 6"),
        ({"table_size": 3, "field": default_field(2)}, "a table of 3 needs a field of 2 bot(s), got 0"),
        ({"baseline": EntrantConfig("c", policy="random")}, "every bot of a duel needs its own name, got c, c"),
        ({"max_games": 1}, "--max-games must be at least 2 (one pair), got 1"),
    ]:
        with pytest.raises(ValueError) as e:
            _settings(**bad)
        assert str(e.value) == says
    _settings(table_size=5, field=default_field(5), max_games=2)  # the edges are allowed
    assert new_id("duel").startswith("duel-") and new_id("duel") != new_id("duel")


def test_roles_swap_the_candidate_and_the_baseline_and_keep_the_field() -> None:
    two = PairPlan(0, 1, 1, "g")
    assert two.roles(2, False) == ["baseline", "candidate"] and two.roles(2, True) == ["candidate", "baseline"]
    three = PairPlan(2, 1, 2, "g")
    assert three.roles(3, False) == ["field0", "field1", "candidate"]
    assert three.roles(3, True) == ["field0", "field1", "baseline"]
    # a role's bot seed is the same in both games of a pair, and differs between roles and deals
    assert _bot_seed(5, "field0") == _bot_seed(5, "field0") != _bot_seed(5, "field1")
    assert _bot_seed(5, "candidate") != _bot_seed(5, "baseline") and _bot_seed(5, "field0") != _bot_seed(6, "field0")
    assert 0 <= _bot_seed(5, "candidate") < 2**63


def _result(scores: tuple[int, ...], places: tuple[int, ...]) -> GameResult:
    return GameResult("g", scores, places, EndReason.EMPTY_HAND, [SeatStats() for _ in scores], 1, "", None)


def test_the_paired_difference_is_candidate_minus_baseline_on_the_same_cards() -> None:
    # seat 0: the candidate scores 9 (1st), then the baseline 4 (2nd) on the same cards; seat 1 the other way
    first, second = _result((9, 6), (1, 2)), _result((4, 8), (2, 1))
    assert paired_difference(["candidate", "baseline"], first, second) == ((9 - 4 + 8 - 6) / 2, (2 - 1 + 2 - 1) / 2)
    # three seats: only the candidate's seat counts, the field's do not
    first, second = _result((3, 7, 5), (3, 1, 2)), _result((6, 7, 2), (2, 1, 3))
    assert paired_difference(["field0", "candidate", "field1"], first, second) == (0.0, 0.0)
    assert paired_difference(["candidate", "field0", "field1"], first, second) == (3 - 6, 2 - 3)


def _row(pair: int, diff: float, place_diff: float = 0.0) -> PairRow:
    return PairRow(pair, 0, 0, [], diff, place_diff)


def test_the_state_counts_the_unbroken_prefix_and_stops_at_the_budget() -> None:
    state = DuelState("d", _settings(max_games=8), {})
    assert not state.finished() and state.games == 0 and state.place_diff() == 0.0
    assert not state.record(_row(1, 3.0, 1.0))  # pair 0 is missing: nothing counted yet
    assert state.prefix() == [] and state.later() == [state.pairs[1]]
    assert not state.record(_row(0, 1.0, -1.0))
    assert [p.pair for p in state.prefix()] == [0, 1] and state.games == 4 and state.place_diff() == 0.0
    assert not state.record(_row(2, 2.0, 0.5))
    assert state.place_diff() == pytest.approx(0.5 / 3)
    assert state.record(_row(3, 2.0, 0.5))  # 4 pairs: the budget of 8 games is spent
    assert state.decision() == (Verdict.INCONCLUSIVE, 4) and state.summary().pairs == 4
    kept = DuelState("d", _settings(), {i: _row(i, 1.0) for i in range(5)}, kept=(Verdict.H1, 3))
    assert kept.finished() and kept.games == 6 and [p.pair for p in kept.later()] == [3, 4]
    assert kept.summary().verdict is Verdict.H1 and kept.summary().pairs == 3


def test_the_state_runs_the_test_on_as_pairs_come_and_starts_again_for_a_new_budget() -> None:
    """The state keeps the test's run between pairs (a long duel does not test pair 0 again at every pair), and
    the summary's LLR is that run's; a resume's new budget plays on from where the old one stopped."""
    from referee.stats import sequential, summarize

    diffs = [3.0, -2.5, 1.0, -1.5, 0.5, 2.0, -3.0, 0.0, 4.5, -1.0] * 8
    state = DuelState("d", _settings(max_games=2 * 40), {})
    for i, d in enumerate(diffs[:40]):
        state.record(_row(i, d))
        assert state.summary().llr == pytest.approx(summarize(state.settings.test, diffs[: i + 1]).llr)
    assert state.decision() == sequential(state.settings.test, diffs, 40) == (Verdict.INCONCLUSIVE, 40)
    state.settings = dataclasses.replace(state.settings, max_games=2 * 80)
    for i, d in enumerate(diffs[40:], 40):
        state.record(_row(i, d))
    assert state.decision() == sequential(state.settings.test, diffs, 80)
    assert state.summary().llr == pytest.approx(summarize(state.settings.test, diffs[: state.decision()[1]]).llr)
