"""A command bot that crashes mid-run, as a real process: each fault it causes names the crash, even a game whose
Hello was under way as it died, and the run's crash summary lists it whether the games ran in this process or on
worker processes (``--workers 2``)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records import read_record

from .test_real import BAD_BOTS, MARK, abluxx, write_config

# The crasher exits with code 7 in its 4th Hello (a game's: the start-up check asks the first one), so every copy
# of it dies with a game's Hello under way, and that game meets the crash there rather than at a decision.
CRASHER = [sys.executable, str(BAD_BOTS), "--mode", "crash-hello", "--after", "3", "--code", "7", "--port", "0",
           "--tag", MARK]  # fmt: skip
CONFIG = (
    'name = "crash-summary"\nseed = 5\ntable_size = 2\ndeals = 12\nmax_restarts = 3\n'
    '[[entrants]]\nname = "random"\npolicy = "random"\n'
    '[[entrants]]\nname = "greedy"\npolicy = "greedy"\n'
    f'[[entrants]]\nname = "crasher"\ncommand = {json.dumps(CRASHER)}\n'
)


def crasher_faults(tmp_path: Path, data: Path) -> list[tuple[int, str]]:
    """(fault kind, detail) of every fault the crasher's seats recorded."""
    out = abluxx("games", "--json", "--data", data, cwd=tmp_path)
    faults = []
    for g in map(json.loads, out.stdout.splitlines()):
        record = read_record(Path(g["record"]))
        mine = [i for i, p in enumerate(record.header.players) if p.name == "crasher"]
        faults += [(d.fault, d.fault_detail) for d in record.decisions if d.seat in mine and d.fault_detail]
    return faults


@pytest.mark.parametrize("workers", [None, 2], ids=["inline", "workers-2"])
def test_a_crash_is_named_in_every_fault_and_in_the_summary(tmp_path: Path, workers: int | None) -> None:
    cfg = write_config(tmp_path, CONFIG)
    data = tmp_path / "d"
    more = ["--workers", str(workers)] if workers else []
    out = abluxx("tournament", "run", cfg, "--data", data, "--no-progress", *more, cwd=tmp_path, timeout=400)
    assert out.returncode == 0, out.stderr
    # the summary at the end of the run, with or without workers
    assert "command bots whose process ended during the run" in out.stderr, out.stderr[-3000:]
    summary = out.stderr.split("command bots whose process ended during the run")[1]
    line = next(x for x in summary.splitlines() if x.strip().startswith("crasher:"))
    crashes = int(re.search(r"crasher: (\d+) crash", line).group(1))
    assert crashes >= 2 and "the bot's process exited with code 7" in line, line
    assert re.search(r"started again \d+ time", line), line

    faults = crasher_faults(tmp_path, data)
    # Each crash came with a game's Hello under way: that game's fault names the crash (before: "unreachable",
    # "Hello failed: UNAVAILABLE"), as does every other fault the crash caused.
    at_hello = [(k, d) for k, d in faults if "Hello failed" in d]
    assert len(at_hello) >= crashes, faults
    lost = [(k, d) for k, d in faults if k in (rec_pb.FAULT_KIND_DISCONNECTED, rec_pb.FAULT_KIND_UNREACHABLE)]
    unnamed = [d for _, d in lost if not d.startswith("the bot's process exited with code 7")]
    assert not unnamed, unnamed
    assert not [d for _, d in faults if "0x" in d or "AioRpcError" in d]


def test_the_summary_names_the_workers_whose_copy_was_left_down() -> None:
    from referee.fleet import Crash, crash_summary

    how = "the bot's process exited with code 7"
    crashes = [Crash("crasher", how, True, "t-w0"), Crash("crasher", how, True, "t-w1"),
               Crash("crasher", how, False, "t-w1"), Crash("other", how, True)]  # fmt: skip
    assert crash_summary(crashes) == [
        f"crasher: 3 crashes ({how} x3); started again 2 times; then left down (on t-w1)",
        f"other: 1 crash ({how}); started again 1 time",
    ]
    solo = f"solo: 1 crash ({how}); started again 0 times; then left down"
    assert crash_summary([Crash("solo", how, False)]) == [solo]


def test_a_ladder_run_ends_with_the_crash_summary_too(tmp_path: Path) -> None:
    """A ladder is a run like a round robin: its crashes were in the log only, never in a summary."""
    text = CONFIG.replace('deals = 12\n', '').replace('max_restarts = 3\n', 'max_restarts = 3\n[ladder]\ngames = 30\n')
    cfg = write_config(tmp_path, text)
    out = abluxx("tournament", "run", cfg, "--data", tmp_path / "d", "--no-progress", cwd=tmp_path, timeout=400)
    assert out.returncode == 0, out.stderr
    assert "command bots whose process ended during the run" in out.stderr, out.stderr[-3000:]
    summary = out.stderr.split("command bots whose process ended during the run")[1]
    assert re.search(r"crasher: \d+ crash(es)? \(the bot's process exited with code 7", summary), summary
