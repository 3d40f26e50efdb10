"""scripts/bench_referee.py runs and reports its figures, the CPU accounting and the loop's stalls among them (no
timing assertions: the figures are the script's to print, not a test's to judge)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_referee.py"
POSITIVE = (
    "floor_stream_rt_per_s",
    "referee_stream_dps_64",
    "ratio_stream_64",
    "referee_cpu_us_per_decision",
    "referee_loop_cpu_us_per_decision",
    "bot_cpu_us_per_decision",
    "floor_client_cpu_us_per_rt",
    "floor_client_loop_cpu_us_per_rt",
    "cpu_vs_floor",
    "gc_middle_cpu_ms",  # a middle collection, forced with 64 games in play
    "dialin_cpu_us_per_decision",  # the same games with the bot dialled in (BotGateway)
    "dialin_cpu_vs_stream",
)
PRESENT = ("max_loop_stall_ms", "p99_loop_stall_ms", "max_loop_stall_cpu_ms", "gc_max_pause_ms", "gc_us_per_decision",
           "referee_grpc_cpu_us_per_decision", "gc_collections_gen2", "max_loop_stall_ms_16",
           "max_loop_stall_cpu_ms_16")  # fmt: skip


def test_bench_referee_json_last_line() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--seconds", "0.5", "--json"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) > 1  # human-readable lines come first
    result = json.loads(lines[-1])
    for key in POSITIVE:
        assert result[key] > 0, key
    for key in PRESENT:
        assert result[key] >= 0, key
    # the referee's CPU is its loop thread's and the other threads' together
    parts = result["referee_loop_cpu_us_per_decision"] + result["referee_grpc_cpu_us_per_decision"]
    assert abs(parts - result["referee_cpu_us_per_decision"]) < 0.01 * result["referee_cpu_us_per_decision"] + 1
