"""How precise the duplicate-adjusted score is under each duplicate scheme, measured on the example bots.

A field of the example bots (random, greedy and counter, twice each with different seeds) plays the same
tournament config under ``seat_orders = "across"`` and ``"rotations"``, with as many games per entrant in both
(across plays ``table_size`` times the deals, since rotations replays each deal ``table_size`` times). This is
repeated with ``--reps`` tournament seeds, so with fresh deals each time. For each scheme it prints, per entrant,
the mean and the standard deviation over the repetitions of its duplicate-adjusted score (``dup_avg_score``, the
standings' estimator) and of its raw average score; then the averages over entrants. The games are played
in-process by the engine and the example policies (referee/tournament/standings.py computes the figures from the
same rows the store would give it), so this measures the schedule and the estimator, not the transport.

    python3 scripts/dup_variance.py --reps 40 --table-size 2 --deals 4 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from abluxx_bot import BotSession
from abluxx_bot.examples import REGISTRY
from abluxx_bot.local import play_local

from referee.store.sqlite import GameRow, SeatRow
from referee.tournament import schedule, standings
from referee.tournament.config import parse

FIELD = [("random", 1), ("random", 2), ("greedy", 1), ("greedy", 2), ("counter", 1), ("counter", 2)]


def tournament(scheme: str, seed: int, table_size: int, deals: int) -> dict[str, tuple[float, float]]:
    """Each entrant's (dup_avg_score, avg_score) in one tournament."""
    entrants = [{"name": f"{bot}-{s}", "policy": bot} for bot, s in FIELD]
    # public deals: the decks follow from the seed, so each repetition deals fresh ones and a rerun the same
    cfg = parse({"name": "dupvar", "seed": seed, "table_size": table_size, "deals": deals, "seat_orders": scheme,
                 "public_deals": True, "entrants": entrants}, "dup_variance")  # fmt: skip
    bot_seed = {f"{bot}-{s}": s for bot, s in FIELD}
    rows = []
    for slot in schedule.build(cfg, None):
        sessions = [BotSession(REGISTRY[name.rsplit("-", 1)[0]](bot_seed[name])) for name in slot.seats]
        game = play_local(sessions, slot.deck_seed, game_id=slot.game_id, names=list(slot.seats))
        seats = [SeatRow(name, game.scores[i], game.places[i], False, {}, []) for i, name in enumerate(slot.seats)]
        rows.append(GameRow(slot.slot, slot.game_id, slot.table, slot.deal, slot.order, seats, "", game.decisions,
                            None, 0.0))  # fmt: skip
    result = standings.compute("dupvar", [e["name"] for e in entrants], rows, len(rows))
    return {r.entrant: (r.dup_avg_score, r.avg_score) for r in result.rows}


def measure(reps: int, table_size: int, deals: int) -> dict:
    schemes = {"rotations": deals, "across": deals * table_size}  # the same number of games per entrant
    out: dict = {"table_size": table_size, "entrants": len(FIELD), "reps": reps}
    for scheme, scheme_deals in schemes.items():
        per: dict[str, list[tuple[float, float]]] = {}
        for rep in range(reps):
            for name, fig in tournament(scheme, 1000 + rep, table_size, scheme_deals).items():
                per.setdefault(name, []).append(fig)
        games = schedule.size(len(FIELD), table_size, 0, scheme_deals, scheme) * table_size // len(FIELD)
        rows = {
            name: {
                "dup_mean": statistics.fmean(d for d, _ in figs),
                "dup_sd": statistics.stdev(d for d, _ in figs),
                "raw_mean": statistics.fmean(r for _, r in figs),
                "raw_sd": statistics.stdev(r for _, r in figs),
            }
            for name, figs in sorted(per.items())
        }
        out[scheme] = {
            "deals": scheme_deals,
            "games_per_entrant": games,
            "entrants": rows,
            "dup_sd": statistics.fmean(r["dup_sd"] for r in rows.values()),
            "raw_sd": statistics.fmean(r["raw_sd"] for r in rows.values()),
            # how far apart the entrants' true dup scores are, against the noise of one tournament's estimate
            "dup_spread": statistics.pstdev(r["dup_mean"] for r in rows.values()),
        }
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=40, help="tournaments per scheme, each with its own seed")
    p.add_argument("--table-size", type=int, default=2, choices=range(2, 6))
    p.add_argument("--deals", type=int, default=4, help="deals per table under rotations (across plays k times)")
    p.add_argument("--json", action="store_true", help="also print the figures as JSON on the last line")
    args = p.parse_args()
    t0 = time.monotonic()
    fig = measure(args.reps, args.table_size, args.deals)
    print(f"{len(FIELD)} example bots at {args.table_size} players, {args.reps} tournaments per scheme")
    for scheme in ("rotations", "across"):
        f = fig[scheme]
        print(f"\n{scheme}: {f['deals']} deals a table, {f['games_per_entrant']} games per entrant")
        print(f"  {'entrant':<10} {'dup mean':>9} {'dup sd':>7} {'raw mean':>9} {'raw sd':>7}")
        for name, r in f["entrants"].items():
            print(f"  {name:<10} {r['dup_mean']:>+9.2f} {r['dup_sd']:>7.2f} {r['raw_mean']:>+9.2f} {r['raw_sd']:>7.2f}")
        print(f"  mean sd: dup {f['dup_sd']:.2f}, raw {f['raw_sd']:.2f}; spread of the dup means {f['dup_spread']:.2f}")
    fig["seconds"] = round(time.monotonic() - t0, 1)
    if args.json:
        print(json.dumps(fig))


if __name__ == "__main__":
    main()
