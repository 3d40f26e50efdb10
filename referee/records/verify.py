"""Re-running a record with the engine: the one replay that ``verify_record`` and the replay viewer share.

Nothing here contacts a bot: the record's deck and actions are enough to re-create every state. Decisions are
numbered from 1.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from google.protobuf import text_format

from referee.engine import (
    RULES_VERSION,
    Action,
    Event,
    IllegalAction,
    State,
    apply,
    check_deck,
    digest,
    new_game,
    scores,
)
from referee.engine.words import say_action, say_event
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.proto.abluxxen.v1 import record_pb2 as rpb
from referee.wire import (
    WireError,
    action_from_pb,
    end_reason_pb,
    event_from_pb,
    event_pb,
    kind_pb,
    options_from_pb,
)

from .build import commitment, final_places
from .recordfile import FORMAT_VERSION


class VerifyError(ValueError):
    """A record that does not re-run to itself. ``decision`` (1-based) and ``seat`` say where, when they apply."""

    def __init__(self, what: str, decision: int | None = None, seat: int | None = None) -> None:
        self.what = what
        self.decision = decision
        self.seat = seat
        where = ""
        if decision is not None:
            where = f"decision {decision}" + (f" (seat {seat})" if seat is not None else "") + ": "
        super().__init__(where + what)


class DealNotRevealed(VerifyError):
    """A record served with its deal withheld (``withhold_deal``): not a mismatch, only too early to check."""

    def __init__(self) -> None:
        super().__init__(
            "deal not yet revealed: the record was served before every game on its deal was over, so it holds the "
            "commitment and the result but not the deck, the salt or the decisions; fetch it again later"
        )


@dataclass(frozen=True)
class Step:
    """One re-run decision: the state it was asked in, the action, and the state and events it led to."""

    number: int  # 1-based
    decision: rpb.DecisionRecord
    before: State
    action: Action
    after: State
    events: list[Event]
    retired: frozenset[int]  # seats retired so far, this decision included


def start_state(h: rpb.RecordHeader) -> State:
    """The dealt state the header describes, or VerifyError naming what is wrong with the header."""
    if h.format_version != FORMAT_VERSION:
        raise VerifyError(f"the header says format version {h.format_version}; this referee reads {FORMAT_VERSION}")
    if h.rules_version != RULES_VERSION:
        raise VerifyError(f"the game was played under rules {h.rules_version!r}; this engine is {RULES_VERSION!r}")
    n = len(h.players)
    if not 2 <= n <= 5:
        raise VerifyError(f"the header lists {n} players; a game has 2 to 5")
    for i, p in enumerate(h.players):
        if p.seat != i:
            raise VerifyError(f"the header lists player {p.name!r} as seat {p.seat} in place {i}")
    try:
        deck = check_deck(list(h.deck))
    except ValueError as e:
        raise VerifyError(f"the deck is not a valid deck: {e}") from None
    if not 0 <= h.start_seat < n:
        raise VerifyError(f"the start seat {h.start_seat} is not a seat of this {n}-player game")
    return new_game(deck, n, options_from_pb(h.options), h.start_seat)


class _Enum(Protocol):
    """A protobuf enum type (its EnumTypeWrapper)."""

    def Name(self, number: int) -> str: ...
    def values(self) -> list[int]: ...


def _name(enum: _Enum, value: int) -> str:
    """An enum value's name, or the bare number for a value the enum does not define."""
    return enum.Name(value) if value in enum.values() else str(value)


def _say_pb_event(m: pb.Event) -> str:
    try:
        return repr(say_event(event_from_pb(m)))
    except WireError:
        return f"the message {{{text_format.MessageToString(m, as_one_line=True)}}}"


def _check_events(recorded: Sequence[pb.Event], produced: list[Event], number: int, seat: int) -> None:
    for i in range(max(len(recorded), len(produced))):
        rec = recorded[i] if i < len(recorded) else None
        eng = event_pb(produced[i]) if i < len(produced) else None
        if rec != eng:
            said_rec = "no event" if rec is None else _say_pb_event(rec)
            said_eng = "no event" if eng is None else repr(say_event(produced[i]))
            raise VerifyError(
                f"event {i + 1} differs: the record has {said_rec}, the engine produced {said_eng}", number, seat
            )


def replay(record: rpb.GameRecord) -> Iterator[Step]:
    """Re-run every decision of ``record`` with the engine, checking each one as it goes.

    Raises VerifyError at the first decision that does not match: a wrong seat or kind, an illegal action, an
    index that does not point at the action, different events, a seq that does not increase, or fault and
    fallback flags that contradict each other.
    """
    state = start_state(record.header)
    retired: set[int] = set()
    last_seq = -1
    for number, d in enumerate(record.decisions, 1):
        seat = d.seat

        def fail(what: str, number: int = number, seat: int = seat) -> VerifyError:
            return VerifyError(what, number, seat)

        if state.end_reason is not None:  # the game is over
            raise fail(f"the game was already over ({state.end_reason.value}), yet the record goes on")
        if seat != state.seat:
            raise fail(f"the record says seat {seat} decides; the engine asks seat {state.seat}")
        if d.kind != kind_pb(state):
            want = _name(pb.DecisionKind, kind_pb(state))
            raise fail(f"the record says kind {_name(pb.DecisionKind, d.kind)}; the engine asks {want}")
        if d.seq <= last_seq:
            raise fail(f"seq {d.seq} does not increase (the decision before had seq {last_seq})")
        last_seq = d.seq
        try:
            action = action_from_pb(d.action)
        except WireError as e:
            raise fail(f"the action names no action: {e}") from None
        try:
            after, events = apply(state, action)
        except IllegalAction as e:
            raise fail(str(e)) from None
        if d.index >= len(state.legal) or state.legal[d.index] != action:
            at = repr(say_action(state.legal[d.index])) if d.index < len(state.legal) else "nothing"
            raise fail(
                f"index {d.index} points at {at}, not at the action {say_action(action)!r} "
                f"(index {state.legal.index(action)} of {len(state.legal)})"
            )
        _check_events(d.events, events, number, seat)
        _check_chooser(d, retired, fail)
        if d.retired:
            retired.add(seat)
        yield Step(number, d, state, action, after, events, frozenset(retired))
        state = after


def _check_chooser(d: rpb.DecisionRecord, retired: set[int], fail: Callable[[str], VerifyError]) -> None:
    if d.chosen_by not in (rpb.CHOOSER_BOT, rpb.CHOOSER_FALLBACK):
        raise fail(f"chosen_by is {d.chosen_by}; it must be CHOOSER_BOT or CHOOSER_FALLBACK")
    fallback = d.chosen_by == rpb.CHOOSER_FALLBACK
    if fallback and not d.fault:
        raise fail("the fallback chose but no fault is recorded")
    if d.fault and not fallback:
        raise fail(f"a fault ({_name(rpb.FaultKind, d.fault)}) is recorded but the bot's choice was used")
    if d.seat in retired:
        if d.fault != rpb.FAULT_KIND_RETIRED:
            raise fail("the seat had retired, but this decision is not marked FAULT_KIND_RETIRED")
        if d.retired:
            raise fail("the seat retires a second time")
    elif d.fault == rpb.FAULT_KIND_RETIRED:
        raise fail("marked FAULT_KIND_RETIRED, but the seat had not retired")


def check_footer(record: rpb.GameRecord, state: State, retired: frozenset[int]) -> None:
    """Compare a complete record's footer with the engine's final ``state``. Raises VerifyError."""
    f = record.footer
    n = len(record.decisions)
    if not state.over:
        raise VerifyError(
            f"the record ends after {n} decisions, but the engine's game goes on (seat {state.seat} to decide)"
        )
    if not f.salt:
        raise VerifyError("the footer reveals no salt, so the deck commitment cannot be checked")
    if not hmac.compare_digest(commitment(f.salt, record.header.deck), record.header.commitment):
        raise VerifyError(
            "the deck commitment does not match: SHA-256(salt || deck) is "
            f"{commitment(f.salt, record.header.deck).hex()}, the header committed to "
            f"{record.header.commitment.hex() or '(nothing)'}"
        )
    if f.reason != end_reason_pb(state):
        raise VerifyError(
            f"the footer says the game ended by {_name(pb.EndReason, f.reason)}; "
            f"the engine says {_name(pb.EndReason, end_reason_pb(state))}"
        )
    final = scores(state)
    if tuple(f.scores) != final:
        raise VerifyError(f"the footer's scores {list(f.scores)} differ from the engine's {list(final)}")
    # A seat that failed before its first decision may retire without a decision saying so.
    decided = {d.seat for d in record.decisions}
    listed = set(f.retired)
    if (
        len(listed) != len(f.retired)
        or not retired <= listed
        or any(s in decided or not 0 <= s < state.players for s in listed - retired)
    ):
        raise VerifyError(f"the footer lists retired seats {list(f.retired)}; the decisions retired {sorted(retired)}")
    places = final_places(state, listed)
    if tuple(f.places) != places:
        raise VerifyError(f"the footer's places {list(f.places)} differ from the engine's {list(places)}")
    d = digest(state)
    if f.final_digest != d:
        raise VerifyError(f"the footer's digest {f.final_digest or '(none)'} differs from the engine's {d}")


def verify_record(record: rpb.GameRecord) -> None:
    """Re-simulate ``record`` with the engine alone; raise VerifyError naming the first mismatch.

    A record verifies only when it is complete, so an incomplete one fails after its decisions are checked.
    """
    if record.deal_withheld or (not record.header.deck and record.header.commitment):
        raise DealNotRevealed()
    has_footer = record.HasField("footer")
    if has_footer != record.complete:
        raise VerifyError(f"the record says complete={record.complete} but {'has' if has_footer else 'has no'} footer")
    state = start_state(record.header)
    retired: frozenset[int] = frozenset()
    for step in replay(record):
        state, retired = step.after, step.retired
    if not record.complete:
        raise VerifyError(
            f"incomplete record: {len(record.decisions)} decisions and no footer (the game stopped before its end)"
        )
    check_footer(record, state, retired)
