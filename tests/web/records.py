"""Real game records for the viewer tests: engine self-play written with the records builders.

Faults are written the way the match runner writes them (the fallback chooses, the fault kind and detail are set,
a retired seat's later decisions are marked "retired"), so every record here passes ``verify_record``.
"""

from __future__ import annotations

import random

from referee.engine import apply, deck_from_seed, new_game
from referee.proto.abluxxen.v1 import record_pb2
from referee.records import decision_record, footer, header, new_salt


def self_play_record(
    seed: int,
    names: tuple[str, ...] = ("ada", "bob", "cyd"),
    timeouts: dict[int, tuple[int, ...]] | None = None,
    retire: tuple[int, int] | None = None,
    game_id: str | None = None,
    play_seed: int | None = None,
    tournament_id: str = "",
) -> record_pb2.GameRecord:
    """A complete record of a random-legal-move game on the deck ``deck_from_seed(seed)``.

    ``timeouts`` maps a seat to the indexes (counted in that seat's decisions) that timed out; ``retire`` is
    (seat, index): that decision is an invalid reply that retires the seat, and the fallback plays it to the end.
    The moves are random legal ones from ``play_seed`` (default: ``seed``).
    """
    timeouts = timeouts or {}
    rng = random.Random(seed if play_seed is None else play_seed)
    deck = deck_from_seed(seed)
    salt = new_salt()
    state = new_game(deck, len(names))
    h = header(game_id or f"g{seed}", deck, list(names), salt=salt, seed=seed, tournament_id=tournament_id)
    record = record_pb2.GameRecord(header=h)
    count = [0] * len(names)
    retired: set[int] = set()
    seq = 0
    while not state.over:
        seat = state.seat
        action = rng.choice(state.legal)
        after, events = apply(state, action)
        seq += 1
        k = count[seat]
        count[seat] += 1
        fault: dict = {}
        if seat in retired:
            fault = {"fault": "retired"}
        elif retire == (seat, k):
            fault = {"fault": "invalid", "fault_detail": "index 99 is out of range", "retired": True}
            retired.add(seat)
        elif k in timeouts.get(seat, ()):
            fault = {"fault": "timeout", "fault_detail": "no answer within 1000 ms"}
        d = decision_record(state, action, events, seq=seq, bot_us=rng.randrange(50, 5000), **fault)
        record.decisions.append(d)
        state = after
    record.footer.CopyFrom(footer(state, salt=salt, retired=retired))
    record.complete = True
    return record
