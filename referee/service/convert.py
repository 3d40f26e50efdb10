"""The service's objects as referee.proto messages."""

from __future__ import annotations

from datetime import UTC, datetime

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.store import GameRow
from referee.tournament.standings import Standings

from .registry import ACTIVE, CANCELLED, CREATED, FINISHED, RETIRED, RUNNING, SUPERSEDED, BotVersion

TOURNAMENT_STATE = {
    CREATED: ref_pb.TOURNAMENT_STATE_CREATED,
    RUNNING: ref_pb.TOURNAMENT_STATE_RUNNING,
    FINISHED: ref_pb.TOURNAMENT_STATE_FINISHED,
    CANCELLED: ref_pb.TOURNAMENT_STATE_CANCELLED,
}
ENTRANT_STATE = {
    ACTIVE: ref_pb.ENTRANT_STATE_ACTIVE,
    SUPERSEDED: ref_pb.ENTRANT_STATE_SUPERSEDED,
    RETIRED: ref_pb.ENTRANT_STATE_RETIRED,
}


def rfc3339(t: float | None) -> str:
    return "" if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def entrant_pb(b: BotVersion, rating: tuple[float, float, int] | None, address: bool) -> ref_pb.Entrant:
    """The bot version as a message; its address only when ``address`` (for its owner and organisers)."""
    from referee.rating import MU, SIGMA

    mu, sigma, games = rating or (MU, SIGMA, 0)
    return ref_pb.Entrant(
        name=b.name,
        version=b.version,
        entrant_id=b.entrant_id,
        address=b.address if address else "",
        owner=b.owner,
        bot_version=b.bot_version,
        bot_author=b.bot_author,
        state=ENTRANT_STATE[b.state],
        submitted_at=rfc3339(b.submitted_at),
        validation_game_id=b.validation_game,
        mu=mu,
        sigma=sigma,
        games=games,
    )


def standings_pb(s: Standings) -> ref_pb.Standings:
    return ref_pb.Standings(
        tournament_id=s.tournament_id,
        games=s.games,
        scheduled=s.scheduled,
        rows=[
            ref_pb.Standing(
                rank=r.rank,
                entrant=r.entrant,
                mu=r.mu,
                sigma=r.sigma,
                conservative=r.conservative,
                games=r.games,
                wins=r.wins,
                avg_score=r.avg_score,
                dup_avg_score=r.dup_avg_score,
                faults=r.faults,
                retired=r.retired,
                median_decision_ms=-1 if r.median_decision_ms is None else r.median_decision_ms,
            )
            for r in s.rows
        ],
    )


def game_summary(tid: str, g: GameRow) -> ref_pb.GameSummary:
    return ref_pb.GameSummary(
        game_id=g.game_id,
        tournament_id=tid,
        slot=g.slot,
        table=g.table,
        deal=g.deal,
        seat_order=g.order,
        seats=[
            ref_pb.SeatResult(entrant=s.entrant, score=s.score, place=s.place, retired=s.retired, faults=s.faults)
            for s in g.seats
        ],
        end_reason=g.end_reason,
        decisions=g.decisions,
        finished_at=rfc3339(g.finished_at),
    )
