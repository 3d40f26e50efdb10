"""The example bots measured against each other, in-process (no gRPC), with duplicate deals.

Each deal is played once for every distinct seating of the lineup around the table (up to rotation) and every
rotation of it: with counter,greedy,random,random that is 3 seatings x 4 rotations = 12 games a deal. So every
bot holds every hand from every seat, and sits after each other bot equally often: the luck of the deal and of
the seat order cancels out. Prints the average score per bot (with a standard error taken over
deals, since the 4 games of a deal are not independent) and the win rates (a shared first place counts as a
share of a win). ``--json`` adds one JSON object as the last line.

    python3 scripts/bots_table.py --games 2000 --seed 1
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time

from abluxx_bot import BotSession
from abluxx_bot.examples import REGISTRY
from abluxx_bot.local import play_local

DEFAULT_LINEUP = ["counter", "greedy", "random", "random"]


def seatings(lineup: list[str]) -> list[list[str]]:
    """Every distinct order of ``lineup`` around the table, rotations included, each once."""
    first, rest = lineup[0], lineup[1:]
    orders = sorted({(first, *p) for p in itertools.permutations(rest)})
    return [list(o[r:] + o[:r]) for o in orders for r in range(len(o))]


def run(games: int, seconds: float | None, seed: int, lineup: list[str]) -> dict:
    names = sorted(set(lineup))
    deal_scores: dict[str, list[float]] = {b: [] for b in names}  # per deal: the bot's mean score
    total = {b: 0.0 for b in names}
    wins = {b: 0.0 for b in names}
    seat_games = {b: 0 for b in names}
    played = 0
    t0 = time.monotonic()
    deal = 0
    tables = seatings(lineup)
    while played < games:
        if seconds is not None and time.monotonic() - t0 > seconds:
            break
        deal_seed = seed * 1_000_003 + deal
        this_deal = {b: [0.0, 0] for b in names}
        for rot, seats in enumerate(tables):
            sessions = [BotSession(REGISTRY[b](seed)) for b in seats]
            result = play_local(sessions, deal_seed, game_id=f"t{deal_seed}r{rot}")
            firsts = [i for i, p in enumerate(result.places) if p == 1]
            for i, b in enumerate(seats):
                s = result.scores[i]
                total[b] += s
                seat_games[b] += 1
                this_deal[b][0] += s
                this_deal[b][1] += 1
                if i in firsts:
                    wins[b] += 1 / len(firsts)
            played += 1
        for b in names:
            deal_scores[b].append(this_deal[b][0] / this_deal[b][1])
        deal += 1
    elapsed = time.monotonic() - t0
    bots = {}
    for b in names:
        xs = deal_scores[b]
        mean = total[b] / seat_games[b] if seat_games[b] else 0.0
        if len(xs) > 1:
            m = sum(xs) / len(xs)
            se = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))
        else:
            se = float("nan")
        bots[b] = {
            "seats_in_lineup": lineup.count(b),
            "seat_games": seat_games[b],
            "mean_score": round(mean, 3),
            "stderr": round(se, 3),
            "win_rate": round(wins[b] / seat_games[b], 4) if seat_games[b] else 0.0,
        }
    return {
        "lineup": lineup,
        "games": played,
        "deals": deal,
        "seed": seed,
        "seconds": round(elapsed, 2),
        "games_per_s": round(played / elapsed, 1) if elapsed else 0.0,
        "bots": bots,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=2000, help="games to play, rounded up to whole deals")
    p.add_argument("--seconds", type=float, default=None, help="stop starting new deals after this many seconds")
    p.add_argument("--seed", type=int, default=1, help="deal seed and the bots' seed (default 1)")
    p.add_argument("--lineup", default=",".join(DEFAULT_LINEUP), help="bot names by seat, comma separated")
    p.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    args = p.parse_args(argv)
    lineup = [x.strip() for x in args.lineup.split(",") if x.strip()]
    unknown = [b for b in lineup if b not in REGISTRY]
    if unknown:
        p.error(f"unknown bot(s) {', '.join(unknown)}; known: {', '.join(sorted(REGISTRY))}")
    if not 2 <= len(lineup) <= 5:
        p.error(f"a lineup has 2 to 5 bots, got {len(lineup)}")
    r = run(args.games, args.seconds, args.seed, lineup)
    per_deal = r["games"] // max(r["deals"], 1)
    print(
        f"{r['games']} games ({r['deals']} deals x {per_deal} seatings), lineup {','.join(lineup)}, "
        f"seed {r['seed']}, {r['seconds']} s"
    )
    print(f"{'bot':<10} {'seat-games':>10} {'avg score':>10} {'± s.e.':>8} {'win rate':>9}")
    for b, x in sorted(r["bots"].items(), key=lambda kv: -kv[1]["mean_score"]):
        print(f"{b:<10} {x['seat_games']:>10} {x['mean_score']:>+10.2f} {x['stderr']:>8.2f} {x['win_rate']:>9.1%}")
    if args.json:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
