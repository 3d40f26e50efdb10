"""The garbage collector's settings for a process that plays games (docs/match.md, "Where the time goes").

Every entry point that plays games calls ``tune_gc`` once, after its imports and before its first game: the
``abluxx`` commands that play (match, tournament, duel, gauntlet, demo, serve), a tournament's worker process and a
Ray game actor.

Why: CPython's default thresholds (700, 10, 10) collect the youngest generation every 700 net allocations, and a
referee with 64 games in play keeps thousands of live coroutines, gRPC objects and events there, so each young
collection examined them again (about 1 ms), and every few seconds a full collection examined the whole heap and
stalled the event loop for 50-80 ms: longer than some bots' whole decision time. Two changes:

- ``gc.freeze()`` after start-up moves every object alive then (modules, classes, protobuf descriptors: about half
  of a referee's heap) into the permanent generation, which no collection examines again. ``gc.collect()`` first,
  so no garbage is frozen. Freezing is not a leak: a frozen object freed by reference counting is freed.
- Thresholds for many small objects, most short-lived: a young collection every ``YOUNG`` net allocations, the
  middle generation every ``MIDDLE`` young ones, the old generation every ``OLD`` middle ones. A young collection
  walks what was allocated since the last one and is still alive, and the count is of allocations less
  deallocations of any age, so a rare young collection walks many objects: at (5000, 50, 100) a 64-game referee
  collected about once a second and, once its games had run a minute, each collection took 5-6 ms of CPU. At
  ``YOUNG`` 1000 it collects about eleven times a second, 1-3 ms each (about 2.5 us a decision in all), and the
  middle generation about every 90 s (``MIDDLE`` 1000; it was about every 50 s); the cycles a finished game
  leaves behind are young or middle-aged and go with those. A middle collection still walks every game in play,
  5-15 ms of CPU at 64 games: the one stall left over 5 ms (docs/notes/2026-12-03-referee-cpu-and-stalls.md,
  "Eighth pass"; what the wire's memos keep is bounded for the same reason, engine/cache.py). A collection that
  does stall the loop still costs no bot anything: the runner's lag monitor (match/clock.py) takes the stall off
  the bot's time.
"""

from __future__ import annotations

import gc

YOUNG = 1_000
MIDDLE = 1_000
OLD = 100

_tuned = False


def tune_gc() -> None:
    """Collect once, freeze what is alive, and set the thresholds above. Only the first call in a process does
    anything (a command run in-process twice, as tests do, freezes once)."""
    global _tuned
    if _tuned:
        return
    _tuned = True
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, OLD)
