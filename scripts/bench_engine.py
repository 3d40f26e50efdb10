#!/usr/bin/env python3
"""Engine benchmark: seeded random self-play games in one process.

Prints games/s and decisions/s for 4 and 2 players, and a baseline measured in the same run: choosing a random
legal action from precomputed legal lists with the same RNG and call pattern, but no engine. The engine's own
cost per decision is the difference. ``--json`` adds one JSON object as the last line.

    python3 scripts/bench_engine.py [--seconds 10] [--seed 0] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from referee.engine import apply, deck_from_seed, new_game

GOAL_4P = 100_000  # decisions/s for 4 players
SHARES = {"4p": 0.4, "2p": 0.4, "baseline": 0.2}  # of --seconds


def self_play(players: int, seconds: float, seed: int) -> tuple[int, int, float, float]:
    """Play whole games (deal included) until ``seconds`` have passed; (games, decisions, elapsed, cpu)."""
    rng = random.Random(seed)
    choice = rng.choice
    games = decisions = 0
    cpu = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = new_game(deck_from_seed(seed + games), players)
        while state.kind is not None:
            state, _ = apply(state, choice(state.legal))
            decisions += 1
        games += 1
        if time.perf_counter() >= deadline:
            return games, decisions, time.perf_counter() - start, time.process_time() - cpu


def record_legal_lists(players: int, games: int, seed: int) -> list[tuple]:
    """The legal-action tuples met in some random games, in order (for the baseline)."""
    rng = random.Random(seed)
    out = []
    for g in range(games):
        state = new_game(deck_from_seed(seed + g), players)
        while state.kind is not None:
            out.append(state.legal)
            state, _ = apply(state, rng.choice(state.legal))
    return out


def baseline(legal_lists: list[tuple], seconds: float, seed: int) -> tuple[int, float]:
    """Only the random choices: same RNG and call pattern as ``self_play``, no engine; (decisions, elapsed)."""
    rng = random.Random(seed)
    choice = rng.choice
    decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for legal in legal_lists:
            choice(legal)
            decisions += 1
        if time.perf_counter() >= deadline:
            return decisions, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=10.0, help="total time, split across the measurements")
    p.add_argument("--seed", type=int, default=0, help="first deal and choice seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.seed < 0:
        p.error("--seconds must be > 0 and --seed >= 0")

    self_play(4, 0.0, args.seed)  # warm up: one game each, untimed
    self_play(2, 0.0, args.seed)
    result: dict[str, float] = {}
    for players in (4, 2):
        games, decisions, elapsed, cpu = self_play(players, args.seconds * SHARES[f"{players}p"], args.seed)
        result[f"decisions_per_s_{players}p"] = decisions / elapsed
        result[f"games_per_s_{players}p"] = games / elapsed
        print(
            f"{players} players: {games} games, {decisions} decisions in {elapsed:.2f} s: "
            f"{games / elapsed:,.1f} games/s, {decisions / elapsed:,.0f} decisions/s "
            f"({decisions / games:.0f} decisions/game)"
        )
        if cpu < 0.9 * elapsed:  # rates are wall-clock: say so when other processes took the CPU
            print(f"  note: this process ran only {cpu / elapsed:.0%} of the time; the machine is busy")
    lists = record_legal_lists(4, 20, args.seed)
    decisions, elapsed = baseline(lists, args.seconds * SHARES["baseline"], args.seed)
    result["baseline_decisions_per_s"] = decisions / elapsed
    print(f"baseline (random choice from precomputed legal lists, no engine): {decisions / elapsed:,.0f} decisions/s")
    per_decision = 1e6 / result["decisions_per_s_4p"] - 1e6 / result["baseline_decisions_per_s"]
    met = "met" if result["decisions_per_s_4p"] >= GOAL_4P else "NOT met"
    print(f"engine cost per decision (4 players, baseline removed): {per_decision:.2f} us; "
          f"goal >= {GOAL_4P:,} decisions/s (4 players): {met}")  # fmt: skip
    if args.json:
        print(json.dumps({k: round(v, 1) for k, v in result.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
