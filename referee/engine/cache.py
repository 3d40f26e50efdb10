"""The one way the referee bounds a memo: a full cache starts again.

The engine's legal plays and the wire's message pieces are cached by value (a hand, an event, a stack). Only a few
values recur, but nothing stops new ones, so each cache is emptied when it holds ``CACHE_MAX`` entries: a miss
costs one rebuild, and memory stays bounded without the bookkeeping of an LRU on the hot path.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")

CACHE_MAX = 1 << 16  # entries per cache


def remember(cache: dict[K, V], key: K, value: V) -> V:
    """Store ``value`` under ``key`` (emptying ``cache`` first when it is full) and return it. Call it on a miss:
    the lookup stays the caller's own ``cache.get(key)``, the fastest there is."""
    if len(cache) >= CACHE_MAX:
        cache.clear()
    cache[key] = value
    return value
