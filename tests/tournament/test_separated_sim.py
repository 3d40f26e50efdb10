"""The "separated" mark on real tournaments (scripts/separated_sim.py; docs/notes/2026-12-06-separated-mark.md):
in-process round robins of built-in policies, standings computed as `abluxx standings` computes them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scipy import stats

from referee.tournament.standings import SEPARATED_Z

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "separated_sim.py"


def test_identical_entrants_in_a_field_of_six_are_marked_at_most_at_the_stated_rate() -> None:
    """Six copies of greedy+eps0.2, 10 seeded tournaments of 20 deals at tables of 2: of the 50 neighbour pairs,
    each a pair of identical entrants, at most the top of the binomial 99% band of 5% are marked separated (the
    script's full run: docs/notes/2026-12-06-separated-mark.md)."""
    out = subprocess.run([sys.executable, str(SCRIPT), "--reps", "10", "--only", "identical", "--entrants", "6",
                          "--seed", "7", "--json"], capture_output=True, text=True, timeout=900)  # fmt: skip
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout.splitlines()[-1])["rows"]
    assert (row["entrants"], row["of"], row["table_size"], row["deals"]) == (6, 50, 2, 20)
    low, high = row["ci95"]
    assert low <= row["rate"] <= high and row["rate"] == row["marked"] / 50
    assert row["marked"] <= stats.binom.interval(0.99, 50, 0.05)[1], row


def test_twins_are_the_power_checks_own_field_and_their_gaps_decide_the_marks() -> None:
    """`--only twins`: the power check's field with counter replaced by a second greedy+eps0.2; each tournament's
    neighbour gaps (mu_upper - mu_lower over the sd of the difference) are printed, and a pair is marked exactly
    when its gap is above the mark's threshold, so another threshold can be judged on the same tournaments."""
    out = subprocess.run([sys.executable, str(SCRIPT), "--reps", "3", "--only", "twins", "--tables", "2",
                          "--json"], capture_output=True, text=True, timeout=900)  # fmt: skip
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout.splitlines()[-1])["rows"]
    assert (row["check"], row["field"], row["table_size"], row["of"]) == (
        "twins",
        ["greedy+eps0.2", "greedy+eps0.2", "random", "hoard"],
        2,
        3,
    )
    assert len(row["gaps"]) == 3 and all(len(t["gaps"]) == 3 and len(t["order"]) == 4 for t in row["gaps"])
    twins = [t["gaps"][0] for t in row["gaps"] if t["order"][:2] == ["greedy+eps0.2"] * 2]
    assert len(twins) == row["adjacent"] and row["marked"] == sum(g > SEPARATED_Z for g in twins)
