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
- Thresholds for many small long-lived objects: a young collection every ``YOUNG`` net allocations, the middle
  generation every ``MIDDLE`` young ones, the old generation every ``OLD`` middle ones. At the benchmark's 64
  games (about 5 000 net allocations a second) that is a young collection about every second (1-3 ms of CPU), a
  middle one about every minute and a full one about never; the cycles a finished game leaves behind are young or
  middle-aged and go with those. A collection that does stall the loop still costs no bot anything: the runner's lag
  monitor (match/clock.py) takes the stall off the bot's time.
"""

from __future__ import annotations

import gc

YOUNG = 5_000
MIDDLE = 50
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
