"""The referee's Prometheus metrics (docs/operations.md lists and explains each): defined here, once, on
prometheus_client's default registry, and counted where things happen.

Games, decisions, their latency and faults are counted by the coordinator when a finished game commits
(``game_finished``), from the result every backend returns (inline, worker processes, Ray): nothing is counted on
a decision's own path, and a game played on another machine counts where it is stored. Labels take only values
from fixed sets (transports, fault kinds, end reasons, gRPC methods and codes, health statuses): never a name a
caller chose, so the number of series is bounded and nothing private is exposed.

Other parts set the rest: the service's gRPC interceptor (``GRPC_CALLS``), the web site (``SITE_STREAMS``), the
rating fit (``RATING_FIT_SECONDS``), bot health (``ENTRANTS``, by ``status``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from prometheus_client import Counter, Gauge, Histogram

SeatMeasures = tuple[str, Iterable[int], Mapping[str, int]]  # transport, the bot's µs per decision, faults by kind

GAMES_FINISHED = Counter("abluxx_games_finished", "Games played to their end and stored, by how they ended",
                         ["end_reason"])  # fmt: skip
GAMES_IN_FLIGHT = Gauge("abluxx_games_in_flight", "Games begun and not yet stored or abandoned")
DECISIONS = Counter("abluxx_decisions", "Decisions of the stored games (every seat's, the fallback's included)")
DECISION_SECONDS = Histogram(
    "abluxx_decision_seconds",
    "A bot's time per decision it answered, as the referee measured it, by transport (stream, unary, builtin)",
    ["transport"],
    buckets=(0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
FAULTS = Counter("abluxx_faults", "Bot faults in the stored games, by kind (timeout, invalid, ...)", ["kind"])
REFEREE_FAULTS = Counter("abluxx_referee_faults", "Decisions of the stored games lost to the referee's own faults")
ENTRANTS = Gauge("abluxx_entrants", "Entrants by health status (up, down, suspended), as bot health sets them",
                 ["status"])  # fmt: skip
SITE_STREAMS = Gauge("abluxx_site_streams_open", "The web site's live-update streams open now")
GRPC_CALLS = Counter("abluxx_grpc_calls", "gRPC calls the service answered, by method and status code",
                     ["method", "code"])  # fmt: skip
RATING_FIT_SECONDS = Histogram(
    "abluxx_rating_fit_seconds",
    "Time to fit the ratings over a tournament's games (each standings build that refits them)",
    buckets=(0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 60.0),
)


def game_finished(end_reason: str, decisions: int, referee_faults: int, seats: Iterable[SeatMeasures]) -> None:
    """Count a stored game: its end, its decisions, each seat's decision times and faults."""
    GAMES_FINISHED.labels(end_reason).inc()
    DECISIONS.inc(decisions)
    if referee_faults:
        REFEREE_FAULTS.inc(referee_faults)
    for transport, decision_us, faults in seats:
        histogram = DECISION_SECONDS.labels(transport or "unknown")
        for us in decision_us:
            histogram.observe(us / 1e6)
        for kind, n in faults.items():
            FAULTS.labels(kind).inc(n)
