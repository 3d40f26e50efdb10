#!/usr/bin/env python3
"""Records benchmark: writing, reading and verifying 4-player self-play records.

- write: decisions/s through RecordWriter to a file in a temporary folder (a write and a flush per decision, an
  fsync per game), the engine's own play included;
- read: decisions/s parsed by read_record from records already in memory;
- verify: decisions/s re-run by verify_record.

``--json`` adds one JSON object as the last line.

    python3 scripts/bench_records.py [--seconds 9] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from referee.records import read_record, record_selfplay, verify_record

SHARES = {"write": 1 / 3, "read": 1 / 3, "verify": 1 / 3}  # of --seconds


def bench_write(seconds: float, folder: Path) -> tuple[int, int, float, list[bytes]]:
    """Self-play games written to files until ``seconds`` pass; (games, decisions, elapsed, a few records)."""
    games = decisions = 0
    samples: list[bytes] = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or not games:
        path = folder / f"g{games % 8}.abluxx"
        record = record_selfplay(games, 4, path=path)
        decisions += len(record.decisions)
        if len(samples) < 20:
            samples.append(path.read_bytes())
        games += 1
    return games, decisions, time.perf_counter() - start, samples


def bench_read(seconds: float, samples: list[bytes]) -> tuple[int, float]:
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or not decisions:
        for data in samples:
            decisions += len(read_record(data).decisions)
    return decisions, time.perf_counter() - start


def bench_verify(seconds: float, samples: list[bytes]) -> tuple[int, float]:
    records = [read_record(data) for data in samples]
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or not decisions:
        for record in records:
            verify_record(record)
            decisions += len(record.decisions)
    return decisions, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=9.0, help="total time, split across the measurements")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = p.parse_args(argv)
    if args.seconds <= 0:
        p.error("--seconds must be > 0")
    with tempfile.TemporaryDirectory() as tmp:
        games, written, t_write, samples = bench_write(args.seconds * SHARES["write"], Path(tmp))
    read, t_read = bench_read(args.seconds * SHARES["read"], samples)
    verified, t_verify = bench_verify(args.seconds * SHARES["verify"], samples)
    size = sum(len(s) for s in samples) / sum(len(read_record(s).decisions) for s in samples)
    result = {
        "write_games_per_s": round(games / t_write, 1),
        "write_decisions_per_s": round(written / t_write),
        "read_decisions_per_s": round(read / t_read),
        "verify_decisions_per_s": round(verified / t_verify),
        "bytes_per_decision": round(size, 1),
    }
    r = result
    print(f"write:  {r['write_games_per_s']} games/s, {r['write_decisions_per_s']} decisions/s (play included)")
    print(f"read:   {result['read_decisions_per_s']} decisions/s")
    print(f"verify: {result['verify_decisions_per_s']} decisions/s")
    print(f"size:   {result['bytes_per_decision']} bytes per decision on disk")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
