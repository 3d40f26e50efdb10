"""Three example bots: ``random``, ``greedy`` and ``counter``. Serve one with ``abluxx bot NAME --port P``.

``REGISTRY`` maps each name to ``factory(seed) -> Bot``; the match runner uses it for built-in policies.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

from referee.engine import JOKER, Choice, Draw, Group

from .decision import Decision
from .session import Answer, Bot


def game_rng(seed: int, game_id: str, seat: int) -> random.Random:
    """A generator that depends only on (seed, game_id, seat): the same game gives the same choices whatever the
    transport or how many games run at once. (Python's hash() of a str changes per process, so not that.)"""
    digest = hashlib.sha256(f"{seed}\x00{game_id}\x00{seat}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class RandomBot(Bot):
    """A uniform random legal action."""

    name, version, author = "random", "1.0.0", "abluxx examples"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng: random.Random | None = None

    def decide(self, d: Decision) -> Answer:
        if self.rng is None:
            self.rng = game_rng(self.seed, d.game_id, d.seat)
        return self.rng.randrange(len(d.request.legal_actions))


def _best_market_card(d: Decision) -> Draw | None:
    """The market card the hand holds most of (a joker counts as the best), or None if it holds none of them."""
    best, best_key = None, (0, 0)
    for a in d.legal:
        if isinstance(a, Draw) and a.card is not None:
            held = 99 if a.card == JOKER else d.hand[a.card]
            if held and (held, a.card) > best_key:
                best, best_key = a, (held, a.card)
    return best


class GreedyBot(Bot):
    """A simple heuristic: play the biggest group, preferring ones that abluxx; take a group it can lay again;
    draw the market card it holds most of."""

    name, version, author = "greedy", "1.0.0", "abluxx examples"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def play(self, d: Decision) -> Answer:
        def key(g: Group) -> tuple:
            hit = sum(d.top_groups[v].count for v in d.victims_of(g))
            return (g.count + 2 * hit, g.value, -g.jokers)

        return max((a for a in d.legal if isinstance(a, Group)), key=key)

    def take_or_decline(self, d: Decision) -> Answer:
        group = d.top_groups[d.victim]
        held = d.jokers if group.value == JOKER else d.hand[group.value]
        return Choice.TAKE if held else Choice.DECLINE

    def reclaim_or_discard(self, d: Decision) -> Answer:
        return Choice.RECLAIM

    def draw(self, d: Decision) -> Answer:
        best = _best_market_card(d)
        if best is not None:
            return best
        return Draw(None) if Draw(None) in d.legal else 0

    def draw_one(self, d: Decision) -> Answer:
        best = _best_market_card(d)
        return best if best is not None else Choice.SKIP


class CounterBot(GreedyBot):
    """Placeholder until the counting bot lands."""

    name, version, author = "counter", "0.1.0", "abluxx examples"


REGISTRY: dict[str, Callable[[int], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "counter": CounterBot,
}
