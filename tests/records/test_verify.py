"""verify_record: good records pass for every table size and option; each kind of hand edit is caught and named."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

from referee.engine import Action, Choice, EndReason, Kind, Options, State, apply, full_deck, new_game
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.proto.abluxxen.v1 import record_pb2 as rpb
from referee.records import (
    DealNotRevealed,
    RecordWriter,
    VerifyError,
    commitment,
    decision_record,
    final_places,
    footer,
    header,
    new_salt,
    record_selfplay,
    replay,
    verify_record,
)
from referee.wire import END_FROM_PB

from .helpers import faulty_record

OPTIONS = {
    "default": Options(),
    "draw_one": Options(draw_one=True),
    "end_on_empty_pile": Options(end_on_empty_pile=True),
    "both": Options(draw_one=True, end_on_empty_pile=True),
}


def _random(state: State, rng) -> Action:
    return rng.choice(state.legal)


def _long(state: State, rng) -> Action:
    """Small plays, and as many draws as the rules allow: games that run the pile out (R12, end_on_empty_pile)."""
    if state.kind is Kind.PLAY:
        return min(state.legal, key=lambda g: (g.count, g.value))
    if state.kind is Kind.TAKE_OR_DECLINE:
        return Choice.TAKE
    if state.kind is Kind.RECLAIM_OR_DISCARD:
        return Choice.DISCARD
    return state.legal[-1] if state.kind is Kind.DRAW else state.legal[0]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("option", OPTIONS)
def test_good_records_verify(players: int, option: str) -> None:
    for seed in range(4):
        kw = {"choose": _long} if seed % 2 else {}
        record = record_selfplay(seed, players, OPTIONS[option], start_seat=seed % players, **kw)
        verify_record(record)


def test_records_of_every_end_verify() -> None:
    ends = {}
    for option in ("default", "end_on_empty_pile"):
        for seed in range(3):
            for choose in (_long, _random):
                record = record_selfplay(seed, 3, OPTIONS[option], choose=choose)
                verify_record(record)
                ends[END_FROM_PB[record.footer.reason]] = record
    assert set(ends) == set(EndReason)


def test_a_record_with_faults_and_a_retired_seat_verifies() -> None:
    record = faulty_record()
    verify_record(record)
    assert list(record.footer.retired) == [2]
    assert record.footer.places[2] == 3  # a retired seat places last
    kinds = {d.fault for d in record.decisions}
    assert {rpb.FAULT_KIND_INVALID, rpb.FAULT_KIND_DISCONNECTED, rpb.FAULT_KIND_RETIRED} <= kinds


def _edited(record: rpb.GameRecord, edit: Callable[[rpb.GameRecord], None]) -> rpb.GameRecord:
    copy = rpb.GameRecord()
    copy.CopyFrom(record)
    edit(copy)
    return copy


def _error(record: rpb.GameRecord, edit: Callable[[rpb.GameRecord], None], whole: bool = True) -> str:
    """The error ``record`` edited by ``edit`` fails to verify with: its whole text, or without where it is."""
    with pytest.raises(VerifyError) as e:
        verify_record(_edited(record, edit))
    return str(e.value) if whole else e.value.what


def _first(record: rpb.GameRecord, kind: int) -> int:
    return next(i for i, d in enumerate(record.decisions) if d.kind == kind and i > 3)


@pytest.fixture(scope="module")
def good() -> rpb.GameRecord:
    record = record_selfplay(21, 3, Options(draw_one=True))
    verify_record(record)
    return record


def test_an_illegal_action_is_named(good) -> None:
    i = _first(good, pb.DECISION_KIND_PLAY)

    def edit(r):
        r.decisions[i].action.play.CopyFrom(pb.Group(value=3, numbers=8, jokers=0))

    with pytest.raises(VerifyError, match=rf"decision {i + 1} \(seat {good.decisions[i].seat}\): illegal action play "
                       r"3,3,3,3,3,3,3,3 .*hand holds \d card\(s\) of 3, the group needs 8") as e:  # fmt: skip
        verify_record(_edited(good, edit))
    assert e.value.decision == i + 1


def test_another_legal_action_shows_as_a_wrong_index_or_other_events(good) -> None:
    i = _first(good, pb.DECISION_KIND_TAKE_OR_DECLINE)
    d = good.decisions[i]
    other = pb.CHOICE_DECLINE if d.action.choice == pb.CHOICE_TAKE else pb.CHOICE_TAKE

    def edit(r):
        r.decisions[i].action.choice = other

    with pytest.raises(VerifyError, match=rf"decision {i + 1} .*: index {d.index} points at '\w+', not at the action"):
        verify_record(_edited(good, edit))

    def edit_both(r):  # a consistent index: the events then differ
        r.decisions[i].action.choice = other
        r.decisions[i].index = 1 - d.index

    with pytest.raises(VerifyError, match=rf"decision {i + 1} .*: event 1 differs: the record has '.*(takes|declines)"):
        verify_record(_edited(good, edit_both))


def test_an_edited_event_is_named(good) -> None:
    i = next(i for i, d in enumerate(good.decisions) if d.events[0].HasField("drew") and d.events[0].drew.card != 7)
    seat = good.decisions[i].seat

    def edit(r):
        r.decisions[i].events[0].drew.card = 7

    said = rf"'seat {seat} draws 7 from the (pile|market)', the engine produced 'seat {seat} draws"
    with pytest.raises(VerifyError, match=rf"decision {i + 1} \(seat {seat}\): event 1 differs: the record has {said}"):
        verify_record(_edited(good, edit))

    def drop(r):
        del r.decisions[i].events[-1]

    with pytest.raises(VerifyError, match=rf"decision {i + 1} .*the record has no event, the engine produced"):
        verify_record(_edited(good, drop))


def test_a_wrong_seat_kind_or_seq_is_named(good) -> None:
    def seat(r):
        r.decisions[4].seat = (r.decisions[4].seat + 1) % 3

    with pytest.raises(VerifyError, match=r"decision 5 \(seat \d\): the record says seat \d decides; the engine asks"):
        verify_record(_edited(good, seat))

    wrong = pb.DECISION_KIND_PLAY if good.decisions[4].kind != pb.DECISION_KIND_PLAY else pb.DECISION_KIND_DRAW

    def kind(r):
        r.decisions[4].kind = wrong

    with pytest.raises(VerifyError, match=rf"decision 5 .*kind {pb.DecisionKind.Name(wrong)}; the engine asks"):
        verify_record(_edited(good, kind))

    def seq(r):
        r.decisions[4].seq = r.decisions[3].seq

    with pytest.raises(VerifyError, match=r"decision 5 .*seq 4 does not increase"):
        verify_record(_edited(good, seq))


def test_an_edited_deck_is_caught(good) -> None:
    def invalid(r):
        r.header.deck[0] = 15

    with pytest.raises(VerifyError, match="the deck is not a valid deck: bad card 15"):
        verify_record(_edited(good, invalid))

    first_hand = list(good.header.deck[:13])
    a, b = next((x, y) for x in range(13) for y in range(x, 13) if first_hand[x] != first_hand[y])

    def swap_in_hand(r):  # the same hand in another order: the play is unchanged, only the commitment can tell
        r.header.deck[a], r.header.deck[b] = r.header.deck[b], r.header.deck[a]

    with pytest.raises(VerifyError, match="the deck commitment does not match"):
        verify_record(_edited(good, swap_in_hand))  # (the final digest, which covers the deck, differs too)

    def swap_into_pile(r):  # a card of the pile's top swapped with one of the first hand: the play goes wrong
        top = 13 * 3 + 6
        j = next(j for j in range(13) if r.header.deck[j] != r.header.deck[top])
        r.header.deck[j], r.header.deck[top] = r.header.deck[top], r.header.deck[j]

    with pytest.raises(VerifyError, match=r"decision \d+ \(seat \d\): "):
        verify_record(_edited(good, swap_into_pile))


def test_edited_scores_places_digest_salt_and_end_are_named(good) -> None:
    def score(r):
        r.footer.scores[0] += 1

    with pytest.raises(VerifyError, match=r"the footer's scores \[.*\] differ from the engine's"):
        verify_record(_edited(good, score))

    def places(r):
        r.footer.places[0], r.footer.places[1] = r.footer.places[1], r.footer.places[0]

    if good.footer.places[0] != good.footer.places[1]:
        with pytest.raises(VerifyError, match="the footer's places"):
            verify_record(_edited(good, places))

    def digest(r):
        r.footer.final_digest = "0" * 64

    with pytest.raises(VerifyError, match=r"the footer's digest 0+ differs"):
        verify_record(_edited(good, digest))

    def salt(r):
        r.footer.salt = bytes([r.footer.salt[0] ^ 1]) + r.footer.salt[1:]  # b"\x00" + ... was no edit 1 time in 256

    with pytest.raises(VerifyError, match="the deck commitment does not match"):
        verify_record(_edited(good, salt))

    def no_salt(r):
        r.footer.salt = b""

    with pytest.raises(VerifyError, match="reveals no salt"):
        verify_record(_edited(good, no_salt))

    def reason(r):
        r.footer.reason = pb.END_REASON_PILE_EMPTY if r.footer.reason != pb.END_REASON_PILE_EMPTY else 1

    with pytest.raises(VerifyError, match="the footer says the game ended by END_REASON_"):
        verify_record(_edited(good, reason))

    def retired(r):
        r.footer.retired.append(1)

    with pytest.raises(VerifyError, match=r"the footer lists retired seats \[1\]; the decisions retired \[\]"):
        verify_record(_edited(good, retired))


def test_a_record_cut_short_or_run_long_is_named(good) -> None:
    def drop_last(r):
        del r.decisions[-1]

    with pytest.raises(VerifyError, match=r"the record ends after \d+ decisions, but the engine's game goes on"):
        verify_record(_edited(good, drop_last))

    def extra(r):
        r.decisions.append(r.decisions[-1])

    n = len(good.decisions) + 1
    with pytest.raises(VerifyError, match=rf"decision {n} .*the game was already over"):
        verify_record(_edited(good, extra))

    def no_footer(r):
        r.ClearField("footer")
        r.complete = False

    with pytest.raises(VerifyError, match=rf"incomplete record: {len(good.decisions)} decisions and no footer"):
        verify_record(_edited(good, no_footer))

    def says_complete(r):
        r.ClearField("footer")

    with pytest.raises(VerifyError, match="complete=True but has no footer"):
        verify_record(_edited(good, says_complete))


def test_fault_flags_that_contradict_each_other_are_named() -> None:
    record = faulty_record()
    i = next(i for i, d in enumerate(record.decisions) if d.fault == rpb.FAULT_KIND_INVALID)

    def bot_with_fault(r):
        r.decisions[i].chosen_by = rpb.CHOOSER_BOT

    with pytest.raises(VerifyError, match=rf"decision {i + 1} \(seat 1\): a fault \(FAULT_KIND_INVALID\) is recorded"):
        verify_record(_edited(record, bot_with_fault))

    # The opposite: the fallback chose, but no fault says why (a referee hiding its own choice for a bot).
    k = next(k for k, d in enumerate(record.decisions) if d.fault == 0 and d.chosen_by == rpb.CHOOSER_BOT)

    def fallback_without_fault(r):
        r.decisions[k].chosen_by = rpb.CHOOSER_FALLBACK

    with pytest.raises(VerifyError, match=rf"decision {k + 1} \(seat \d\): the fallback chose but no fault"):
        verify_record(_edited(record, fallback_without_fault))

    j = next(j for j, d in enumerate(record.decisions) if d.fault == rpb.FAULT_KIND_RETIRED)

    def back_from_retirement(r):
        r.decisions[j].fault = rpb.FAULT_KIND_UNSPECIFIED
        r.decisions[j].chosen_by = rpb.CHOOSER_BOT

    with pytest.raises(VerifyError, match=rf"decision {j + 1} \(seat 2\): the seat had retired"):
        verify_record(_edited(record, back_from_retirement))

    def never_retired(r):
        for d in r.decisions:
            d.retired = False

    with pytest.raises(VerifyError, match="marked FAULT_KIND_RETIRED, but the seat had not retired"):
        verify_record(_edited(record, never_retired))


def test_a_footer_that_leaves_out_a_retired_seat_is_named() -> None:
    """Seat 2 retired; a footer that drops it from `retired` must be named, even where its places still hold."""
    record = faulty_record()
    final = [step.after for step in replay(record)][-1]
    # In this game seat 2 also places last on its score, so the places alone cannot show the missing seat.
    assert list(record.footer.places) == list(final_places(final))

    def unretired(r):
        del r.footer.retired[:]

    with pytest.raises(VerifyError, match=r"the footer lists retired seats \[\]; the decisions retired \[2\]"):
        verify_record(_edited(record, unretired))


def test_wrong_rules_or_players_are_named(good) -> None:
    def rules(r):
        r.header.rules_version = "abluxxen-rules-0"

    with pytest.raises(VerifyError, match="played under rules 'abluxxen-rules-0'"):
        verify_record(_edited(good, rules))

    def one_player(r):
        del r.header.players[1:]

    with pytest.raises(VerifyError, match="the header lists 1 players; a game has 2 to 5"):
        verify_record(_edited(good, one_player))


def _one_play_game(retired: set[int]) -> rpb.GameRecord:
    """Seat 0 holds eight 13s and the five jokers and lays them all at once (R7): the game ends on the first
    decision, so seats 1 and 2 never decide. ``retired``: seats that failed before their first decision."""
    deck = full_deck()[::-1]  # the jokers and the 13s on top: seat 0's hand
    salt = new_salt()
    state = new_game(deck, 3, Options())
    with RecordWriter(None, header("one-play", deck, ("ann", "bob", "cyd"), salt=salt)) as writer:
        (action,) = [a for a in state.legal if a.count == 13]
        after, events = apply(state, action)
        writer.decision(decision_record(state, action, events, seq=1))
        assert after.over
        return writer.finish(footer(after, salt=salt, retired=retired))


def test_a_seat_retired_before_its_first_decision_places_last() -> None:
    """The places are checked with every retired seat the footer lists, also one that never decided: bob and cyd
    hold 13 cards each and tie on score and hand; bob retired at the start, so he places last, and verify agrees."""
    record = _one_play_game({1})
    assert not [d for d in record.decisions if d.seat in (1, 2)]
    assert list(record.footer.places) == [1, 3, 2]
    verify_record(record)
    assert list(_one_play_game(set()).footer.places) == [1, 2, 2]  # the tie that bob's retirement breaks

    def unretired(r):
        r.footer.places[:] = [1, 2, 2]

    with pytest.raises(VerifyError, match=r"the footer's places \[1, 2, 2\] differ from the engine's \[1, 3, 2\]"):
        verify_record(_edited(record, unretired))


def test_an_error_says_where_only_when_it_is_at_a_decision(good) -> None:
    """A header's error is its text alone; a decision's is prefixed with its number and seat, which it also keeps,
    with the bare text, for the tools that point at the decision (the replay viewer)."""

    def rules(r):
        r.header.rules_version = "old"

    with pytest.raises(VerifyError) as e:
        verify_record(_edited(good, rules))
    assert (e.value.what, e.value.decision, e.value.seat) == (str(e.value), None, None)
    assert str(e.value).startswith("the game was played under rules 'old'")

    def seq(r):
        r.decisions[4].seq = r.decisions[3].seq

    with pytest.raises(VerifyError) as e:
        verify_record(_edited(good, seq))
    what = f"seq {good.decisions[3].seq} does not increase (the decision before had seq {good.decisions[3].seq})"
    assert (e.value.what, e.value.decision, e.value.seat) == (what, 5, good.decisions[4].seat)
    assert str(e.value) == f"decision 5 (seat {good.decisions[4].seat}): {what}"


def test_a_record_with_its_deal_withheld_says_to_fetch_it_later(good) -> None:
    def withhold(r):
        r.deal_withheld = True

    with pytest.raises(DealNotRevealed) as e:
        verify_record(_edited(good, withhold))
    assert str(e.value) == (
        "deal not yet revealed: the record was served before every game on its deal was over, so it holds the "
        "commitment and the result but not the deck, the salt or the decisions; fetch it again later"
    )


def test_values_no_enum_or_event_knows_are_shown_as_they_are(good) -> None:
    """A kind, fault or event this referee cannot name is shown by its number or as the message itself."""

    def kind(r):
        r.decisions[4].kind = 99

    want = pb.DecisionKind.Name(good.decisions[4].kind)
    with pytest.raises(VerifyError, match=rf"decision 5 \(seat \d\): the record says kind 99; the engine asks {want}$"):
        verify_record(_edited(good, kind))

    record = faulty_record()
    i = next(i for i, d in enumerate(record.decisions) if d.fault == rpb.FAULT_KIND_INVALID)

    def fault(r):
        r.decisions[i].fault = 77
        r.decisions[i].chosen_by = rpb.CHOOSER_BOT

    with pytest.raises(VerifyError, match=rf"decision {i + 1} \(seat 1\): a fault \(77\) is recorded but the bot's"):
        verify_record(_edited(record, fault))

    last = len(good.decisions) - 1

    def event(r):
        e = r.decisions[last].events.add()
        e.game_ended.reason = 99
        e.game_ended.scores.extend([1, 2])

    n = len(good.decisions[last].events) + 1
    said = "the message {game_ended { reason: 99 scores: 1 scores: 2 }}, the engine produced no event"
    with pytest.raises(VerifyError) as e:
        verify_record(_edited(good, event))
    assert (e.value.what, e.value.decision) == (f"event {n} differs: the record has {said}", last + 1)


def test_a_footers_mismatch_is_told_in_full(good) -> None:
    """The whole text of each footer error: what the footer says and what the engine or the commitment says."""

    said = functools.partial(_error, good)

    def no_salt(r):
        r.footer.salt = b""

    assert said(no_salt) == "the footer reveals no salt, so the deck commitment cannot be checked"
    salt = bytes([good.footer.salt[0] ^ 1]) + good.footer.salt[1:]

    def other_salt(r):
        r.footer.salt = salt

    is_now = commitment(salt, good.header.deck).hex()
    assert said(other_salt) == ("the deck commitment does not match: SHA-256(salt || deck) is "
                                f"{is_now}, the header committed to {good.header.commitment.hex()}")  # fmt: skip

    def no_commitment(r):
        r.header.commitment = b""

    assert said(no_commitment) == ("the deck commitment does not match: SHA-256(salt || deck) is "
                                   f"{good.header.commitment.hex()}, the header committed to (nothing)")  # fmt: skip
    other = pb.END_REASON_PILE_EMPTY if good.footer.reason != pb.END_REASON_PILE_EMPTY else pb.END_REASON_EMPTY_HAND

    def reason(r):
        r.footer.reason = other

    assert said(reason) == (f"the footer says the game ended by {pb.EndReason.Name(other)}; "
                            f"the engine says {pb.EndReason.Name(good.footer.reason)}")  # fmt: skip

    def unknown_reason(r):
        r.footer.reason = 42

    assert said(unknown_reason).startswith("the footer says the game ended by 42; the engine says END_REASON_")


def _seat_one_plays_all(retired: set[int]) -> rpb.GameRecord:
    """As _one_play_game, but seat 1 is dealt the 13s and the jokers and starts: seats 0 and 2 never decide."""
    top = full_deck()[::-1]
    deck = top[13:26] + top[:13] + top[26:]
    salt = new_salt()
    state = new_game(deck, 3, Options(), 1)
    with RecordWriter(None, header("one-play", deck, ("ann", "bob", "cyd"), salt=salt, start_seat=1)) as writer:
        (action,) = [a for a in state.legal if a.count == 13]
        after, events = apply(state, action)
        writer.decision(decision_record(state, action, events, seq=1))
        return writer.finish(footer(after, salt=salt, retired=retired))


def test_the_first_seat_may_retire_before_deciding_and_no_seat_past_the_last(good) -> None:
    verify_record(_seat_one_plays_all({0}))  # seat 0 failed before its first decision: a seat like any other
    verify_record(_seat_one_plays_all({0, 2}))

    def past(r):
        r.footer.retired.append(3)

    with pytest.raises(VerifyError, match=r"^the footer lists retired seats \[3\]; the decisions retired \[\]$"):
        verify_record(_edited(_seat_one_plays_all(set()), past))


def test_each_decision_error_is_told_in_full(good) -> None:
    def said(record: rpb.GameRecord, edit: Callable[[rpb.GameRecord], None]) -> str:
        return _error(record, edit, whole=False)

    assert str(VerifyError("x", 3)) == "decision 3: x"  # a decision without a seat
    d = good.decisions[4]

    def no_action(r):
        r.decisions[4].action.Clear()

    assert said(good, no_action).startswith("the action names no action: ")
    legal = new_game(list(good.header.deck), 3, Options(draw_one=True), good.header.start_seat).legal

    def past_the_end(r):
        r.decisions[0].index = len(legal)

    assert said(good, past_the_end).startswith(f"index {len(legal)} points at nothing, not at the action ")

    def chooser(r):
        r.decisions[4].chosen_by = 5

    assert said(good, chooser) == "chosen_by is 5; it must be CHOOSER_BOT or CHOOSER_FALLBACK"
    assert d.seq > 0
    record = faulty_record()
    j = next(j for j, d in enumerate(record.decisions) if d.fault == rpb.FAULT_KIND_RETIRED)

    def back(r):
        r.decisions[j].fault = rpb.FAULT_KIND_UNSPECIFIED
        r.decisions[j].chosen_by = rpb.CHOOSER_BOT

    assert said(record, back) == "the seat had retired, but this decision is not marked FAULT_KIND_RETIRED"

    def twice(r):
        r.decisions[j].retired = True

    assert said(record, twice) == "the seat retires a second time"

    def never(r):
        for x in r.decisions:
            x.retired = False

    assert said(record, never) == "marked FAULT_KIND_RETIRED, but the seat had not retired"

    def no_digest(r):
        r.footer.final_digest = ""

    with pytest.raises(VerifyError, match=r"^the footer's digest \(none\) differs from the engine's [0-9a-f]+$"):
        verify_record(_edited(good, no_digest))


def test_each_header_error_is_told_in_full(good) -> None:
    said = functools.partial(_error, good)

    def version(r):
        r.header.format_version = 99

    assert said(version) == f"the header says format version 99; this referee reads {good.header.format_version}"

    def six(r):
        for name in ("dee", "eve", "fay"):
            r.header.players.add(name=name, seat=len(r.header.players))

    assert said(six) == "the header lists 6 players; a game has 2 to 5"

    def swapped(r):
        r.header.players[0].seat = 1

    assert said(swapped) == f"the header lists player {good.header.players[0].name!r} as seat 1 in place 0"

    def start(r):
        r.header.start_seat = 3

    assert said(start) == "the start seat 3 is not a seat of this 3-player game"

    def complete_without_footer(r):
        r.ClearField("footer")

    assert said(complete_without_footer) == "the record says complete=True but has no footer"

    def footer_but_incomplete(r):
        r.complete = False

    assert said(footer_but_incomplete) == "the record says complete=False but has footer"

    def no_decisions(r):
        del r.decisions[:]

    first = new_game(list(good.header.deck), 3, Options(draw_one=True), good.header.start_seat).seat
    assert (
        said(no_decisions)
        == f"the record ends after 0 decisions, but the engine's game goes on (seat {first} to decide)"
    )


def test_replay_steps_through_each_decision_as_recorded(good) -> None:
    """The replay viewer's steps: each decision's number from 1, its record, the state it was asked in, the action,
    the state and events it led to."""
    steps = list(replay(good))
    assert [s.number for s in steps] == list(range(1, len(good.decisions) + 1))
    state = new_game(list(good.header.deck), 3, Options(draw_one=True), good.header.start_seat)
    for step, d in zip(steps, good.decisions, strict=True):
        assert step.decision == d and step.before == state and step.before.seat == d.seat
        assert step.action == state.legal[d.index]
        step_after, events = apply(state, step.action)
        assert (step.after, step.events) == (step_after, events) and len(events) == len(d.events)
        state = step.after
    assert state.over
