"""The one bound on the referee's memos (the wire's pieces): a full cache drops what it stored first, and what the
collector would walk is not kept per hand."""

from __future__ import annotations

import random

from referee.engine import Group, Kind, apply, core, deck_from_seed, legal_plays, new_game
from referee.engine.cache import CACHE_MAX, TRACKED_MAX, remember
from referee.wire import decision_request_bytes, encode, messages


def test_a_full_cache_drops_what_it_stored_first_and_keeps_the_new_value() -> None:
    cache = {i: i for i in range(CACHE_MAX - 1)}
    assert remember(cache, "a", 1) == 1 and len(cache) == CACHE_MAX  # room for one more
    assert remember(cache, "b", 2) == 2
    assert len(cache) == CACHE_MAX - CACHE_MAX // 64 + 1 and cache["a"] == 1 and cache["b"] == 2
    assert min(k for k in cache if isinstance(k, int)) == CACHE_MAX // 64  # the first stored went first
    small = {i: i for i in range(10)}
    assert remember(small, "c", 3, limit=10) == 3 and len(small) == 10 and 0 not in small and 1 in small


def _memo_entries() -> list[object]:
    """Every key and value of the referee's module-level memos (the engine's and the wire's)."""
    out: list[object] = []
    for module in (core, encode, messages):
        for value in vars(module).values():
            for memo in value if isinstance(value, list) else [value]:
                if isinstance(memo, dict):
                    out.extend(memo)
                    out.extend(memo.values())
    return out


def test_legal_plays_and_their_request_bytes_keep_nothing_per_hand() -> None:
    """A hand's plays are built from shared runs, not memoised: a memo of them grew by tens of thousands of tuples
    of Groups a minute, which the garbage collector walked (loop stalls of 70-80 ms)."""
    rng = random.Random(3)
    plays = []  # the states' own legal tuples, kept alive so that no other object can take their ids
    for seed in range(30):
        state = new_game(deck_from_seed(seed), 2 + seed % 4)
        while not state.over:
            if state.kind is Kind.PLAY:
                plays.append(state.legal)
                assert state.legal == legal_plays(state.hands[state.seat])
                decision_request_bytes(state, "g", 1, [])
            state, _ = apply(state, rng.choice(state.legal))
    assert len(plays) > 500
    ids = {id(p) for p in plays}
    assert not [e for e in _memo_entries() if id(e) in ids]


def test_memos_of_what_the_collector_walks_have_the_smaller_limit() -> None:
    encode._STACK_BYTES.clear()
    encode._STACK_BYTES.update({(Group(1, i % 8 + 1, i // 8),) * 2: (b"", b"", 0) for i in range(TRACKED_MAX)})
    st = (Group(2, 1, 0),)
    assert encode._stack(st)[2] == 1
    assert len(encode._STACK_BYTES) == TRACKED_MAX - TRACKED_MAX // 64 + 2  # the stack, and the empty one below it
    encode._FIELD_CACHE.clear()
    encode._FIELD_CACHE.update({(99, i): b"" for i in range(TRACKED_MAX)})
    assert encode.action_field(7, Group(3, 1, 0)) and len(encode._FIELD_CACHE) == TRACKED_MAX - TRACKED_MAX // 64 + 1
