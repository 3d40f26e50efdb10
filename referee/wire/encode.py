"""Requests and records as bytes, for the referee's hot path."""

from __future__ import annotations

from collections.abc import Callable
from operator import getitem

from google.protobuf.message import Message

from referee.engine import (
    ALL_DRAWS,
    DECK_SIZE,
    JOKER,
    PLAY_RUNS,
    Action,
    Choice,
    Event,
    Group,
    Kind,
    State,
    event_for,
)
from referee.engine.cache import TRACKED_MAX, remember

from .messages import WireError, action_pb, event_pb, group_pb, kind_pb

# --- requests and records as bytes, for the referee's hot path ---------------------------------------------------
# The referee builds a request and a record frame per decision. Building them as bytes from cached pieces costs
# a fraction of building messages: a protobuf encoding is its fields' encodings joined in field-number order, so
# the pieces below, joined in that order, are exactly what ``SerializeToString`` gives for the same message
# (tests/match/test_wire_bytes.py checks this on random games). Pieces are cached like ``action_pb``.


def varint(n: int) -> bytes:
    """A protobuf varint; a negative int32 takes ten bytes, as protobuf encodes it. Values below 2**14 (lengths,
    counts, most times: they recur) and small negative ones are cached, at most 32 768 of them. Larger ones are
    nearly all one-off times (a record's ``bot_us``): built directly, as caching them only churned the cache."""
    b = _VARINTS.get(n)
    if b is not None:
        return b
    if 0 < n < 0x4000:
        b = _VARINTS[n] = bytes(((n & 0x7F) | 0x80, n >> 7))
        return b
    if 0 < n < 0x200000:
        return bytes(((n & 0x7F) | 0x80, ((n >> 7) & 0x7F) | 0x80, n >> 14))
    b = _encode_varint(n)
    if -0x4000 < n < 0:  # -1 (no victim) is in nearly every request: ten bytes, built by a loop
        _VARINTS[n] = b
    return b


def _encode_varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = [bytes([i]) for i in range(0x80)]
_VARINTS: dict[int, bytes] = dict(enumerate(_SMALL))  # grows to at most 2**15 entries (``varint``)


def read_varint(data: bytes, pos: int) -> tuple[int, int] | None:
    """The varint at ``data[pos]`` and the position after it; None when the data ends inside it, WireError when it
    runs past ten bytes (no varint does)."""
    value = shift = 0
    while pos < len(data):
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise WireError("a varint longer than 10 bytes")
    return None


def delimited(body: bytes) -> bytes:
    """``body`` prefixed by its length as a varint: a length-delimited value, and a record file's frame."""
    return varint(len(body)) + body


# _INT_FIELDS[field][n]: field ``field`` (1-15) holding ``n`` (0-127), as ``int_field`` encodes it: most of a
# request's and a record's numbers, built once rather than joined on every decision.
_INT_FIELDS = [[b""] + [bytes([field << 3, n]) for n in range(1, 0x80)] for field in range(16)]


def int_field(field: int, n: int) -> bytes:
    """An int/enum/bool field (fields 1-15); absent when 0, as proto3 leaves it."""
    if 0 <= n < 0x80:
        return _INT_FIELDS[field][n]
    return _SMALL[field << 3] + varint(n)


def bytes_field(field: int, body: bytes) -> bytes:
    """A length-delimited field (a message, string, bytes or packed list; fields 1-15), always present: also how
    the referee puts an already serialized message into a parent (a request into a RefereeMessage) uncopied."""
    return _SMALL[(field << 3) | 2] + varint(len(body)) + body


def packed_field(field: int, values: tuple[int, ...] | list[int]) -> bytes:
    """A packed repeated int field; absent when empty."""
    if not values:
        return b""
    if min(values) >= 0 and max(values) < 0x80:
        return bytes_field(field, bytes(values))  # every value is a one-byte varint
    return bytes_field(field, b"".join(varint(v) for v in values))


# Events, actions and groups: few distinct values, shared by every game. Stacks get their own cache: nearly every
# play makes a new one, and they would push the others out.
_FIELD_CACHE: dict[tuple[object, ...], bytes] = {}
_STACK_BYTES: dict[tuple[Group, ...], tuple[bytes, bytes, int]] = {}


def _message_field(field: int, value: Event | Action, to_pb: Callable[..., Message]) -> bytes:
    """``to_pb(value)`` as the message field ``field``, kept in ``_FIELD_CACHE`` (keys the collector walks: the
    smaller limit, engine/cache.py)."""
    key = (field, value)
    b = _FIELD_CACHE.get(key)
    return (
        b
        if b is not None
        else remember(_FIELD_CACHE, key, bytes_field(field, to_pb(value).SerializeToString()), TRACKED_MAX)
    )


def event_field(field: int, e: Event) -> bytes:
    """``e`` (already redacted for its reader) as the message field ``field``."""
    return _message_field(field, e, event_pb)


def action_field(field: int, a: Action) -> bytes:
    """``a`` as the message field ``field``."""
    return _message_field(field, a, action_pb)


# _CARD_RUNS[card][k]: ``card`` k times, each a one-byte varint.
_CARD_RUNS = tuple(tuple(bytes([c]) * k for k in range(DECK_SIZE + 1)) for c in range(JOKER + 1))


def _cards_field(field: int, counts: tuple[int, ...]) -> bytes:
    """The cards of a counts tuple as a packed field, in ``cards_of`` order (ascending, jokers last). Cached per
    field: a market, a discard pile or a hand recurs over many decisions, and joining 15 runs costs several
    lookups of the tuple's."""
    cache = _CARDS_FIELDS[field]
    b = cache.get(counts)
    if b is None:
        body = b"".join(map(getitem, _CARD_RUNS, counts))
        b = remember(cache, counts, bytes_field(field, body) if body else b"")
    return b


_CARDS_FIELDS: list[dict[tuple[int, ...], bytes]] = [{} for _ in range(16)]


def _stack(st: tuple[Group, ...]) -> tuple[bytes, bytes, int]:
    """(the Stack's encoding, that as a SeatView.stacks element, its card count). A Stack is its groups
    (Stack.groups = 1) joined, and a stack grows or shrinks by its top group: it is built from the stack below its
    top, which is usually cached, rather than group by group."""
    p = _STACK_BYTES.get(st)
    if p is not None:
        return p
    if st:
        below, _, cards = _stack(st[:-1])
        body, cards = below + _group_field(1, st[-1]), cards + st[-1].numbers + st[-1].jokers
    else:
        body, cards = b"", 0
    return remember(_STACK_BYTES, st, (body, bytes_field(6, body), cards), TRACKED_MAX)  # an empty one is still sent


def _group_field(field: int, g: Group) -> bytes:
    return _message_field(field, g, group_pb)


def _legal_fields(state: State) -> bytes:
    """A decision's legal actions, each as DecisionRequest.legal (field 7), joined, with nothing kept per decision
    (engine/cache.py): a play's from the encoded runs of its hand (the engine's PLAY_RUNS), any other's (a few
    draws or choices) action by action."""
    if state.kind is Kind.PLAY:
        hand = state.hands[state.seat]
        return b"".join(map(getitem, _PLAY_RUN_FIELDS[hand[JOKER]], hand))
    return b"".join(map(_LEGAL_FIELD.__getitem__, state.legal))


_PLAY_RUN_FIELDS = tuple(
    tuple(tuple(b"".join([action_field(7, a) for a in run]) for run in runs) for runs in by_code)
    for by_code in PLAY_RUNS
)
# Every draw and choice as one DecisionRequest.legal field (a play's come from _PLAY_RUN_FIELDS).
_LEGAL_FIELD = {a: action_field(7, a) for a in (*ALL_DRAWS, *Choice)}


# Fields that recur in every request, cached by value: a seat's hand sizes and scores (field 5 and 10 of a
# SeatView: tuples, as the same few recur), the game id, a time (decision_ms and bank_ms, mostly one value a game).
_F1, _F2, _F3, _F9, _F12, _F13 = (_INT_FIELDS[f] for f in (1, 2, 3, 9, 12, 13))
_NO_VICTIM = int_field(12, -1)  # ten bytes
_SIZES_FIELDS: dict[tuple[int, ...], bytes] = {}
_SCORES_FIELDS: dict[tuple[int, ...], bytes] = {}
_GAME_ID_FIELDS: dict[str, bytes] = {}
_TIME_FIELDS: dict[tuple[int, int], bytes] = {}


def _packed_cached(cache: dict[tuple[int, ...], bytes], field: int, values: tuple[int, ...]) -> bytes:
    b = cache.get(values)
    return b if b is not None else remember(cache, values, packed_field(field, values))


def seat_view_bytes(s: State, seat: int) -> bytes:
    """``view_pb(view(s, seat)).SerializeToString()``, read straight off the state: the fields ``view`` shows a
    seat, without building the View (scores come from the cached stack card counts). Seats, the active seat, the
    victim and ``to_draw`` are below 128 (a one-byte field from the table); turns and the pile may not be."""
    stacks = [_stack(st) for st in s.stacks]
    sizes = tuple(map(sum, s.hands))
    turn, pile, victim, played = s.turn, s.pile_size, s.victim, s.played
    return b"".join(
        (
            _F1[seat],
            _F2[turn] if turn < 0x80 else int_field(2, turn),
            _F3[s.active],
            _cards_field(4, s.hands[seat]),
            _packed_cached(_SIZES_FIELDS, 5, sizes),
            *[p[1] for p in stacks],
            _cards_field(7, s.market),
            _cards_field(8, s.discard),
            _F9[pile] if pile < 0x80 else int_field(9, pile),
            _packed_cached(_SCORES_FIELDS, 10, tuple([p[2] - n for p, n in zip(stacks, sizes, strict=True)])),
            b"" if played is None else _group_field(11, played),
            _NO_VICTIM if victim < 0 else _F12[victim],
            _F13[s.to_draw],
        )
    )


def _game_id_field(game_id: str) -> bytes:
    b = _GAME_ID_FIELDS.get(game_id)
    if b is None:
        b = remember(_GAME_ID_FIELDS, game_id, bytes_field(1, game_id.encode()) if game_id else b"")
    return b


def time_field(field: int, ms: int) -> bytes:
    """``int_field(field, ms)`` for a time in milliseconds, cached: a game's times take few values."""
    if 0 <= ms < 0x80:
        return _INT_FIELDS[field][ms]
    key = (field, ms)
    b = _TIME_FIELDS.get(key)
    return b if b is not None else remember(_TIME_FIELDS, key, int_field(field, ms))


def event_field_cache(field: int) -> Callable[[Event], bytes]:
    """``event_field(field, e)`` for one field, cached by the event alone (no (field, event) tuple to build and
    hash per event): DecisionRequest.events (6) and DecisionRecord.events (12)."""
    cache: dict[Event, bytes] = {}

    def cached(e: Event) -> bytes:
        b = cache.get(e)
        return b if b is not None else remember(cache, e, event_field(field, e), TRACKED_MAX)

    return cached


_request_event = event_field_cache(6)


def decision_request_bytes(
    state: State, game_id: str, seq: int, events: list[Event], decision_ms: int = 0, bank_ms: int = 0
) -> bytes:
    """``decision_request(...).SerializeToString()``, built from cached pieces."""
    seat = state.seat
    view = seat_view_bytes(state, seat)
    return b"".join(
        (
            _game_id_field(game_id),
            _F2[seat],
            _INT_FIELDS[3][seq] if 0 <= seq < 0x80 else int_field(3, seq),
            _KIND_FIELDS[kind_pb(state)],
            _VIEW_TAG,
            varint(len(view)),
            view,
            *[_request_event(event_for(e, seat)) for e in events],
            _legal_fields(state),
            time_field(8, decision_ms),
            time_field(9, bank_ms),
        )
    )


_KIND_FIELDS = [int_field(4, k) for k in range(16)]
_VIEW_TAG = _SMALL[(5 << 3) | 2]  # DecisionRequest.view's tag; its length and the view follow
