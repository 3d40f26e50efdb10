"""How often the standings' "separated from the next" mark is set (docs/notes/2026-12-06-separated-mark.md): real
in-process tournaments of built-in policies, scheduled as `abluxx tournament run` schedules them (public deals, a
fresh seed per tournament), played by the engine and the bot kit's policies, and their standings computed by
``referee.tournament.standings`` from the same rows the store would give it.

- **identical**: N copies of greedy+eps0.2 (each its own seed), N from 2 to 6: every neighbour pair is two
  identical entrants, so every mark is a false one; the rate is marks over neighbour pairs, which must be at
  most 0.05.
- **gap**: counter, greedy+eps0.2, random and hoard, at tables of 2 and of 3: the rate is the share of tournaments
  in which counter sits right above greedy+eps0.2 and is marked separated from it.
- **twins**: the gap's field with counter replaced by a second greedy+eps0.2 (two identical entrants above two
  weaker ones): the share of tournaments in which the copies are marked separated, a false mark. It is the gap
  check's own null, in the same field shape, where **identical** fields have no other entrant.

    python3 scripts/separated_sim.py [--reps 200] [--deals 20] [--only identical|gap|twins] [--tables 2 3] [--json]

Each rate comes with its 95% Clopper-Pearson interval; the JSON also gives every tournament's neighbour gaps,
(mu_upper - mu_lower) / sd of the difference, so that another threshold can be judged on the same tournaments.
The figures depend on the rating estimator (``referee.rating``) and on the schedule (``referee.tournament.schedule``:
who sits after whom at tables of 3; docs/schedule.md, "Neighbours"): measure them again when either changes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from abluxx_bot import BotSession
from abluxx_bot.examples import factory
from abluxx_bot.local import play_local
from scipy import stats

from referee import rating
from referee.store.sqlite import GameRow, SeatRow
from referee.tournament import schedule, standings
from referee.tournament.config import parse

NOISY = "greedy+eps0.2"
GAP_FIELD = ("counter", NOISY, "random", "hoard")


def tournament(policies: list[str], seed: int, table_size: int, deals: int) -> tuple[standings.Standings, list[float]]:
    """One round robin of these policies (entrant "POLICY-i" plays policies[i] with seed ``seed * 100 + i``): its
    standings, and each neighbour pair's gap, (mu_upper - mu_lower) / sd of the difference, in the rows' order."""
    names = [f"{p}-{i}" for i, p in enumerate(policies)]
    cfg = parse({"name": "separated", "seed": seed, "table_size": table_size, "deals": deals, "public_deals": True,
                 "entrants": [{"name": n, "policy": p} for n, p in zip(names, policies, strict=True)]},
                "separated_sim")  # fmt: skip
    bots = {n: (factory(p), seed * 100 + i) for i, (n, p) in enumerate(zip(names, policies, strict=True))}
    rows = []
    for slot in schedule.build(cfg, None):
        sessions = [BotSession(bots[n][0](bots[n][1])) for n in slot.seats]  # type: ignore[misc]
        game = play_local(sessions, slot.deck_seed, game_id=slot.game_id, names=list(slot.seats))
        seats = [SeatRow(n, game.scores[i], game.places[i], False, {}, []) for i, n in enumerate(slot.seats)]
        rows.append(GameRow(slot.slot, slot.game_id, slot.table, slot.deal, slot.order, seats, "", game.decisions,
                            None, 0.0))  # fmt: skip
    ratings = rating.rate(names, ((g.names, g.places) for g in rows))
    ratings.fit()
    table = standings.compute("separated", names, rows, len(rows), ratings)
    gaps = [(ratings.get(u.entrant).mu - ratings.get(v.entrant).mu) / ratings.difference_sd(u.entrant, v.entrant)
            for u, v in itertools.pairwise(table.rows)]  # fmt: skip
    return table, gaps


def rate(hits: int, n: int) -> dict[str, object]:
    ci = stats.binomtest(hits, n).proportion_ci(0.95)
    return {"marked": hits, "of": n, "rate": hits / n, "ci95": [ci.low, ci.high]}


def identical(entrants: int, reps: int, deals: int, seed: int) -> dict[str, object]:
    """Marks between neighbours of N identical entrants (all false), over ``reps`` tournaments at tables of 2."""
    hits = pairs = 0
    gaps = []
    for rep in range(reps):
        table, found = tournament([NOISY] * entrants, seed + rep, 2, deals)
        hits += sum(r.separated_from_next is True for r in table.rows[:-1])
        pairs += len(table.rows) - 1
        gaps.append(found)
    return {"check": "identical", "entrants": entrants, "table_size": 2, "deals": deals, **rate(hits, pairs),
            "gaps": gaps}  # fmt: skip


def gap(table_size: int, reps: int, deals: int, seed: int, twins: bool = False) -> dict[str, object]:
    """Tournaments in which counter is right above greedy+eps0.2 and marked separated from it; ``twins``: the same
    field with counter replaced by a second greedy+eps0.2, and the two copies marked (a false mark: the power
    check's own null)."""
    field = [NOISY, *GAP_FIELD[1:]] if twins else list(GAP_FIELD)
    upper = field[0]
    hits = adjacent = 0
    gaps = []
    for rep in range(reps):
        table, found = tournament(field, seed + rep, table_size, deals)
        order = [r.entrant.rsplit("-", 1)[0] for r in table.rows]
        i = order.index(upper)
        if i + 1 < len(order) and order[i + 1] == NOISY:
            adjacent += 1
            hits += table.rows[i].separated_from_next is True
        gaps.append({"order": order, "gaps": found})
    return {"check": "twins" if twins else "gap", "field": field, "table_size": table_size, "deals": deals,
            "adjacent": adjacent, **rate(hits, reps), "gaps": gaps}  # fmt: skip


def show(r: dict[str, object]) -> dict[str, object]:
    """Prints a row as soon as it is measured (a full run takes many minutes)."""
    ci: list[float] = r["ci95"]  # type: ignore[assignment]
    low, high = ci
    what = {
        "identical": f"{r.get('entrants')} identical",
        "gap": f"counter over {NOISY}",
        "twins": f"{NOISY} over its twin",
    }[r["check"]]  # type: ignore[index]
    print(f"{what:<28} tables of {r['table_size']}, {r['deals']} deals: marked {r['marked']} of {r['of']} = "
          f"{r['rate']:.3f} [{low:.3f}, {high:.3f}]", flush=True)  # fmt: skip
    return r


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=200, help="tournaments per row (default 200)")
    p.add_argument("--deals", type=int, default=20, help="deals per tournament (default 20)")
    p.add_argument("--seed", type=int, default=1, help="the first tournament's seed (default 1)")
    p.add_argument("--only", choices=("identical", "gap", "twins"), help="only these rows")
    p.add_argument("--tables", type=int, nargs="+", default=[2, 3], help="gap, twins: table sizes (default 2 3)")
    p.add_argument("--entrants", type=int, nargs="+", default=[2, 3, 4, 5, 6], help="identical: field sizes")
    p.add_argument("--json", action="store_true", help="also print every figure as one JSON object, last")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    rows = []
    for k in args.tables if args.only in (None, "gap") else ():
        rows.append(show(gap(k, args.reps, args.deals, args.seed)))
    for k in args.tables if args.only in (None, "twins") else ():
        rows.append(show(gap(k, args.reps, args.deals, args.seed, twins=True)))
    for n in args.entrants if args.only in (None, "identical") else ():
        rows.append(show(identical(n, args.reps, args.deals, args.seed)))
    if args.json:
        print(json.dumps({"reps": args.reps, "deals": args.deals, "rows": rows,
                          "seconds": round(time.monotonic() - t0, 1)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
