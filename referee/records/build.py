"""Building record messages from engine objects: the deck commitment, the header, one decision, the footer.

One builder per message: ``header``, ``decision_record`` (and ``decision_record_bytes``, the same bytes built from
cached pieces for the runner's hot path; tests/match/test_wire_bytes.py holds them equal) and ``footer``. The match
runner and ``record_selfplay`` both build their records with these.
"""

from __future__ import annotations

import hashlib
import os
import random
import secrets
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from referee.engine import (
    RULES_VERSION,
    Action,
    Event,
    Kind,
    Options,
    State,
    apply,
    deck_from_seed,
    digest,
    new_game,
    placings,
    scores,
)
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.proto.abluxxen.v1 import record_pb2 as rpb
from referee.wire import (
    KIND_PB,
    action_field,
    action_pb,
    bytes_field,
    end_reason_pb,
    event_field_cache,
    event_pb,
    int_field,
    kind_pb,
    options_pb,
    time_field,
)

from .recordfile import FORMAT_VERSION, RecordWriter

SALT_BYTES = 16
_UINT32_MAX = (1 << 32) - 1

# Every fault kind, the one table of them: its name (the match runner counts faults under it in SeatStats.faults;
# the text replay and ListGames' filter say it) and the viewer's words for it.
FAULTS = {
    rpb.FAULT_KIND_TIMEOUT: ("timeout", "timeout"),
    rpb.FAULT_KIND_INVALID: ("invalid", "invalid reply"),
    rpb.FAULT_KIND_MALFORMED: ("malformed", "malformed reply"),
    rpb.FAULT_KIND_RPC_ERROR: ("rpc_error", "RPC error"),
    rpb.FAULT_KIND_DISCONNECTED: ("disconnected", "disconnected"),
    rpb.FAULT_KIND_UNREACHABLE: ("unreachable", "unreachable"),
    rpb.FAULT_KIND_RETIRED: ("retired", "retired seat"),
    rpb.FAULT_KIND_REFEREE: ("referee", "referee fault"),
}
FAULT_NAME: dict[int, str] = {kind: name for kind, (name, _) in FAULTS.items()}
FAULT_PB = {name: kind for kind, (name, _) in FAULTS.items()}
FAULT_WORDS: dict[int, str] = {kind: words for kind, (_, words) in FAULTS.items()}
CHOOSER_PB = {"bot": rpb.CHOOSER_BOT, "fallback": rpb.CHOOSER_FALLBACK}


def commitment(salt: bytes, deck: Iterable[int]) -> bytes:
    """SHA-256(salt || deck), the deck one byte per card in deal order (bot.proto GameStart.deck_commitment)."""
    return hashlib.sha256(bytes(salt) + bytes(deck)).digest()


def withhold_deal(record: rpb.GameRecord) -> rpb.GameRecord:
    """``record`` as anyone but an organiser may read it while another game still has its deal to play: the
    commitment and the result, without the deck, seed, salt, final digest or decisions (whose events show the
    pile). ``deal_withheld`` says so, and ``verify_record`` answers that the deal is not yet revealed."""
    out = rpb.GameRecord(header=record.header, complete=record.complete, deal_withheld=True)
    out.header.ClearField("deck")
    out.header.ClearField("seed")
    if record.HasField("footer"):
        out.footer.CopyFrom(record.footer)
        out.footer.ClearField("salt")
        out.footer.ClearField("final_digest")
    return out


def new_salt() -> bytes:
    """A fresh secret salt for one game's commitment."""
    return secrets.token_bytes(SALT_BYTES)


def utc_now() -> str:
    """The time now, UTC, RFC 3339 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def header(
    game_id: str,
    deck: Sequence[int],
    players: Sequence[rpb.PlayerRecord | str],
    *,
    salt: bytes,
    options: Options | None = None,
    start_seat: int = 0,
    seed: int = 0,
    time_control: Any = None,
    max_strikes: int = 3,
    tournament_id: str = "",
    started_at: str | None = None,
) -> rpb.RecordHeader:
    """The header frame. ``players`` are PlayerRecords by seat, or just names (a built-in policy each).

    ``time_control`` is anything with ``decision_ms``, ``bank_ms`` and ``grace_ms`` (match.spec.TimeControl or
    the message); the commitment is computed here from ``salt``, which stays secret until the footer.
    """
    seats = []
    for i, p in enumerate(players):
        if isinstance(p, str):
            p = rpb.PlayerRecord(name=p, kind=rpb.SEAT_KIND_BUILTIN, transport="builtin")
        else:
            copy = rpb.PlayerRecord()
            copy.CopyFrom(p)
            p = copy
        p.seat = i
        seats.append(p)
    h = rpb.RecordHeader(
        format_version=FORMAT_VERSION,
        rules_version=RULES_VERSION,
        game_id=game_id,
        tournament_id=tournament_id,
        options=options_pb(options or Options()),
        players=seats,
        seed=seed,
        deck=list(deck),
        start_seat=start_seat,
        commitment=commitment(salt, deck),
        max_strikes=max_strikes,
        started_at=started_at if started_at is not None else utc_now(),
    )
    if time_control is not None:
        h.time_control.CopyFrom(
            pb.TimeControl(
                decision_ms=time_control.decision_ms, bank_ms=time_control.bank_ms, grace_ms=time_control.grace_ms
            )
        )
    return h


def _uint32(x: int) -> int:
    return min(max(int(x), 0), _UINT32_MAX)


def decision_record(
    state: State,
    action: Action,
    events: Iterable[Event],
    *,
    seq: int,
    chosen_by: str | rpb.Chooser | None = None,
    fault: str | rpb.FaultKind | None = None,
    fault_detail: str = "",
    bot_us: int = 0,
    transport_us: int = 0,
    bank_left_ms: int = 0,
    retired: bool = False,
) -> rpb.DecisionRecord:
    """The record of ``action`` taken in ``state`` (the state it was asked in), with the full ``events`` it made.

    The seat, kind and legal index come from ``state``. ``fault`` is a name from FAULT_PB ("timeout", ...) or a
    FaultKind; ``chosen_by`` is "bot" or "fallback" (or a Chooser), by default "fallback" when there is a fault
    and "bot" otherwise. ``seq`` must increase from one decision to the next. Times above 2**32-1 are clamped.
    The rules verify checks (docs/records.md): a fault goes with the fallback and the fallback with a fault;
    ``retired`` is set on the one decision that retired the seat, and every later decision of that seat is the
    fallback's with fault "retired".
    """
    try:
        index = state.legal.index(action)
    except ValueError:
        raise ValueError(f"action {action!r} is not legal for seat {state.seat} in this state") from None
    fault_pb = FAULT_PB[fault] if isinstance(fault, str) and fault else (fault or rpb.FAULT_KIND_UNSPECIFIED)
    if chosen_by is None:
        chooser = rpb.CHOOSER_FALLBACK if fault_pb else rpb.CHOOSER_BOT
    else:
        chooser = CHOOSER_PB[chosen_by] if isinstance(chosen_by, str) else chosen_by
    if (chooser == rpb.CHOOSER_FALLBACK) != bool(fault_pb):
        raise ValueError("the fallback chooses exactly when there is a fault: pass both or neither")
    return rpb.DecisionRecord(
        seq=seq,
        seat=state.seat,
        kind=kind_pb(state),
        index=index,
        action=action_pb(action),
        chosen_by=chooser,
        fault=fault_pb,
        fault_detail=fault_detail,
        bot_us=_uint32(bot_us),
        transport_us=_uint32(transport_us),
        bank_left_ms=_uint32(bank_left_ms),
        events=[event_pb(e) for e in events],
        retired=retired,
    )


def decision_record_bytes(
    seq: int,
    seat: int,
    kind: Kind,
    index: int,
    action: Action,
    chosen_by: int,
    fault: int,
    fault_detail: str,
    bot_us: int,
    transport_us: int,
    bank_left_ms: int,
    events: Iterable[Event],
    retired: bool,
) -> bytes:
    """A serialized DecisionRecord with these fields, as the match runner writes one per decision: exactly
    ``rpb.DecisionRecord(...).SerializeToString()`` for the same fields, built from the cached pieces of
    referee.wire (a decision is recorded on every move, and a message costs several times as much)."""
    return b"".join(
        (
            int_field(1, seq),
            _SEATS[seat],
            _KINDS[kind],
            int_field(4, index),
            action_field(5, action),
            int_field(6, chosen_by),
            int_field(7, fault),
            bytes_field(8, fault_detail.encode()) if fault_detail else b"",
            int_field(9, _uint32(bot_us)),
            int_field(10, _uint32(transport_us)) if transport_us else b"",
            time_field(11, bank_left_ms),
            *[_record_event(e) for e in events],
            int_field(13, retired),
        )
    )


_SEATS = [int_field(2, seat) for seat in range(8)]
_KINDS = {kind: int_field(3, value) for kind, value in KIND_PB.items()}
_record_event = event_field_cache(12)  # e as DecisionRecord.events


def final_places(state: State, retired: Iterable[int] = ()) -> tuple[int, ...]:
    """R15 placings of a finished state, ``retired`` seats last."""
    sizes = [state.hand_size(i) for i in range(state.players)]
    return placings(scores(state), sizes, tuple(retired))


def footer(
    state: State, *, salt: bytes, retired: Iterable[int] = (), finished_at: str | None = None
) -> rpb.RecordFooter:
    """The footer for a finished game: end reason, scores, places, digest, and the salt revealed."""
    if not state.over:
        raise ValueError("the game is not over: a footer needs the final state")
    retired = sorted(set(retired))
    return rpb.RecordFooter(
        reason=end_reason_pb(state),
        scores=scores(state),
        places=final_places(state, retired),
        retired=retired,
        final_digest=digest(state),
        salt=salt,
        finished_at=finished_at if finished_at is not None else utc_now(),
    )


Chooser = Callable[[State, random.Random], Action]


def _random_choice(state: State, rng: random.Random) -> Action:
    return rng.choice(state.legal)


def record_selfplay(
    seed: int,
    players: int | Sequence[str],
    options: Options | None = None,
    *,
    choose: Chooser = _random_choice,
    start_seat: int = 0,
    game_id: str | None = None,
    salt: bytes | None = None,
    path: str | os.PathLike[str] | None = None,
) -> rpb.GameRecord:
    """Play one game in-process and return its complete record (also written to ``path`` if given).

    The deck is ``deck_from_seed(seed)``; ``choose(state, rng)`` picks each action (default: a random legal one,
    with ``rng`` seeded by ``seed``), so the same arguments give the same game. ``players`` is a count or names.
    """
    names = [f"random-{i}" for i in range(players)] if isinstance(players, int) else list(players)
    deck = deck_from_seed(seed)
    salt = new_salt() if salt is None else salt
    rng = random.Random(seed)
    state = new_game(deck, len(names), options, start_seat)
    h = header(game_id or f"selfplay-{seed}", deck, names, salt=salt, options=options, start_seat=start_seat, seed=seed)
    with RecordWriter(path, h) as writer:
        seq = 0
        while not state.over:
            action = choose(state, rng)
            after, events = apply(state, action)
            seq += 1
            writer.decision(decision_record(state, action, events, seq=seq))
            state = after
        return writer.finish(footer(state, salt=salt))
