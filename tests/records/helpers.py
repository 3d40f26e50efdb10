"""Records for the record tests: self-play games, and one with faults written the way the match runner does."""

from __future__ import annotations

import os
import random
from collections import Counter

from referee.engine import DRAW_PILE, Options, apply, deck_from_seed, new_game
from referee.proto.abluxxen.v1 import record_pb2 as rpb
from referee.records import RecordWriter, decision_record, footer, header, new_salt

# A fault detail that names a hand: only its own seat's view (or the full view) may show it.
SECRET_DETAIL = "illegal action play 5,5: hand holds 1 card(s) of 5"


def faulty_record(
    seed: int = 3, names: tuple[str, ...] = ("ann", "bob", "cyd"), path: str | os.PathLike[str] | None = None
) -> rpb.GameRecord:
    """A complete record of a random game in which seat 1 fails once (invalid, then the fallback chooses) and
    seat 2 drops its stream on its 3rd decision and retires; the fallback then plays seat 2 to the end."""
    deck = deck_from_seed(seed)
    salt = new_salt()
    rng = random.Random(seed)
    state = new_game(deck, len(names), Options())
    retired: set[int] = set()
    count: Counter[int] = Counter()
    with RecordWriter(path, header("faulty", deck, names, salt=salt, seed=seed)) as writer:
        seq = 0
        while not state.over:
            seat = state.seat
            count[seat] += 1
            seq += 1
            kw: dict = {"bot_us": 1000 + seq, "transport_us": 80, "bank_left_ms": 9000}
            if seat in retired:
                action = state.legal[0]
                kw.update(fault="retired", fault_detail="the seat has retired; the fallback plays it")
            elif seat == 1 and count[seat] == 2:
                action = state.legal[0]
                kw.update(fault="invalid", fault_detail=SECRET_DETAIL)
            elif seat == 2 and count[seat] == 3:
                action = state.legal[0]
                kw.update(fault="disconnected", fault_detail="the stream dropped", retired=True)
                retired.add(seat)
            elif DRAW_PILE in state.legal and rng.random() < 0.5:  # plenty of hidden draws for the view tests
                action = DRAW_PILE
            else:
                action = rng.choice(state.legal)
            after, events = apply(state, action)
            writer.decision(decision_record(state, action, events, seq=seq, **kw))
            state = after
        return writer.finish(footer(state, salt=salt, retired=retired))


def frame_offsets(data: bytes, start: int = 8) -> list[tuple[int, int, int]]:
    """(offset, body offset, body length) of each frame of a record file's bytes."""
    out = []
    pos = start
    while pos < len(data):
        offset = pos
        n = shift = 0
        while True:
            b = data[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        out.append((offset, pos, n))
        pos += n
    return out
