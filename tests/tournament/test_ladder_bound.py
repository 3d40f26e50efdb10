"""scripts/ladder_bound.py (docs/tournaments.md, "How far a pairing can go"): the information a round of tables
gives about adjacent entrants' order, the ladder's blocks against uniformly random tables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ladder_bound.py"


def _bound(entrants: int, span: float) -> dict:
    out = subprocess.run([sys.executable, str(SCRIPT), "--entrants", str(entrants), "--span", str(span), "--json"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
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


def test_a_field_too_small_for_two_tables_is_refused() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--entrants", "6"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "two tables" in out.stderr
