"""The one way the referee bounds a memo: a full cache drops the sixty-fourth of it stored first.

The wire's message pieces are cached by value (a hand, an event, a stack). Only a few values recur, but nothing
stops new ones, so when a cache holds its limit (``CACHE_MAX`` entries unless the caller gives another) the
sixty-fourth of it stored first is dropped: a miss costs one rebuild, memory stays bounded without the bookkeeping
of an LRU on the hot path, and no drop is long (emptying a whole 65 536-entry cache at once stalled the loop for
8-9 ms, an eighth of it 3.5 ms; a sixty-fourth is about 0.5 ms).

What a memo keeps, the garbage collector walks at every collection of the generation it has reached, unless it is
made only of ints, strings, bytes and tuples of those (CPython stops tracking such a tuple once a collection has
seen it). So a memo whose keys or values hold the engine's actions or events (NamedTuples and dataclasses, always
tracked) has the smaller limit ``TRACKED_MAX``, and a hand's legal plays are not memoised at all
(``core.PLAY_RUNS``): a memo of them grew to 50 000 tuples a minute (docs/match.md, "The collector").
"""

from __future__ import annotations

from itertools import islice
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")

CACHE_MAX = 1 << 16  # entries per cache
# ...and per cache whose keys or values the collector walks (actions, events, stacks, lists): enough for the few
# thousand distinct values the games in play use at once; the rest (a game's final scores) need not stay.
TRACKED_MAX = 1 << 10


def remember(cache: dict[K, V], key: K, value: V, limit: int = CACHE_MAX) -> V:
    """Store ``value`` under ``key`` (dropping the oldest sixty-fourth of ``cache`` first when it holds ``limit``
    entries) and return it. Call it on a miss: the lookup stays the caller's own ``cache.get(key)``, the fastest
    there is."""
    if len(cache) >= limit:
        for old in list(islice(cache, max(1, limit // 64))):  # a dict keeps the order its keys came in
            del cache[old]
    cache[key] = value
    return value
