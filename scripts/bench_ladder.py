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
  budget, averaged over the seeds; the ladder (its default settings) against a baseline of uniformly random
  tables of the idle entrants, on the same budget, field, game slots and table size. The ladder runs on a
  simulated clock (``simulate``): ``--tables`` game slots (default 0: enough for everyone), games of a seeded
  0.5 to 1.5 time units, a table chosen whenever a slot frees, each result reaching the ladder as its game ends.
  A run that never settles at 0.9 counts as the budget;
- ``ladder_vs_uniform``: their ratio (the issue's goal is 0.6 or less), and ``ladder_vs_uniform_90`` a 90%
  bootstrap interval of it over the seeds; ``spread``: each method's min, max, standard deviation and standard
  error over the seeds (one seed's figure is the last dip of tau below 0.9, a noisy thing);
- ``games_to_settle_new``: the games a new entrant (greedy+eps0.25) plays, after joining a settled 20-entrant
  ladder, until its sigma (over the results the ladder pairs by) is under ``sigma_target``, averaged over seeds;
- ``idle_share``: the share of game slots (``concurrency`` = 8 of them) that stood empty while a ladder of 32
  entrants at tables of 2 and 400 games ran through the real ``run_ladder`` and ``play_slots``, with games of 50
  to 250 ms (the issue's goal is 0.1 or less); ``idle_share_k4`` the same at tables of 4, where the 8 slots hold
  every entrant, so the four of an ended game wait for another to end before they are seated again;
- ``slow_bot_throughput`` (and ``_k3``, ``_k4``): the ladder's games a second among 8 fast entrants with one slow
  but legal bot beside them, over the same field without it, at tables of 2 (3, 4), each for 20 s of wall time
  through the real ``run_ladder`` (goal 0.8 or more; ``slow_bot_throughput`` says what bounds it);
- ``dead_bot_seatings``: the tables an entrant is seated at in the 20 s after its bot is killed (goal 3 or
  fewer). Those three use a player whose games take a set time (``_Timed``): the scheduling is measured, not the
  moves.

The field is graded, its order known: each step of epsilon costs a bot points (docs/bots.md). ``--field wide``
(the default; ``--entrants`` 32, ``--budget`` 1000): counter, greedy with a uniform random action on a share
epsilon of its decisions (``greedy+epsP``) at N / 2 epsilons from 0 to 1 (greedy+eps1 is random), then hoard, the
deliberately weak example, at the rest, its epsilon falling by the same step to 0. ``--field narrow`` (``--entrants``
16, ``--budget`` 600, the field of the earlier measurements): counter, then greedy at N - 1 epsilons from 0 to 1.
Why two: on the narrow field, its neighbours a fifth of TrueSkill's beta apart, random tables are nearly as
informative as any pairing (``scripts/ladder_bound.py``). The games are played
in-process, with the engine and the built-in policies and no gRPC (``abluxx_bot.local.play_local``), since only
the choice of tables is compared; the pairing is the ladder's own (``Book.choose``). Seeds run on
``--jobs`` processes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import heapq
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from abluxx_bot import BotSession
from abluxx_bot.examples import factory
from abluxx_bot.local import play_local
from scipy.stats import kendalltau

from referee.engine import EndReason
from referee.errors import SeatsAbsent
from referee.log import configure
from referee.match.spec import GameResult, GameSpec, SeatStats
from referee.rating import Ratings
from referee.store import ladder as ladder_store
from referee.store import open_store
from referee.store.ladder import LadderEntrant
from referee.tournament.config import LadderSettings, TournamentConfig, parse
from referee.tournament.ladder import Meetings, Member, choose
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


def true_order(book: Book, idle: list[LadderEntrant], free: int, names: list[str]) -> list[tuple[str, ...]]:
    """The ladder's rule given the known order instead of its ratings, once it has seen a result (for
    scripts/ladder_sim.py: what pairing by the truth would give)."""
    if not book.seen:  # nothing to pair by yet, as for the ladder
        return book.choose(idle, free)
    members = [Member(e.name, e.owner, -names.index(e.name), 1.0, book.games[e.name]) for e in idle]
    return choose(book.choices, members, book.settings, book.table_size, book.seed, book.meetings, free)


def uniform(book: Book, rng: random.Random, idle: list[LadderEntrant], free: int, k: int) -> list[tuple[str, ...]]:
    """Tables of idle entrants drawn uniformly at random (the baseline), under the ladder's one rule of timing:
    while games are in flight, no table of one ended table's entrants again (they wait to mix)."""
    order = rng.sample([e.name for e in idle], len(idle))
    tables = [tuple(order[i * k : i * k + k]) for i in range(min(free, len(order) // k))]
    return [t for t in tables if not (book.pending and book.repeats(t))]


def simulate(
    book: Book,
    present: list[LadderEntrant],
    pick: Callable[[list[LadderEntrant], int], list[tuple[str, ...]]],
    games: Play,
    slots: int,
    seed: int,
    after: Callable[[tuple[str, ...], tuple[int, ...]], bool],
) -> None:
    """A ladder with ``slots`` game slots on a simulated clock: whenever a slot is free, ``pick`` seats tables of
    the idle entrants (as LadderHooks does), each game lasts a seeded 0.5 to 1.5 time units, and each result
    reaches the book as its game ends; ``after(seats, places)`` is told each result and returns True to stop."""
    rng = random.Random(_derive(seed, "durations"))
    flight: list[tuple[float, int, tuple[str, ...], tuple[int, ...]]] = []
    now, n = 0.0, 0
    while True:
        free = slots - len(flight)
        idle = [e for e in present if not book.busy[e.name]]
        tables = pick(idle, free) if free > 0 else []
        book.record(tables)
        book.pending += len(tables)
        for t in tables:
            book.busy.update(t)
            deck = _derive(seed, "deck", n)
            heapq.heappush(flight, (now + rng.uniform(0.5, 1.5), n, t, games(t, deck, f"g{n}")))
            n += 1
        if not flight:
            return
        now, _, seats, places = heapq.heappop(flight)
        book.pending -= 1
        book.busy.subtract(seats)
        book.add_result(seats, places)
        if after(seats, places):
            return


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
    ``method``: "ladder", "uniform" or "true-order" (``true_order``). ``per_round``: game slots (0: enough for
    everyone, n // k); the uniform baseline seats tables of idle entrants drawn uniformly at random. ``games``:
    plays a table (``play``'s signature; default ``play``, the real policies)."""
    config = config_for(FIELDS[field][0](n), seed, k)
    names = [e.name for e in config.entrants]
    book, live, present = Book(config), Ratings(names), file_entrants(config)
    rng = random.Random(seed)
    state: dict[str, int] = {"played": 0, "settled_at": 0}  # settled_at 0: below 0.9 at the last result

    def pick(idle: list[LadderEntrant], free: int) -> list[tuple[str, ...]]:
        free = min(free, budget - book.scheduled)
        if free <= 0:
            return []
        if method == "ladder":
            tables = book.choose(idle, free, book.pending)
        elif method == "true-order":
            tables = true_order(book, idle, free, names)
        else:
            tables = uniform(book, rng, idle, free, k)
        book.scheduled += len(tables)
        return tables

    def after(seats: tuple[str, ...], places: tuple[int, ...]) -> bool:
        live.add(seats, places)
        state["played"] += 1
        below = tau(live, names) < 0.9
        state["settled_at"] = 0 if below else state["settled_at"] or state["played"]
        return state["played"] >= budget

    simulate(book, present, pick, games or play, per_round or n // k, seed, after)
    out = state["settled_at"] or budget
    print(f"{method} seed {seed}: {out}", file=sys.stderr, flush=True)  # a long run that fails keeps these
    return int(out)


def settle_new(seed: int, k: int) -> int:
    """The games the newcomer plays, after joining a settled 20-entrant ladder, until its sigma is under target."""
    config = config_for(SETTLE_FIELD, seed, k)
    assert config.ladder is not None
    target = config.ladder.sigma_target
    book, present = Book(config), file_entrants(config)
    slots = len(present) // k
    def field_settled(seats: tuple[str, ...], places: tuple[int, ...]) -> bool:
        return all(e.name in book.view and book.view[e.name].sigma < target for e in present) or book.seen >= 4000

    def pick(idle: list[LadderEntrant], free: int) -> list[tuple[str, ...]]:
        return book.choose(idle, free, book.pending)

    simulate(book, present, pick, play, slots, seed, field_settled)
    new = LadderEntrant(f"new-{NEWCOMER}", "new", "new", joined_round=book.choices)
    present.append(new)
    played = Counter[str]()

    def settled(seats: tuple[str, ...], places: tuple[int, ...]) -> bool:
        played.update(seats)
        return (new.name in book.view and book.view[new.name].sigma < target) or played[new.name] >= 300

    simulate(book, present, pick, play, slots, seed + 1, settled)
    return played[new.name]


def choose_round_ms(n: int = 1000, rounds: int = 20) -> tuple[float, float]:
    """The median (CPU, wall) milliseconds to choose a round for ``n`` entrants."""
    rng = random.Random(1)
    members = [Member(f"e{i}", f"o{i % 400}", rng.gauss(25, 5), rng.uniform(1, 8), rng.randrange(40)) for i in range(n)]
    meetings, cpu, wall = Meetings(LadderSettings().meeting_window), [], []
    for r in range(rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        tables = choose(r, members, LadderSettings(), 4, 1, meetings)
        cpu.append((time.process_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
        meetings.add_round(tables)
        # the ratings move a little between rounds, as they would
        members = [Member(m.name, m.owner, m.mu + rng.gauss(0, 0.3), max(0.8, m.sigma * 0.97), m.games + 1)
                   for m in members]  # fmt: skip
    return statistics.median(cpu), statistics.median(wall)


class _Timed:
    """A player whose games take a set time and place their seats in seat order: what the scheduling of a ladder
    does with its slots, without the cost of playing (the games' length is the point here, not their moves)."""

    def __init__(self, length: Callable[[GameSpec], float]) -> None:
        self.length = length
        self.busy = 0.0  # game-seconds played
        self.finished = 0
        self.dead: set[str] = set()  # entrants whose bots are gone: their games do not start (SeatsAbsent)

    @contextlib.asynccontextmanager
    async def player(self, records: Path) -> AsyncIterator:
        async def play_one(spec: GameSpec) -> GameResult:
            if absent := {e.name: "connection refused" for e in spec.entrants if e.name in self.dead}:
                raise SeatsAbsent(absent)
            start = time.perf_counter()
            await asyncio.sleep(self.length(spec))
            self.busy += time.perf_counter() - start
            self.finished += 1
            n = len(spec.entrants)
            return GameResult(spec.game_id, (0,) * n, tuple(range(1, n + 1)), EndReason.EMPTY_HAND,
                              [SeatStats() for _ in range(n)], 1, "", None)  # fmt: skip

        yield play_one


async def _ladder_for(config: TournamentConfig, timed: _Timed, seconds: float, concurrency: int, store) -> float:
    """Run the ladder for ``seconds`` of wall time (or to its budget); returns the wall time it ran."""
    task = asyncio.create_task(run_ladder(config, store, timed.player, concurrency=concurrency, progress=False))
    start = time.perf_counter()
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return time.perf_counter() - start


def idle_share(concurrency: int = 8, games: int = 400, entrants: int = 32, k: int = 2) -> float:
    """The empty share of ``concurrency`` game slots while a ladder of ``entrants`` at tables of ``k`` plays
    ``games`` games of 50 to 250 ms."""
    rng = random.Random(3)
    timed = _Timed(lambda spec: rng.uniform(0.05, 0.25))
    config = config_for([f"greedy+eps{e / (entrants - 1):.3f}" for e in range(entrants)], 1, k, {"games": games})
    with tempfile.TemporaryDirectory() as tmp, open_store(tmp) as store:
        wall = asyncio.run(_ladder_for(config, timed, 3600, concurrency, store))
    return max(0.0, 1 - timed.busy / (concurrency * wall))


SLOW = "e08-slow"


def slow_bot_throughput(seconds: float = 20.0, k: int = 2) -> dict[str, float]:
    """Games a second of 8 fast entrants (games of 50 to 100 ms) with a slow but legal bot beside them, over the
    same field without it, at tables of ``k``. The slow bot takes 1.5 s on every third of its decisions: with
    about 16 decisions a seat, a game with it lasts about 8 s. Its game holds k - 1 fast entrants while it lasts
    (it is always seated: it has played the fewest games), so the rest play (8 - (k - 1)) // k tables at once
    against 8 // k without it: the bound is 0.75 at tables of 2, 1 at 3 and 0.5 at 4."""

    def run(field: list[str]) -> float:
        rng = random.Random(5)
        timed = _Timed(lambda spec: 8.0 if any(e.name == SLOW for e in spec.entrants) else rng.uniform(0.05, 0.1))
        entrants = [{"name": n, "policy": "greedy"} for n in field]
        config = parse({"name": "slow", "seed": 1, "table_size": k, "public_deals": True, "ladder": {},
                        "entrants": entrants}, "<bench>")  # fmt: skip
        with tempfile.TemporaryDirectory() as tmp, open_store(tmp) as store:
            wall = asyncio.run(_ladder_for(config, timed, seconds, 8, store))
        return timed.finished / wall

    fast = [f"e{i:02d}-fast" for i in range(8)]
    without, with_slow = run(fast), run([*fast, SLOW])
    key = "slow_bot_throughput" + ("" if k == 2 else f"_k{k}")
    return {key: round(with_slow / without, 3), f"games_per_s_without_k{k}": round(without, 1),
            f"games_per_s_with_slow_k{k}": round(with_slow, 1)}  # fmt: skip


def dead_bot_seatings(seconds: float = 20.0, k: int = 2) -> dict[str, int]:
    """Tables a killed entrant is seated at after its death (in the 20 s that follow it): the game it was playing
    ends as the fault policy says, each later table seating it does not start (SeatsAbsent), and it stands aside
    until its next probe, 5 s on, then 10 s. Eight entrants, games of 50 to 100 ms, killed after 2 s."""
    rng = random.Random(7)
    timed = _Timed(lambda spec: rng.uniform(0.05, 0.1))
    field = [f"e{i:02d}-fast" for i in range(8)]
    config = parse({"name": "dead", "seed": 1, "table_size": k, "public_deals": True, "ladder": {},
                    "entrants": [{"name": n, "policy": "greedy"} for n in field]}, "<bench>")  # fmt: skip

    async def run(store) -> None:
        async def kill() -> None:
            await asyncio.sleep(2.0)
            timed.dead.add(field[0])
            killed_at.append(ladder_store.next_round(store, config.tournament_id))

        killer = asyncio.create_task(kill())
        await _ladder_for(config, timed, 2.0 + seconds, 8, store)
        await killer

    killed_at: list[int] = []
    with tempfile.TemporaryDirectory() as tmp, open_store(tmp) as store:
        asyncio.run(run(store))
        rows = ladder_store.rounds(store, config.tournament_id)
    after = [r for r in rows if r.round >= killed_at[0]]
    seated = sum(field[0] in t for r in after for t in r.tables or ())
    return {"dead_bot_seatings": seated, "tables_after_death": sum(len(r.tables or ()) for r in after)}


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
    p.add_argument("--tables", type=int, default=0, help="game slots (default 0: enough for everyone)")
    p.add_argument("--jobs", type=int, default=2, help="processes for the convergence runs (default 2)")
    args = p.parse_args()
    policies, entrants, budget = FIELDS[args.field]
    args.entrants, args.budget = args.entrants or entrants, args.budget or budget
    if args.entrants < 2 * args.table_size:
        p.error(f"--entrants must be at least two tables' worth ({2 * args.table_size})")
    configure("error")  # the ladder logs each choice, and each table a dead bot misses
    started = time.perf_counter()
    cpu, wall = choose_round_ms()
    out: dict[str, Any] = {"choose_round_ms_1000": round(cpu, 2), "choose_round_wall_ms_1000": round(wall, 2)}
    out["idle_share"] = round(idle_share(), 3)
    out["idle_share_k4"] = round(idle_share(k=4), 3)  # every entrant busy: an ended table waits to mix
    for k in (2, 3, 4):
        out.update(slow_bot_throughput(k=k))
    out.update(dead_bot_seatings())
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
