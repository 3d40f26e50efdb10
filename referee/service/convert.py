"""The service's objects as referee.proto messages, and a config message to and from the TOML file's mapping."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from referee.errors import BadInput
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.store import GameRow
from referee.store.health import HealthRow
from referee.tournament.config import said
from referee.tournament.standings import Standings

from .registry import ACTIVE, CANCELLED, CREATED, FINISHED, PAUSED, RETIRED, RUNNING, SUPERSEDED, BotVersion

TOURNAMENT_STATE = {
    CREATED: ref_pb.TOURNAMENT_STATE_CREATED,
    RUNNING: ref_pb.TOURNAMENT_STATE_RUNNING,
    FINISHED: ref_pb.TOURNAMENT_STATE_FINISHED,
    CANCELLED: ref_pb.TOURNAMENT_STATE_CANCELLED,
    PAUSED: ref_pb.TOURNAMENT_STATE_PAUSED,
}
ENTRANT_STATE = {
    ACTIVE: ref_pb.ENTRANT_STATE_ACTIVE,
    SUPERSEDED: ref_pb.ENTRANT_STATE_SUPERSEDED,
    RETIRED: ref_pb.ENTRANT_STATE_RETIRED,
}


def rfc3339(t: float | None) -> str:
    return "" if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def entrant_pb(
    b: BotVersion, rating: tuple[float, float, int] | None, private: bool, health: HealthRow | None = None
) -> ref_pb.Entrant:
    """The bot version as a message, with its health; its private details (address, validation game) only when
    ``private`` (for its owner and organisers: visibility.private_to)."""
    from referee.rating import MU, SIGMA

    mu, sigma, games = rating or (MU, SIGMA, 0)
    return ref_pb.Entrant(
        name=b.name,
        version=b.version,
        entrant_id=b.entrant_id,
        address=b.address if private else "",
        owner=b.owner,
        bot_version=b.bot_version,
        bot_author=b.bot_author,
        state=ENTRANT_STATE[b.state],
        submitted_at=rfc3339(b.submitted_at),
        validation_game_id=b.validation_game if private else "",
        mu=mu,
        sigma=sigma,
        games=games,
        health=health_pb(health),
    )


def health_pb(row: HealthRow | None) -> ref_pb.EntrantHealth:
    """An entrant's health as a message; no row: up, and never down."""
    if row is None:
        return ref_pb.EntrantHealth(status="up")
    return ref_pb.EntrantHealth(status=row.status, since=rfc3339(row.since) if row.since else "", missed=row.missed,
                                reason=row.reason, probes=row.probes)  # fmt: skip


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
                separated_from_next=r.separated_from_next,
                state=r.state,
                health=r.health,
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


# A config message's fields have the TOML file's names (proto/abluxxen/v1/referee.proto), so one generic walk each
# way carries a file to the server and back to the mapping tournament/config.parse checks, the one check.
M = TypeVar("M", bound=Message)
_SCALARS: dict[int, tuple[type, str]] = {
    FieldDescriptor.CPPTYPE_INT64: (int, "a whole number"),
    FieldDescriptor.CPPTYPE_UINT32: (int, "a whole number"),
    FieldDescriptor.CPPTYPE_BOOL: (bool, "true or false"),
    FieldDescriptor.CPPTYPE_STRING: (str, "a string"),
}


def message_from(data: object, message: M, source: str, key: str = "", hints: Mapping[str, str] = {}) -> M:
    """``message`` filled from a TOML table of ``source`` whose keys are its fields' names. A key it has no field
    for (with the reason in ``hints``, if given) or a value of another type is BadInput naming the key; what the
    values may be is for the receiver to check."""
    if not isinstance(data, dict):
        raise BadInput(f"{source}: {key}: must be a table")
    fields = message.DESCRIPTOR.fields_by_name
    for name, value in data.items():
        at = f"{key}.{name}" if key else name
        field = fields.get(name)
        if field is None:
            known = ", ".join(sorted(fields))
            raise BadInput(f"{source}: {at}: {hints.get(name) or f'unknown key (known: {known})'}")
        if field.containing_oneof is not None and message.WhichOneof(field.containing_oneof.name) is not None:
            given = ", ".join(f.name for f in field.containing_oneof.fields)
            raise BadInput(f"{source}: {key}: give only one of {given}")
        if field.message_type is None:
            kind, words = _SCALARS[field.cpp_type]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise BadInput(f"{source}: {at}: must be {words}, not {said(value)}")
            try:
                setattr(message, name, value)
            except ValueError:  # a number beyond the field's range
                raise BadInput(f"{source}: {at}: {value} is out of range") from None
        elif field.is_repeated:
            if not isinstance(value, list):
                raise BadInput(f"{source}: {at}: must be a list of tables")
            for i, item in enumerate(value):
                message_from(item, getattr(message, name).add(), source, f"{at}[{i}]", hints)
        else:
            getattr(message, name).SetInParent()
            message_from(value, getattr(message, name), source, at, hints)
    return message


def fields_of(message: Message) -> dict[str, Any]:
    """The fields ``message`` sets, by name, nested messages as tables: the TOML file's mapping it came from."""
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        if field.message_type is None:
            out[field.name] = value
        elif field.is_repeated:
            out[field.name] = [fields_of(m) for m in value]
        else:
            out[field.name] = fields_of(value)
    return out
