"""What a tournament config would play, and about how long it would take, without playing it.

The game count is ``schedule.size`` (the formula the config check and docs/tournaments.md use); the length of a
game is measured by playing a few deals in-process with the example bots, which says nothing about your bots'
speed, so the duration is given for fast bots and for bots that use all their free time.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from abluxx_bot import BotSession
from abluxx_bot.examples import REGISTRY
from abluxx_bot.local import play_local

from .config import TournamentConfig
from .schedule import seat_orders, size, table_count

SAMPLE_DEALS = 24  # example-bot games played to measure a game's length
FAST_MS = 1.0  # "fast bots": the referee and a quick local bot take about this per decision (docs/match.md)


@dataclass(frozen=True)
class Plan:
    config: TournamentConfig
    tables: int
    orders: int  # games per deal at one table
    games: int
    decisions_per_game: float  # the example bots' mean, at this table size and these options
    concurrency: int  # games at once, at most the number of games

    def seconds(self, ms_per_decision: float) -> float:
        """The wall time if every decision takes ``ms_per_decision``, with ``concurrency`` games at once."""
        return self.games * self.decisions_per_game * ms_per_decision / 1000 / max(1, self.concurrency)

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
            f"time at {self.concurrency} games at once: about {duration(self.seconds(FAST_MS))} if the bots answer "
            f"in {FAST_MS:g} ms; about {duration(self.seconds(tc.decision_ms))} if every decision takes its whole "
            f"{tc.decision_ms} ms (the bank of {tc.bank_ms} ms a game can add more)",
        ])  # fmt: skip


def plan(config: TournamentConfig, concurrency: int | None = None) -> Plan:
    n, k = len(config.entrants), config.table_size
    names = list(REGISTRY)
    lengths = []
    for deal in range(SAMPLE_DEALS):
        bots = [BotSession(REGISTRY[names[(deal + seat) % len(names)]](deal)) for seat in range(k)]
        lengths.append(play_local(bots, seed=deal, options=config.options).decisions)
    owners = [e.owner or e.name for e in config.entrants]
    games = size(n, k, config.tables, config.deals, config.seat_orders, owners)
    return Plan(
        config=config,
        tables=table_count(n, k, config.tables, owners if config.seat_orders == "across" else None),
        orders=len(seat_orders(k, config.seat_orders)),
        games=games,
        decisions_per_game=statistics.fmean(lengths),
        concurrency=min(concurrency or config.concurrency, games),
    )


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
