"""What a tournament config would play, and about how long it would take, without playing it.

The game count is ``schedule.size`` (the formula the config check and docs/tournaments.md use). The length of a
game is measured by playing a few deals in-process with the example bots, and the referee's own cost per decision
by playing a few games over gRPC, records written, against an example bot served in this process: that is the
floor however fast the bots are, and it does not shrink with more games at once (one event loop does the work).
What it says nothing about is your bots' speed, so the duration is given for bots that answer at once and for bots
that use all their free time; command bots' start-up is not counted.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from abluxx_bot import BotSession
from abluxx_bot.examples import REGISTRY
from abluxx_bot.local import play_local

from referee.event_loop import run as run_games
from referee.match import ChannelPool, EntrantRef, GameSpec, play_game

from .config import TournamentConfig
from .counts import seat_orders, size, table_count

SAMPLE_DEALS = 24  # example-bot games played to measure a game's length
MEASURE_GAMES = 4  # games played over gRPC (at most this many at once) to measure the referee's cost per decision


@dataclass(frozen=True)
class Plan:
    config: TournamentConfig
    tables: int
    orders: int  # games per deal at one table
    games: int
    decisions_per_game: float  # the example bots' mean, at this table size and these options
    concurrency: int  # games at once, at most the number of games
    referee_ms: float = 0.0  # the referee's wall time per decision over gRPC, measured on this machine now

    def seconds(self, ms_per_decision: float) -> float:
        """The wall time if every bot takes ``ms_per_decision`` to answer, with ``concurrency`` games at once:
        the bots' waits overlap across games, the referee's own work per decision does not."""
        decisions = self.games * self.decisions_per_game
        waits = decisions * (ms_per_decision + self.referee_ms) / max(1, self.concurrency)
        return max(waits, decisions * self.referee_ms) / 1000

    def text(self) -> str:
        c = self.config
        tc = c.time_control
        return "\n".join([
            f"tournament {c.tournament_id}: {len(c.entrants)} entrants, {c.table_size} to a table",
            f"games: {self.tables} tables x {c.deals} deals x {self.orders} game{'s' if self.orders > 1 else ''} "
            f"per deal ({c.seat_orders}) "
            f"= {self.games}",
            f"each entrant plays {self.games * c.table_size // len(c.entrants)} games",
            f"a game: about {self.decisions_per_game:.0f} decisions (the example bots' mean at {c.table_size} "
            "players)",
            f"the referee's own cost: {self.referee_ms:.2f} ms a decision over gRPC (measured now, on this machine)",
            f"time at {self.concurrency} games at once: about {duration(self.seconds(0))} if the bots answer at once; "
            f"about {duration(self.seconds(tc.decision_ms))} if every decision takes its whole "
            f"{tc.decision_ms} ms (the bank of {tc.bank_ms} ms a game can add more; starting command bots is extra)",
        ])  # fmt: skip


def plan(config: TournamentConfig, concurrency: int | None = None) -> Plan:
    n, k = len(config.entrants), config.table_size
    names = ["random", "greedy", "counter"]  # the playing examples: hoard, the weak floor, drags games out
    lengths = []
    for deal in range(SAMPLE_DEALS):
        bots = [BotSession(REGISTRY[names[(deal + seat) % len(names)]](deal)) for seat in range(k)]
        lengths.append(play_local(bots, seed=deal, options=config.options).decisions)
    owners = [e.owner or e.name for e in config.entrants]
    games = size(n, k, config.tables, config.deals, config.seat_orders, owners)
    at_once = min(concurrency or config.concurrency, games)
    return Plan(
        config=config,
        tables=table_count(n, k, config.tables, owners if config.seat_orders == "across" else None),
        orders=len(seat_orders(k, config.seat_orders)),
        games=games,
        decisions_per_game=statistics.fmean(lengths),
        concurrency=at_once,
        referee_ms=run_games(referee_ms_per_decision(config, min(at_once, MEASURE_GAMES))),  # as a run plays
    )


async def referee_ms_per_decision(config: TournamentConfig, at_once: int) -> float:
    """Wall milliseconds per decision of ``at_once`` games played at once through the real match runner over
    gRPC, records written, every seat the example ``random`` bot served in this process."""
    from abluxx_bot.server import serve_async

    stop, listening = asyncio.Event(), asyncio.get_running_loop().create_future()
    def ready(host: str, port: int) -> None:
        listening.set_result(f"{host}:{port}")

    server = asyncio.create_task(serve_async(lambda: REGISTRY["random"](0), 0, stop=stop, ready=ready))
    try:
        address = await listening
        with tempfile.TemporaryDirectory() as folder:
            async with ChannelPool() as pool:
                seats = tuple(EntrantRef(f"seat{i}", address) for i in range(config.table_size))
                specs = [GameSpec(f"plan-{g}", g, seats, options=config.options, time_control=config.time_control)
                         for g in range(max(1, at_once))]  # fmt: skip
                t0 = time.perf_counter()
                results = await asyncio.gather(
                    *(play_game(s, pool=pool, record_path=Path(folder) / f"{s.game_id}.abluxx") for s in specs)
                )
                elapsed = time.perf_counter() - t0
    finally:
        stop.set()
        await server
    return elapsed * 1000 / max(1, sum(r.decisions for r in results))


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
