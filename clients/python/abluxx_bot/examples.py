"""Four example bots: ``random``, ``greedy``, ``counter`` and the deliberately weak ``hoard``. Serve one with
``abluxx bot NAME --port P``.

``REGISTRY`` maps each name to ``factory(seed) -> Bot``; ``factory(spec)`` reads a policy spec, a name or a noisy
version of one (``greedy+eps0.2``: greedy, but a uniform random legal action on 20% of its decisions); the match
runner uses it for built-in policies.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable

from referee.engine import JOKER, Choice, Draw, Drew, Group, Played, Reclaimed, Taken

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
            hit = g.count * len(d.victims_of(g))  # cards it abluxxes: each victim's top group is as big as g
            return (g.count + 2 * hit, g.value, -g.jokers)

        return max((a for a in d.legal if isinstance(a, Group)), key=key)

    def take_or_decline(self, d: Decision) -> Answer:
        group = d.victim_group
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


class CounterBot(Bot):
    """A stronger heuristic that counts cards.

    What it knows about the game (R14 scores a card +1 in a stack and -1 in hand): a card is worth laying, so
    taking a group is usually good, since it lays those cards again later, in bigger groups; what loses is a group
    abluxxed off the stack, or cards still in hand when someone else empties theirs (R7).

    - It tracks the cards it has not seen (the deck less its hand, every stack, the market, the discard pile and
      the cards it knows each opponent holds: groups they took or reclaimed, market cards they drew) from the
      events, and samples each opponent's unknown cards from them to estimate the chance that someone lays
      their whole hand next turn (R7): the game is then near its end, and it declines takes and draws nothing
      it need not draw.
    - It plays its biggest group, counting the groups it abluxxes (which it will take) double and jokers half
      (kept, they make a later group bigger); a play that empties its hand ends the game and always comes first.
    - It takes a group it can lay again or of 2+ cards; when abluxxed and declined it discards (and draws the
      market cards that make its groups bigger) rather than reclaim a group that has just lost.

    Measured and dropped: weighing each play by its estimated chance of being abluxxed (from the same samples)
    scored lower at every weight tried; being abluxxed costs less than it seems, since the cards come back.
    """

    name, version, author = "counter", "1.0.0", "abluxx examples"

    SAMPLES = 16  # samples of each opponent's unknown cards
    HIT_WEIGHT = 2.0  # value of each card of a group this play abluxxes (it will take them)
    JOKER_WEIGHT = 0.5  # a joker laid counts this much (kept, it makes a later group bigger)
    NEAR_END = 0.3  # the game is near its end when an opponent may empty their hand next turn this likely

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng: random.Random | None = None
        self.known: list[list[int]] = []  # per seat: cards known to be in that hand (own seat unused)

    def _see(self, d: Decision) -> None:
        if self.rng is None:
            self.rng = game_rng(self.seed, d.game_id, d.seat)
            self.known = [[0] * 15 for _ in range(d.players)]
        for e in d.events:
            if isinstance(e, (Taken, Reclaimed)):
                _add_group(self.known[e.seat], e.group, 1)
            elif isinstance(e, Played):
                _add_group(self.known[e.seat], e.group, -1)
            elif isinstance(e, Drew) and e.from_market and e.card is not None:
                self.known[e.seat][e.card] += 1

    def unseen(self, d: Decision) -> list[int]:
        """Counts of the cards this seat cannot place: in the pile or in an opponent's unknown cards."""
        left = [0] + [8] * 13 + [5]
        for c in range(1, 15):
            left[c] -= d.hand[c] + d.market[c] + d.discard[c]
        for st in d.stacks:
            for g in st:
                _add_group(left, g, -1)
        for o in d.opponents:
            for c in range(1, 15):
                left[c] -= self.known[o][c]
        return [max(0, x) for x in left]

    def _near_end(self, d: Decision) -> bool:
        return self.end_chance(d) >= self.NEAR_END

    def end_chance(self, d: Decision) -> float:
        """The chance that some opponent can lay their whole hand as one group (R7) on their next turn, from
        the cards known in their hand and samples of the unseen cards for the rest."""
        assert self.rng is not None  # _see made it
        rng, pool, stay = self.rng, None, 1.0
        for o in d.opponents:
            size = d.hand_sizes[o]
            if size == 0 or size > 13:
                continue
            known = self.known[o]
            unknown = max(0, size - sum(known))
            if unknown == 0:
                stay *= 0.0 if _one_group(known) else 1.0
                continue
            if pool is None:
                pool = [c for c, k in enumerate(self.unseen(d)) for _ in range(k)]
            out = 0
            for _ in range(self.SAMPLES):
                hand = list(known)
                for c in rng.sample(pool, min(unknown, len(pool))):
                    hand[c] += 1
                out += _one_group(hand)
            stay *= 1 - out / self.SAMPLES
        return 1 - stay

    def play(self, d: Decision) -> Answer:
        self._see(d)
        plays = [a for a in d.legal if isinstance(a, Group)]
        for g in plays:
            if g.count == d.hand_size:
                return g  # R7: laying the whole hand ends the game with nothing left in it

        def value(g: Group) -> float:
            hit = g.count * len(d.victims_of(g))  # cards it abluxxes: each victim's top group is as big as g
            return g.numbers + self.JOKER_WEIGHT * g.jokers + self.HIT_WEIGHT * hit

        return max(plays, key=lambda g: (value(g), g.value, -g.jokers))

    def take_or_decline(self, d: Decision) -> Answer:
        self._see(d)
        if self._near_end(d):
            return Choice.DECLINE
        g = d.victim_group
        held = d.jokers if g.value == JOKER else d.hand[g.value]
        return Choice.TAKE if held or g.count >= 2 else Choice.DECLINE

    def reclaim_or_discard(self, d: Decision) -> Answer:
        self._see(d)
        return Choice.DISCARD

    def draw(self, d: Decision) -> Answer:
        self._see(d)
        best = _best_market_card(d)
        if best is not None:
            return best
        return Draw(None) if Draw(None) in d.legal else 0

    def draw_one(self, d: Decision) -> Answer:
        self._see(d)
        if self._near_end(d):
            return Choice.SKIP
        best = _best_market_card(d)
        return best if best is not None else Choice.SKIP

    def on_game_over(self, notice) -> None:
        self.known = []


class HoardBot(Bot):
    """A deliberately weak policy, weaker than random: the floor of a graded field (counter > greedy > random >
    hoard). It plays its smallest group (fewest cards, then lowest value), so its hand empties slowly; takes and
    reclaims every group; and draws a market card it holds none of (never a joker) when there is one, else the
    pile. So it ends holding many cards that do not go together, each -1 (R14)."""

    name, version, author = "hoard", "1.0.0", "abluxx examples"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def play(self, d: Decision) -> Answer:
        return min((a for a in d.legal if isinstance(a, Group)), key=lambda g: (g.count, g.value, -g.jokers))

    def take_or_decline(self, d: Decision) -> Answer:
        return Choice.TAKE

    def reclaim_or_discard(self, d: Decision) -> Answer:
        return Choice.RECLAIM

    def draw(self, d: Decision) -> Answer:
        return _useless_draw(d, otherwise=0)  # the first legal action: with the pile empty, a market card

    def draw_one(self, d: Decision) -> Answer:
        return _useless_draw(d, otherwise=Choice.SKIP)


def _useless_draw(d: Decision, otherwise: Answer) -> Answer:
    """The lowest market card the hand holds none of (never a joker); else the pile; else ``otherwise``."""
    useless = [a for a in d.legal if isinstance(a, Draw) and a.card not in (None, JOKER) and not d.hand[a.card]]
    if useless:
        return min(useless, key=lambda a: a.card or 0)
    return Draw(None) if Draw(None) in d.legal else otherwise


def _add_group(counts: list[int], g: Group, sign: int) -> None:
    if g.numbers:
        counts[g.value] = max(0, counts[g.value] + sign * g.numbers)
    if g.jokers:
        counts[JOKER] = max(0, counts[JOKER] + sign * g.jokers)


def _one_group(hand: list[int]) -> bool:
    """Whether ``hand`` is one legal group (R5): one number plus jokers, or 1 to 5 jokers alone."""
    values = sum(1 for v in range(1, 14) if hand[v])
    return values == 1 or (values == 0 and 1 <= hand[JOKER] <= 5)


REGISTRY: dict[str, Callable[[int], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "counter": CounterBot,
    "hoard": HoardBot,
}


class NoisyBot(Bot):
    """``inner``, but with chance ``eps`` a uniform random legal action instead of its choice (``greedy+eps0.2``).
    The inner bot sees every decision (counter tracks the game through them) and its choice is then replaced; the
    coin and the random action come from their own generator of (seed, game id, seat), so a seeded noisy bot
    plays the same game the same way, and two seeds give two different games even of greedy, which ignores its
    seed (a duel's A/A test needs that variance)."""

    def __init__(self, inner: Bot, eps: float, seed: int) -> None:
        self.inner, self.eps, self.seed = inner, eps, seed
        self.name, self.version, self.author = f"{inner.name}+eps{eps:g}", inner.version, inner.author
        self.rng: random.Random | None = None

    def on_start(self, start) -> None:
        self.inner.on_start(start)

    def on_game_over(self, notice) -> None:
        self.inner.on_game_over(notice)

    def decide(self, d: Decision) -> Answer:
        choice = self.inner.decide(d)
        if self.rng is None:
            self.rng = game_rng(self.seed, f"{d.game_id}\x00noise", d.seat)
        if self.rng.random() < self.eps:
            return self.rng.randrange(len(d.request.legal_actions))
        return choice


_NOISY = re.compile(r"(?P<base>[a-z]+)\+eps(?P<eps>[0-9]*\.?[0-9]+)")


def factory(spec: str) -> Callable[[int], Bot] | None:
    """The ``factory(seed) -> Bot`` of a policy spec: a REGISTRY name, or ``NAME+epsP`` (P from 0 to 1, the chance
    of a uniform random legal action at each decision); None when ``spec`` is neither."""
    if spec in REGISTRY:
        return REGISTRY[spec]
    m = _NOISY.fullmatch(spec)
    if m is None or m["base"] not in REGISTRY or not 0 <= float(m["eps"]) <= 1:
        return None
    inner, eps = REGISTRY[m["base"]], float(m["eps"])
    return lambda seed: NoisyBot(inner(seed), eps, seed)
