#!/usr/bin/env python3
"""Benchmark: a ladder's pairing speed and how fast it converges (docs/tournaments.md, "Ladders").

    python3 scripts/bench_ladder.py [--json] [--seeds N] [--field wide|narrow] [--budget G] [--entrants N]
                                    [--tables T] [--table-size K] [--jobs J]

Prints, and with --json as one JSON object on the last line:
- ``choose_round_ms_1000``: the median CPU time (of this process: the machine may be shared) to choose one round
  (its tables, sections and decks) for 1,000 entrants of 400 owners at tables of 4, over 20 rounds of a ladder
  whose ratings and meetings build up; ``choose_round_wall_ms_1000`` is the wall time of the same;
- ``games_to_tau90_ladder`` and ``games_to_tau90_uniform``: the games played until Kendall's tau between the
  leaderboard (mu - 3 sigma) and the known order of a graded field stays at or above 0.9 to the end of the
  budget, averaged over the seeds; the ladder (its default settings but ``tables``) against a baseline of
  uniformly random tables, on the same budget, field, tables per round, table size and deals. Each round seats
  ``--tables`` tables (default 0: everyone; fewer, and the ladder also chooses who plays, the baseline drawing
  that many tables' entrants uniformly at random). A run that never settles at 0.9 counts as the budget;
- ``ladder_vs_uniform``: their ratio (the issue's goal is 0.6 or less), and ``ladder_vs_uniform_90`` a 90%
  bootstrap interval of it over the seeds; ``spread``: each method's min, max, standard deviation and standard
  error over the seeds (one seed's figure is the last dip of tau below 0.9, a noisy thing);
- ``games_to_settle_new``: the games a new entrant (greedy+eps0.25) plays, after joining a settled 20-entrant
  ladder, until its sigma (over the results the ladder pairs by) is under ``sigma_target``, averaged over seeds;
- ``idle_share``: the share of game slots (``concurrency`` = 8 of them) that stood empty while a ladder of 24
  entrants and 400 games ran through the real ``run_ladder`` and ``play_slots``, with games of 50 to 250 ms: the
  wait at round boundaries that the lag of 2 rounds is there to hide.

The field is graded, its order known: each step of epsilon costs a bot points (docs/bots.md). ``--field wide``
(the default; ``--entrants`` 32, ``--budget`` 1000): counter, greedy with a uniform random action on a share
epsilon of its decisions (``greedy+epsP``) at N / 2 epsilons from 0 to 1 (greedy+eps1 is random), then hoard, the
deliberately weak example, at the rest, its epsilon falling by the same step to 0. ``--field narrow`` (``--entrants``
16, ``--budget`` 600, the field of the earlier measurements): counter, then greedy at N - 1 epsilons from 0 to 1.
Why two: on the narrow field, its neighbours a fifth of TrueSkill's beta apart, random tables are nearly as
informative as any pairing (``scripts/ladder_bound.py``). The games are played
in-process, with the engine and the built-in policies and no gRPC (``abluxx_bot.local.play_local``), since only
the choice of tables is compared; the pairing is the ladder's own (``Book.choose``, ``round_slots``). Seeds run on
``--jobs`` processes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from abluxx_bot import BotSession
from abluxx_bot.examples import factory
from abluxx_bot.local import play_local
from scipy.stats import kendalltau

from referee.engine import EndReason
from referee.log import configure
from referee.match.spec import GameResult, GameSpec, SeatStats
from referee.rating import Ratings
from referee.store import open_store
from referee.store.ladder import LadderEntrant
from referee.tournament.config import LadderSettings, TournamentConfig, parse
from referee.tournament.deals import PublicDeals
from referee.tournament.ladder import Meetings, Member, choose, round_slots
from referee.tournament.ladder_run import Book, file_entrants, run_ladder
from referee.tournament.schedule import _derive


def graded(n: int) -> list[str]:
    """The graded field of ``n`` entrants, best first: counter, then greedy at n - 1 epsilons from 0 to 1."""
    return ["counter", *(f"greedy+eps{e / (n - 2):.3f}" for e in range(n - 1))]


def wide(n: int) -> list[str]:
    """The wide graded field of ``n`` entrants, best first: counter, greedy at n // 2 epsilons from 0 to 1 (the
    last is random), then hoard at the rest, its epsilon falling by the same step from just under 1 to 0."""
    g = n // 2
    step = 1 / (g - 1)
    return ["counter", *(f"greedy+eps{e * step:.3f}" for e in range(g)),
            *(f"hoard+eps{max(0.0, 1 - e * step):.3f}" for e in range(1, n - g))]  # fmt: skip


FIELDS = {"narrow": (graded, 16, 600), "wide": (wide, 32, 1000)}  # the field, its entrants and budget by default


SETTLE_FIELD = graded(20)
NEWCOMER = "greedy+eps0.25"


def config_for(policies: list[str], seed: int, k: int, ladder: dict[str, Any] | None = None) -> TournamentConfig:
    entrants = [{"name": f"e{i:02d}-{p}", "policy": p} for i, p in enumerate(policies)]
    data = {"name": "bench", "seed": seed, "table_size": k, "public_deals": True, "ladder": ladder or {},
            "entrants": entrants}  # fmt: skip
    return parse(data, "<bench>")


Play = Callable[[tuple[str, ...], int, str], tuple[int, ...]]  # a table's seats, deck and game id -> places


def play(seats: tuple[str, ...], deck: int, game_id: str) -> tuple[int, ...]:
    """One game in-process: the entrants' policies (named after the dash), their noise seeded by the game."""
    sessions = [BotSession(factory(n.split("-", 1)[1])(_derive(deck, game_id, i))) for i, n in enumerate(seats)]  # type: ignore[misc]
    return tuple(play_local(sessions, deck, game_id=game_id, names=list(seats)).places)


def tau(ratings: Ratings, names: list[str]) -> float:
    """Kendall's tau between the leaderboard and the known order (``names`` best first)."""
    board = [n for n, _ in ratings.leaderboard()]
    return float(kendalltau([names.index(n) for n in board], range(len(board))).statistic)


def true_order(book: Book, present: list[LadderEntrant], names: list[str]) -> list[tuple[str, ...]]:
    """The ladder's rule given the known order instead of its ratings, after its blind rounds (for
    scripts/ladder_sim.py: what pairing by the truth would give)."""
    tables = book.choose(present)  # folds in the lagged results, whatever the lag
    if not book.rated:  # a blind round: no results to pair by yet, as for the ladder
        return tables
    members = [Member(e.name, e.owner, -names.index(e.name), 1.0, book.games[e.name]) for e in present]
    return choose(len(book.rounds), members, book.settings, book.table_size, book.seed, book.meetings)


def convergence(
    method: str,
    seed: int,
    budget: int,
    k: int,
    n: int,
    per_round: int = 0,
    field: str = "wide",
    games: Play | None = None,
) -> int:
    """Games until tau stays at or above 0.9 to the end of the budget (the budget when it never does).
    ``method``: "ladder", "uniform" or "true-order" (``true_order``). ``per_round`` tables a round (0: everyone
    seated); the uniform baseline seats that many tables of entrants drawn uniformly at random. ``games``: plays a
    table (``play``'s signature; default ``play``, the real policies)."""
    games = games or play
    config = config_for(FIELDS[field][0](n), seed, k, {"tables": per_round})
    tables_per_round = per_round or n // k
    names = [e.name for e in config.entrants]
    book, live, present = Book(config), Ratings(names), file_entrants(config)
    rng = random.Random(seed)
    key, tid = PublicDeals(seed), f"bench-{seed}"
    owners = {n: n for n in names}
    played, settled_at = 0, None
    while played < budget:
        if method == "ladder":
            tables = book.choose(present)
        elif method == "true-order":
            tables = true_order(book, present, names)
        else:
            order = rng.sample(names, len(names))
            tables = [tuple(order[i * k : i * k + k]) for i in range(min(tables_per_round, n // k))]
        slots = round_slots(tid, len(book.rounds), tables, owners, key, book.scheduled)
        book.add_round(slots)
        for s in slots:
            places = games(s.seats, s.deck_seed, s.game_id)
            book.add_result(s.slot, s.seats, places)
            live.add(s.seats, places)
        played += len(slots)
        below = tau(live, names) < 0.9
        settled_at = None if below else settled_at or played
    out = settled_at if settled_at is not None else budget
    print(f"{method} seed {seed}: {out}", file=sys.stderr, flush=True)  # a long run that fails keeps these
    return out


def settle_new(seed: int, k: int) -> int:
    """The games the newcomer plays, after joining a settled 20-entrant ladder, until its sigma is under target."""
    config = config_for(SETTLE_FIELD, seed, k)
    assert config.ladder is not None
    target = config.ladder.sigma_target
    book, present = Book(config), file_entrants(config)
    key, tid = PublicDeals(seed), f"settle-{seed}"

    def one_round() -> None:
        tables = book.choose(present)
        slots = round_slots(tid, len(book.rounds), tables, {e.name: e.owner for e in present}, key, book.scheduled)
        book.add_round(slots)
        for s in slots:
            book.add_result(s.slot, s.seats, play(s.seats, s.deck_seed, s.game_id))

    for _ in range(400):  # until every sigma (in the ratings the ladder pairs by) is under the target
        one_round()
        if book.rated and all(book.ratings.get(e.name).sigma < target for e in present):
            break
    joined = len(book.rounds)
    new = LadderEntrant(f"new-{NEWCOMER}", "new", "new", joined_round=joined)
    present.append(new)
    for _ in range(300):  # its sigma as the ladder knows it: the ratings through the lagged round
        one_round()
        if book.rated > joined and book.ratings.get(new.name).sigma < target:
            break
    # the games it had played by then (those of the rounds the ratings cover)
    return sum(new.name in s.seats for r in book.rounds[: book.rated] for s in r)


def choose_round_ms(n: int = 1000, rounds: int = 20) -> tuple[float, float]:
    """The median (CPU, wall) milliseconds to choose a round for ``n`` entrants."""
    rng = random.Random(1)
    members = [Member(f"e{i}", f"o{i % 400}", rng.gauss(25, 5), rng.uniform(1, 8), rng.randrange(40)) for i in range(n)]
    owners = {m.name: m.owner for m in members}
    meetings, cpu, wall = Meetings(LadderSettings().meeting_window), [], []
    key = b"k" * 32
    for r in range(rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        tables = choose(r, members, LadderSettings(), 4, 1, meetings)
        round_slots("bench", r, tables, owners, key, r * n)
        cpu.append((time.process_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
        meetings.add_round(tables)
        # the ratings move a little between rounds, as they would
        members = [Member(m.name, m.owner, m.mu + rng.gauss(0, 0.3), max(0.8, m.sigma * 0.97), m.games + 1)
                   for m in members]  # fmt: skip
    return statistics.median(cpu), statistics.median(wall)


class _Busy:
    def __init__(self) -> None:
        self.busy = 0.0


def idle_share(concurrency: int = 8, games: int = 400) -> float:
    """The empty share of ``concurrency`` game slots while a 24-entrant ladder of ``games`` games runs."""
    busy = _Busy()
    rng = random.Random(3)

    @contextlib.asynccontextmanager
    async def player(records: Path) -> AsyncIterator:
        async def play_one(spec: GameSpec) -> GameResult:
            start = time.perf_counter()
            await asyncio.sleep(rng.uniform(0.05, 0.25))  # games of 50 to 250 ms
            busy.busy += time.perf_counter() - start
            n = len(spec.entrants)
            places = tuple(range(1, n + 1))
            return GameResult(spec.game_id, (0,) * n, places, EndReason.EMPTY_HAND, [SeatStats() for _ in range(n)],
                              1, "", None)  # fmt: skip

        yield play_one

    config = config_for([f"greedy+eps{e / 23:.3f}" for e in range(24)], 1, 2, {"games": games})
    with tempfile.TemporaryDirectory() as tmp, open_store(tmp) as store:
        start = time.perf_counter()
        asyncio.run(run_ladder(config, store, player, concurrency=concurrency, progress=False))
        wall = time.perf_counter() - start
    return max(0.0, 1 - busy.busy / (concurrency * wall))


def spread(runs: list[int]) -> dict[str, float]:
    """How far one seed's figure is from another's: min, max, standard deviation and standard error."""
    sd = statistics.stdev(runs) if len(runs) > 1 else 0.0
    return {"min": min(runs), "max": max(runs), "sd": round(sd, 1), "se": round(sd / len(runs) ** 0.5, 1)}


def ratio_interval(ladder: list[int], uniform: list[int], draws: int = 4000) -> list[float]:
    """A 90% bootstrap interval of the ratio of the means: the seeds resampled (each seed's ladder and uniform
    runs together, as they share the field and the deals' seed), the 5th and 95th percentiles of the ratio."""
    rng = random.Random(0)
    pairs = list(zip(ladder, uniform, strict=True))
    ratios = []
    for _ in range(draws):
        sample = [rng.choice(pairs) for _ in pairs]
        ratios.append(sum(a for a, _ in sample) / sum(b for _, b in sample))
    ratios.sort()
    return [round(ratios[int(0.05 * draws)], 3), round(ratios[int(0.95 * draws) - 1], 3)]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--seeds", type=int, default=4, help="seeds per method (default 4)")
    p.add_argument("--field", choices=sorted(FIELDS), default="wide",
                   help="wide: counter, greedy and hoard (default); narrow: counter and greedy")
    p.add_argument("--budget", type=int, help="games per convergence run (default 1000 wide, 600 narrow)")
    p.add_argument("--table-size", type=int, default=4, help="seats per table (default 4)")
    p.add_argument("--entrants", type=int, help="entrants in the graded field (default 32 wide, 16 narrow)")
    p.add_argument("--tables", type=int, default=0, help="tables per round (default 0: everyone seated)")
    p.add_argument("--jobs", type=int, default=2, help="processes for the convergence runs (default 2)")
    args = p.parse_args()
    policies, entrants, budget = FIELDS[args.field]
    args.entrants, args.budget = args.entrants or entrants, args.budget or budget
    if args.entrants < 2 * args.table_size:
        p.error(f"--entrants must be at least two tables' worth ({2 * args.table_size})")
    configure("warning")  # the ladder logs each round it chooses
    started = time.perf_counter()
    cpu, wall = choose_round_ms()
    out: dict[str, Any] = {"choose_round_ms_1000": round(cpu, 2), "choose_round_wall_ms_1000": round(wall, 2)}
    out["idle_share"] = round(idle_share(), 3)
    print(f"so far: {json.dumps(out)}", file=sys.stderr, flush=True)  # a long run that fails keeps these
    seeds = list(range(1, args.seeds + 1))
    with ProcessPoolExecutor(args.jobs) as pool:
        same = (
            [args.budget] * len(seeds),
            [args.table_size] * len(seeds),
            [args.entrants] * len(seeds),
            [args.tables] * len(seeds),
            [args.field] * len(seeds),
        )
        ladder = pool.map(convergence, ["ladder"] * len(seeds), seeds, *same)
        uniform = pool.map(convergence, ["uniform"] * len(seeds), seeds, *same)
        settle = pool.map(settle_new, seeds, [args.table_size] * len(seeds))
        ladder_runs, uniform_runs, settle_runs = list(ladder), list(uniform), list(settle)
    out["games_to_tau90_ladder"] = statistics.mean(ladder_runs)
    out["games_to_tau90_uniform"] = statistics.mean(uniform_runs)
    out["ladder_vs_uniform"] = round(out["games_to_tau90_ladder"] / out["games_to_tau90_uniform"], 3)
    out["ladder_vs_uniform_90"] = ratio_interval(ladder_runs, uniform_runs)
    out["games_to_settle_new"] = statistics.mean(settle_runs)
    out["spread"] = {m: spread(r) for m, r in (("ladder", ladder_runs), ("uniform", uniform_runs))}
    out.update(runs={"ladder": ladder_runs, "uniform": uniform_runs, "settle_new": settle_runs},
               seeds=len(seeds), budget=args.budget, table_size=args.table_size, tables=args.tables,
               field=policies(args.entrants),
               seconds=round(time.perf_counter() - started, 1))  # fmt: skip
    report(out, args.json, skip=("runs", "field", "spread"))
    return 0


def report(out: dict[str, Any], as_json: bool, skip: tuple[str, ...] = ()) -> None:
    """Each figure on a line of its own (on stderr with ``as_json``, where the last line is ``out`` as JSON)."""
    for k, v in out.items():
        if k not in skip:
            print(f"{k:>24}: {v}", file=sys.stderr if as_json else sys.stdout)
    if as_json:
        print(json.dumps(out))


if __name__ == "__main__":
    raise SystemExit(main())
