"""scripts/bench_engine.py runs and reports its numbers (no timing assertions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_engine.py"
KEYS = ("decisions_per_s_4p", "games_per_s_4p", "decisions_per_s_2p", "games_per_s_2p", "baseline_decisions_per_s")


def test_bench_engine_json_last_line() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--seconds", "1", "--json"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) > 1  # human-readable lines come first
    result = json.loads(lines[-1])
    for key in KEYS:
        assert result[key] > 0, key
