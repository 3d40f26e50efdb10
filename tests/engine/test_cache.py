"""The one bound on the referee's memos (engine legal plays, wire pieces): a full cache starts again."""

from __future__ import annotations

from referee.engine import legal_plays
from referee.engine.cache import CACHE_MAX, remember
from referee.engine.core import _PLAY_CACHE


def test_a_full_cache_starts_again_and_keeps_the_new_value() -> None:
    cache = {i: i for i in range(CACHE_MAX - 1)}
    assert remember(cache, "a", 1) == 1 and len(cache) == CACHE_MAX  # room for one more
    assert remember(cache, "b", 2) == 2 and cache == {"b": 2}  # full: emptied, then the new value


def test_the_engines_legal_plays_memo_stays_bounded() -> None:
    hand = (0, 1) + (0,) * 13
    _PLAY_CACHE.clear()
    _PLAY_CACHE.update({(i,): () for i in range(CACHE_MAX)})  # full, of keys no hand has
    assert len(_PLAY_CACHE) == CACHE_MAX and hand not in _PLAY_CACHE
    assert legal_plays(hand) and len(_PLAY_CACHE) == 1
