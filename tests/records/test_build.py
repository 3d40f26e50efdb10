"""What ``record_selfplay`` writes into a record: the game id and seed it was asked for, the deck from that seed,
the salt given (or a fresh one) behind the commitment, seat 0 first unless told, decisions numbered from 1, and the
same game for the same seed."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta

import pytest

from referee.engine import Action, Event, State, apply, deck_from_seed, new_game
from referee.proto.abluxxen.v1 import record_pb2 as rpb
from referee.records import record_selfplay, verify_record
from referee.records.build import commitment, decision_record, footer, header, utc_now
from referee.records.recordfile import FORMAT_VERSION

SALT = bytes(range(16))


def test_a_self_played_record_names_its_seed_and_game_and_numbers_its_decisions_from_one() -> None:
    record = record_selfplay(7, 3, salt=SALT)
    h = record.header
    assert h.game_id == "selfplay-7" and h.seed == 7 and list(h.deck) == list(deck_from_seed(7))
    assert h.start_seat == 0 and record.decisions[0].seat == 0
    assert [d.seq for d in record.decisions] == list(range(1, len(record.decisions) + 1))
    assert record.footer.salt == SALT and h.commitment == commitment(SALT, h.deck)
    assert [p.name for p in h.players] == ["random-0", "random-1", "random-2"]
    verify_record(record)
    assert record_selfplay(7, 3, game_id="mine", start_seat=2).header.game_id == "mine"


def test_the_same_seed_plays_the_same_game_and_a_salt_not_given_is_fresh() -> None:
    a, b = record_selfplay(11, 2, salt=SALT), record_selfplay(11, 2, salt=SALT)
    assert a.decisions == b.decisions and a.footer.scores == b.footer.scores  # choices from a generator seeded so
    assert [d.index for d in record_selfplay(12, 2).decisions] != [d.index for d in a.decisions]
    fresh = record_selfplay(11, 2)
    assert fresh.footer.salt not in (b"", SALT) and fresh.footer.salt != record_selfplay(11, 2).footer.salt
    assert [d.index for d in fresh.decisions] == [d.index for d in a.decisions]


def _move() -> tuple[State, Action, list[Event]]:
    state = new_game(deck_from_seed(3), 2, None, 1)
    action = state.legal[-1]
    return state, action, list(apply(state, action)[1])


def test_a_decision_record_holds_what_it_was_given_and_nothing_else() -> None:
    state, action, events = _move()
    plain = decision_record(state, action, events, seq=5)
    assert (plain.seq, plain.seat, plain.index) == (5, 1, len(state.legal) - 1) and len(plain.events) == len(events)
    assert (plain.chosen_by, plain.fault) == (rpb.CHOOSER_BOT, rpb.FAULT_KIND_UNSPECIFIED)
    assert (plain.fault_detail, plain.bot_us, plain.transport_us, plain.bank_left_ms, plain.retired) == (
        "",
        0,
        0,
        0,
        False,
    )
    late = decision_record(state, action, events, seq=6, fault="timeout", fault_detail="late", bot_us=2**40,
                           transport_us=7, bank_left_ms=-3, retired=True)  # fmt: skip
    assert (late.fault, late.chosen_by) == (rpb.FAULT_KIND_TIMEOUT, rpb.CHOOSER_FALLBACK)
    assert (late.fault_detail, late.bot_us, late.transport_us, late.bank_left_ms, late.retired) == (
        "late", 2**32 - 1, 7, 0, True)  # fmt: skip
    by_enum = decision_record(
        state, action, events, seq=7, fault=rpb.FAULT_KIND_INVALID, chosen_by=rpb.CHOOSER_FALLBACK
    )
    by_name = decision_record(state, action, events, seq=7, fault="invalid", chosen_by="fallback")
    assert by_enum == by_name and (by_enum.fault, by_enum.chosen_by) == (rpb.FAULT_KIND_INVALID, rpb.CHOOSER_FALLBACK)
    bot = decision_record(state, action, events, seq=8, chosen_by="bot", bank_left_ms=9000)
    assert (bot.chosen_by, bot.bank_left_ms) == (rpb.CHOOSER_BOT, 9000)


def test_a_decision_record_refuses_an_illegal_action_and_a_fallback_without_a_fault() -> None:
    state, action, events = _move()
    other = new_game(deck_from_seed(3), 2, None, 0)
    illegal = next(a for a in other.legal if a not in state.legal)
    with pytest.raises(ValueError, match=rf"^action {re.escape(repr(illegal))} is not legal for seat 1 in this state$"):
        decision_record(state, illegal, events, seq=1)
    words = "^the fallback chooses exactly when there is a fault: pass both or neither$"
    with pytest.raises(ValueError, match=words):
        decision_record(state, action, events, seq=1, chosen_by="fallback")
    with pytest.raises(ValueError, match=words):
        decision_record(state, action, events, seq=1, fault="timeout", chosen_by=rpb.CHOOSER_BOT)


STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")  # RFC 3339, UTC, milliseconds


def test_the_time_now_is_utc_with_milliseconds_and_a_z() -> None:
    stamp = utc_now()
    assert STAMP.match(stamp)
    now = datetime.now(UTC)
    assert abs(datetime.fromisoformat(stamp.replace("Z", "+00:00")) - now) < timedelta(minutes=1)


def test_a_header_of_names_seats_built_in_players_and_keeps_the_defaults_and_what_it_is_given() -> None:
    given = rpb.PlayerRecord(name="bot", kind=rpb.SEAT_KIND_REMOTE, transport="grpc")
    h = header("g", deck_from_seed(1), ["ann", given], salt=SALT)
    assert [(p.name, p.kind, p.transport, p.seat) for p in h.players] == [
        ("ann", rpb.SEAT_KIND_BUILTIN, "builtin", 0),
        ("bot", rpb.SEAT_KIND_REMOTE, "grpc", 1),
    ]
    assert given.seat == 0  # the caller's message is copied, not changed
    assert (h.format_version, h.seed, h.max_strikes, h.tournament_id, h.start_seat) == (FORMAT_VERSION, 0, 3, "", 0)
    assert STAMP.match(h.started_at) and not h.HasField("time_control")
    assert header("g", deck_from_seed(1), ["a", "b"], salt=SALT, started_at="then").started_at == "then"


def test_a_footer_needs_the_final_state_and_keeps_the_time_it_is_given() -> None:
    state = new_game(deck_from_seed(2), 2, None, 0)
    with pytest.raises(ValueError, match=r"^the game is not over: a footer needs the final state$"):
        footer(state, salt=SALT)
    rng = random.Random(2)
    while not state.over:
        state = apply(state, rng.choice(state.legal))[0]
    assert STAMP.match(footer(state, salt=SALT).finished_at)
    assert footer(state, salt=SALT, finished_at="then").finished_at == "then"
