"""scripts/bench_duel.py plays a duel inline and on 2 worker processes and reports its numbers (no timing
assertions: speed is measured by the script, not by tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_duel.py"


def test_bench_duel_json_last_line() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--games", "8", "--concurrency", "2", "--json"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["pairs_inline"] == result["pairs_w2"] == 4  # every pair of the budget, on both
    assert result["games_per_s_inline"] > 0 and result["games_per_s_w2"] > 0
