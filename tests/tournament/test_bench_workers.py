"""scripts/bench_workers.py runs every backend it can and reports its numbers (no timing assertions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_workers.py"
KEYS = ("games_per_s_inline", "games_per_s_w2", "scaling_w2", "coordinator_cpu_share", "record_bytes_per_game")


def test_bench_workers_json_last_line() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--seconds", "1", "--json"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) > 1  # human-readable lines come first
    result = json.loads(lines[-1])
    for key in KEYS:
        assert result[key] > 0, key
    assert 0 < result["coordinator_cpu_share"] < 1
