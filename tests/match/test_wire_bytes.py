"""The referee builds its requests and record frames as bytes from cached pieces (referee.wire, records.build):
the bytes must be exactly what the messages serialize to, so bots and records see the same thing either way."""

from __future__ import annotations

import random

import pytest

from referee.engine import Options, apply, deck_from_seed, new_game, public_view
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records import RecordWriter, decision_record_bytes, header, read_record, record_selfplay
from referee.wire import (
    KIND_PB,
    action_pb,
    bytes_field,
    decision_request,
    decision_request_bytes,
    end_reason_pb,
    event_pb,
    kind_pb,
    view_pb,
)


def random_games(count: int):
    """(state, events since the seat's last request, action, events it made) for every decision of ``count``
    random games: 2 to 5 seats, every option, every start seat."""
    for seed in range(count):
        rng = random.Random(seed)
        players = 2 + seed % 4
        options = Options(draw_one=seed % 2 == 1, end_on_empty_pile=seed % 3 == 0)
        state = new_game(deck_from_seed(seed), players, options, seed % players)
        log: list = []
        since = [0] * players
        while not state.over:
            seat = state.seat
            unseen = log[since[seat] :]
            since[seat] = len(log)
            action = rng.choice(state.legal)
            after, events = apply(state, action)
            yield state, unseen, action, events
            log.extend(events)
            state = after


def test_request_bytes_equal_the_message_in_every_decision_of_random_games() -> None:
    kinds = set()
    for seq, (state, unseen, _, _) in enumerate(random_games(40), start=1):
        kinds.add(state.kind)
        game_id = "" if seq % 7 == 0 else f"g-{seq % 5}-é"
        args = (state, game_id, seq, unseen, 1000 * (seq % 3), (seq * 37) % 70_000)
        assert decision_request_bytes(*args) == decision_request(*args).SerializeToString()
    assert len(kinds) == 5  # every kind of decision was asked


def test_request_bytes_carry_hidden_draws_redacted() -> None:
    """A card drawn from the pile by another seat reaches a seat as card 0 (R17), as in the message."""
    hidden = 0
    for state, unseen, _, _ in random_games(10):
        req = bot_pb.DecisionRequest.FromString(decision_request_bytes(state, "g", 1, unseen))
        for e in req.events:
            if e.WhichOneof("event") == "drew" and not e.drew.from_market and e.drew.seat != state.seat:
                assert e.drew.card == 0
                hidden += 1
    assert hidden > 0


@pytest.mark.parametrize(
    ("fault", "detail", "bot_us", "retired"),
    [
        (0, "", 0, False),
        (0, "", 1_234_567, False),
        (rec_pb.FAULT_KIND_TIMEOUT, "no reply to seq 9 within 1000 ms", 1_000_900, False),
        (rec_pb.FAULT_KIND_INVALID, "index 7 is out of range: 3 legal actions — ünïcode", 55, True),
        (rec_pb.FAULT_KIND_RETIRED, "the seat has retired; the fallback plays it", 0, False),
    ],
)
def test_record_bytes_equal_the_message(fault: int, detail: str, bot_us: int, retired: bool) -> None:
    chosen_by = rec_pb.CHOOSER_FALLBACK if fault else rec_pb.CHOOSER_BOT
    for seq, (state, _, action, events) in enumerate(random_games(6), start=1):
        index = state.legal.index(action)
        fields = (seq, state.seat, state.kind, index, action, chosen_by, fault, detail, bot_us, seq % 3, 9000, events,
                  retired)  # fmt: skip
        message = rec_pb.DecisionRecord(
            seq=seq,
            seat=state.seat,
            kind=KIND_PB[state.kind],
            index=index,
            action=action_pb(action),
            chosen_by=chosen_by,
            fault=fault,
            fault_detail=detail,
            bot_us=bot_us,
            transport_us=seq % 3,
            bank_left_ms=9000,
            events=[event_pb(e) for e in events],
            retired=retired,
        )
        assert decision_record_bytes(*fields) == message.SerializeToString()


def test_writer_given_bytes_or_messages_writes_the_same_file_and_record(tmp_path) -> None:
    """RecordWriter.decision takes a serialized DecisionRecord too; ``record`` holds what was written."""
    h = header("g", deck_from_seed(1), ["a", "b"], salt=b"s" * 16, started_at="t")
    decisions = list(record_selfplay(1, 2, salt=b"s" * 16).decisions)
    paths = [tmp_path / "messages.abluxx", tmp_path / "bytes.abluxx"]
    records = []
    for path, as_bytes in zip(paths, (False, True), strict=True):
        with RecordWriter(path, h) as w:
            for i, d in enumerate(decisions):
                w.decision(d.SerializeToString() if as_bytes else d)
                if i == 3:
                    assert list(w.record.decisions) == decisions[:4] and not w.record.complete
            records.append(w.finish(rec_pb.RecordFooter(final_digest="x", salt=b"f" * 16)))
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert records[0] == records[1]
    for path, record in zip(paths, records, strict=True):
        assert record.complete and list(record.decisions) == decisions
        assert read_record(path).decisions == record.decisions


def test_a_first_unary_request_with_its_game_start_appended_equals_the_message() -> None:
    """RemoteSeat appends GameStart (DecisionRequest.start, its last field) to the first Decide request's bytes."""
    from referee.match.remote import _DECISION_START

    state = new_game(deck_from_seed(5), 3)
    start = bot_pb.GameStart(game_id="g", seat=0, deck_commitment=b"c" * 32, rules_version="r")
    message = decision_request(state, "g", 1, [], 1000, 5000)
    message.start.CopyFrom(start)
    request = decision_request_bytes(state, "g", 1, [], 1000, 5000)
    appended = request + bytes_field(_DECISION_START, start.SerializeToString())
    assert appended == message.SerializeToString()


def test_a_finished_game_asks_no_decision_and_a_running_one_has_no_end_reason() -> None:
    state = new_game(deck_from_seed(3), 2)
    with pytest.raises(ValueError, match="not over"):
        end_reason_pb(state)
    with pytest.raises(ValueError, match="spectator"):
        view_pb(public_view(state))  # spectators get events, never a request
    while not state.over:
        state, _ = apply(state, state.legal[0])
    with pytest.raises(ValueError, match="game is over"):
        kind_pb(state)
    with pytest.raises(ValueError, match="game is over"):
        decision_request(state, "g", 1, [])
    with pytest.raises(ValueError, match="game is over"):
        decision_request_bytes(state, "g", 1, [])


@pytest.mark.parametrize("n", [1, 127, 128, 300, 16_383, 16_384, 60_000, 2_097_151, 2_097_152, 2**31 - 1])
def test_times_of_every_length_encode_as_protobuf_does(n: int) -> None:
    """A record's times of any size (one to five bytes as varints) encode as protobuf encodes them, the first
    time and again (a cached varint must equal a built one)."""
    state = new_game(deck_from_seed(1), 2)
    action = state.legal[0]
    message = rec_pb.DecisionRecord(seq=1, kind=KIND_PB[state.kind], action=action_pb(action),
                                    chosen_by=rec_pb.CHOOSER_BOT, bot_us=n, transport_us=n, bank_left_ms=n)  # fmt: skip
    for _ in range(2):
        fields = (1, 0, state.kind, 0, action, rec_pb.CHOOSER_BOT, 0, "", n, n, n, [], False)
        assert decision_record_bytes(*fields) == message.SerializeToString()
