"""scripts/ladder_bound.py (docs/tournaments.md, "How far a pairing can go"): the information a round of tables
gives about adjacent entrants' order, the ladder's blocks against uniformly random tables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ladder_bound.py"


def _bound(entrants: int, span: float, *more: str) -> dict:
    out = subprocess.run([sys.executable, str(SCRIPT), "--entrants", str(entrants), "--span", str(span), "--json",
                          *more], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_blocks_help_little_on_a_narrow_field_and_much_on_a_wide_one() -> None:
    """The bench's narrow field (16 entrants over 14 mu, neighbours a fifth of beta apart): even blocks of the true
    order need about 0.8 of random tables' games for the same precision, so 0.6 is out of any pairing's reach;
    the wide field (32 over 26) about half. Keeping covariances (a whole-history fit) helps blocks more."""
    narrow, wide = _bound(16, 14), _bound(32, 26)
    assert 0.75 < narrow["diagonal_ratio"] < 0.85, narrow
    assert wide["diagonal_ratio"] < 0.6, wide
    for b in (narrow, wide):
        assert b["full_ratio"] < b["diagonal_ratio"] < 1, b


def test_under_the_prior_no_window_of_the_true_order_halves_random_tables_games_to_tau() -> None:
    """Kendall's tau counts every pair, and the prior compresses what neighbour-only games leave unsaid: on the
    simulation's wide field (32 entrants over 27), contiguous blocks of the true order need more games than random
    tables to reach tau 0.9 in expectation, and the best window still about 0.8 of them, far from the 0.6 the
    ladder's issue asks (docs/ladders.md, "How far a pairing can go")."""
    out = _bound(32, 27, "--tau")["tau0.9"]
    assert out["window_4"] > out["window_32"], out  # blocks of four: worse than random tables
    assert min(v for k, v in out.items() if k.startswith("window_")) < out["window_32"], out  # some window helps
    assert 0.7 < out["best_vs_uniform"] < 0.95, out


def test_a_field_too_small_for_two_tables_is_refused() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--entrants", "6"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "two tables" in out.stderr
