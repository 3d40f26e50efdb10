"""The rules of Abluxxen as a pure state machine (docs/rules.md R1-R16).

``new_game`` deals a state from a deck order; ``apply(state, action)`` returns the next state and the events the
action produced. A state is never changed once made: ``apply`` copies it and replaces the containers it changes.
Every state carries its decision: ``kind`` (what is asked), ``seat`` (who answers) and ``legal`` (the legal
actions in canonical order). Building ``legal`` once per step, in ``apply``, keeps the per-decision cost low.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar, cast

from .cache import remember
from .cards import (
    CARD_CODES,
    EMPTY_COUNTS,
    HAND_SIZE,
    JOKER,
    MARKET_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUMBERS,
    card_name,
    check_deck,
    counts_of,
)

RULES_VERSION = "abluxxen-rules-1"
T = TypeVar("T")


class Kind(enum.Enum):
    """What a decision asks for."""

    PLAY = "play"  # R5: the active player lays a group
    TAKE_OR_DECLINE = "take_or_decline"  # R9: the active player, once for each victim
    RECLAIM_OR_DISCARD = "reclaim_or_discard"  # R9: the victim, after a decline
    DRAW = "draw"  # R10: the drawer, once for each card
    DRAW_ONE = "draw_one"  # option draw_one: the active player may draw one card or skip


class Choice(enum.Enum):
    """The answers that carry no cards."""

    TAKE = "take"
    DECLINE = "decline"
    RECLAIM = "reclaim"
    DISCARD = "discard"
    SKIP = "skip"  # option draw_one: draw nothing


class EndReason(enum.Enum):
    EMPTY_HAND = "empty_hand"  # R7
    EXHAUSTED = "exhausted"  # R12: pile and market both empty
    PILE_EMPTY = "pile_empty"  # option end_on_empty_pile


class Group(NamedTuple):
    """Cards laid in one play (R5): ``numbers`` cards of ``value`` plus ``jokers``.

    Jokers alone have value 14 (``JOKER``) and ``numbers == 0`` (R6). A play action is the group it lays.
    """

    value: int
    numbers: int
    jokers: int

    @property
    def count(self) -> int:  # type: ignore[override]  # the group's card count (R6); nobody calls tuple.count on it
        return self.numbers + self.jokers

    def __str__(self) -> str:
        if self.value == JOKER:
            return ",".join(["X"] * self.jokers)
        return ",".join([str(self.value)] * self.numbers + ["X"] * self.jokers)


class Draw(NamedTuple):
    """Draw one card (R10): ``card`` from the market, or the top of the pile when ``card`` is None."""

    card: int | None

    def __str__(self) -> str:
        return "pile" if self.card is None else f"market {card_name(self.card)}"


Action = Group | Draw | Choice


# Events. Each names the seats involved; ``Drew.card`` is None in a view where that card is hidden (R17).
# Frozen slotted dataclasses: an event equals only an event of the same type with the same fields, so
# ``Declined(1, 2) != TurnStarted(1, 2)`` (as tuples they were equal, and a test comparing event lists could pass
# with the wrong event).
@dataclass(frozen=True, slots=True)
class TurnStarted:
    seat: int
    turn: int


@dataclass(frozen=True, slots=True)
class Played:
    seat: int
    group: Group


@dataclass(frozen=True, slots=True)
class Abluxxed:
    seat: int  # the active player
    victim: int
    group: Group  # the victim's top group


@dataclass(frozen=True, slots=True)
class Taken:
    seat: int
    victim: int
    group: Group


@dataclass(frozen=True, slots=True)
class Declined:
    seat: int
    victim: int


@dataclass(frozen=True, slots=True)
class Reclaimed:
    seat: int  # the victim
    group: Group


@dataclass(frozen=True, slots=True)
class Discarded:
    seat: int  # the victim
    group: Group


@dataclass(frozen=True, slots=True)
class Drew:
    seat: int
    card: int | None  # None when hidden from the viewer
    from_market: bool


@dataclass(frozen=True, slots=True)
class Skipped:
    seat: int  # option draw_one: drew nothing


@dataclass(frozen=True, slots=True)
class Refilled:
    cards: tuple[int, ...]  # turned face up from the pile, in order


@dataclass(frozen=True, slots=True)
class GameOver:
    reason: EndReason
    scores: tuple[int, ...]


Event = (
    TurnStarted | Played | Abluxxed | Taken | Declined | Reclaimed | Discarded | Drew | Skipped | Refilled | GameOver
)


@dataclass(frozen=True, slots=True)
class Options:
    """Rule options (docs/rules.md, "Options"); both off by default."""

    draw_one: bool = False
    end_on_empty_pile: bool = False


class IllegalAction(ValueError):
    """An action that is not legal in the state it was applied to. The state is unchanged."""


# Every action object is built once; legal lists hold these shared objects.
_PLAYS = {(v, n, j): Group(v, n, j) for v in NUMBERS for n in range(1, 9) for j in range(0, 6)}
_JOKER_PLAYS = {j: Group(JOKER, 0, j) for j in range(1, 6)}
_DRAWS = {c: Draw(c) for c in CARD_CODES}
DRAW_PILE = Draw(None)
_TAKE_OR_DECLINE = (Choice.TAKE, Choice.DECLINE)
_RECLAIM_OR_DISCARD = (Choice.RECLAIM, Choice.DISCARD)
_PLAY_CACHE: dict[tuple[int, ...], tuple[Group, ...]] = {}


def legal_plays(hand: tuple[int, ...]) -> tuple[Group, ...]:
    """R5: every legal group from ``hand``, by value, then number cards, then jokers; jokers alone last."""
    plays = _PLAY_CACHE.get(hand)
    if plays is None:
        jokers = hand[JOKER]
        out = []
        for v in NUMBERS:
            for n in range(1, hand[v] + 1):
                for j in range(jokers + 1):
                    out.append(_PLAYS[v, n, j])
        for j in range(1, min(jokers, 5) + 1):
            out.append(_JOKER_PLAYS[j])
        plays = remember(_PLAY_CACHE, hand, tuple(out))
    return plays


def _draws(market: tuple[int, ...], pile_left: bool) -> tuple[Draw, ...]:
    """R10: each card value in the market (ascending, jokers last), then the pile."""
    out = [_DRAWS[c] for c in CARD_CODES if market[c]]
    if pile_left:
        out.append(DRAW_PILE)
    return tuple(out)


class State:
    """One moment of a game. Treat it as immutable; ``apply`` makes new ones."""

    __slots__ = (
        "abluxxed_any",
        "active",
        "deck",
        "discard",
        "end_reason",
        "hands",
        "kind",
        "legal",
        "market",
        "next_check",
        "options",
        "pile_pos",
        "played",
        "players",
        "seat",
        "stacks",
        "start_seat",
        "to_draw",
        "turn",
        "victim",
    )  # fmt: skip

    players: int
    options: Options
    deck: tuple[int, ...]  # the whole deal, in order; the pile is deck[pile_pos:], its top is deck[pile_pos]
    start_seat: int
    hands: tuple[tuple[int, ...], ...]  # counts per card code, one tuple per seat
    stacks: tuple[tuple[Group, ...], ...]  # bottom to top, one tuple per seat
    market: tuple[int, ...]  # counts per card code
    pile_pos: int
    discard: tuple[int, ...]  # counts per card code
    active: int  # whose turn it is
    turn: int  # 1 for the first turn
    kind: Kind | None  # None once the game is over
    seat: int  # who decides now; -1 once the game is over
    legal: tuple[Action, ...]
    played: Group | None  # the group laid this turn, while its abluxx check runs
    next_check: int  # R8: offset from the active seat of the next opponent to check
    victim: int  # the abluxxed seat being resolved, or -1
    to_draw: int  # R10: cards the drawer still has to draw
    abluxxed_any: bool  # this turn abluxxed someone (option draw_one)
    end_reason: EndReason | None

    def _copy(self) -> State:
        new = State.__new__(State)
        for name in State.__slots__:
            setattr(new, name, getattr(self, name))
        return new

    @property
    def over(self) -> bool:
        return self.kind is None

    @property
    def pile_size(self) -> int:
        return len(self.deck) - self.pile_pos

    def hand_size(self, seat: int) -> int:
        return sum(self.hands[seat])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in State.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<State turn={self.turn} active={self.active} kind={self.kind and self.kind.value} "
            f"seat={self.seat} pile={self.pile_size}>"
        )


def new_game(deck: Sequence[int], players: int, options: Options | None = None, start_seat: int = 0) -> State:
    """R3: deal ``deck`` (109 cards, top first) to ``players`` seats; ``start_seat`` plays first (R4).

    Seat i is dealt deck[13*i : 13*i+13]; the next 6 cards are the market; the rest is the pile, top first.
    """
    if not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {players}")
    if not isinstance(start_seat, int) or not 0 <= start_seat < players:
        raise ValueError(f"start_seat must be 0 to {players - 1}, got {start_seat}")
    deck = check_deck(deck)
    dealt = HAND_SIZE * players
    s = State.__new__(State)
    s.players = players
    s.options = options or Options()
    s.deck = deck
    s.start_seat = start_seat
    s.hands = tuple(counts_of(deck[HAND_SIZE * i : HAND_SIZE * (i + 1)]) for i in range(players))
    s.stacks = ((),) * players
    s.market = counts_of(deck[dealt : dealt + MARKET_SIZE])
    s.pile_pos = dealt + MARKET_SIZE
    s.discard = EMPTY_COUNTS
    s.active = start_seat
    s.turn = 1
    s.kind = Kind.PLAY
    s.seat = start_seat
    s.legal = legal_plays(s.hands[start_seat])
    s.played = None
    s.next_check = 1
    s.victim = -1
    s.to_draw = 0
    s.abluxxed_any = False
    s.end_reason = None
    return s


def _add(counts: tuple[int, ...], card: int, k: int) -> tuple[int, ...]:
    c = list(counts)
    c[card] += k
    return tuple(c)


def _add_group(counts: tuple[int, ...], g: Group, sign: int) -> tuple[int, ...]:
    c = list(counts)
    if g.numbers:
        c[g.value] += sign * g.numbers
    if g.jokers:
        c[JOKER] += sign * g.jokers
    return tuple(c)


def _set(items: tuple[T, ...], i: int, item: T) -> tuple[T, ...]:
    return (*items[:i], item, *items[i + 1 :])


def apply(state: State, action: Action) -> tuple[State, list[Event]]:
    """Apply a legal ``action``; return the next state and the events, in order. Raises IllegalAction.

    The action must be a Group, Draw or Choice with int fields: a tuple or a bool that merely compares equal to a
    legal action (``(5, True, 0)``, ``(None,)``) is refused, not swapped for it.
    """
    legal = state.legal
    try:
        found = legal[legal.index(action)]
    except ValueError:
        found = None
    if found is not action and (found is None or not _exactly(action, found)):
        raise IllegalAction(
            f"illegal action {_describe(action)} for seat {state.seat} "
            f"({state.kind.value if state.kind else 'game over'}): {_why_illegal(state, action)}"
        )
    action = found
    s = state._copy()
    events: list[Event] = []
    kind = s.kind
    # The kind fixes what the legal actions are: plays (a Group), choices, or draws (a Draw).
    if kind is Kind.PLAY:
        _play(s, cast(Group, action), events)
    elif kind is Kind.TAKE_OR_DECLINE:
        if action is Choice.TAKE:
            group = s.stacks[s.victim][-1]
            s.stacks = _set(s.stacks, s.victim, s.stacks[s.victim][:-1])
            s.hands = _set(s.hands, s.active, _add_group(s.hands[s.active], group, 1))
            events.append(Taken(s.active, s.victim, group))
            _start_draw(s, s.victim, group.count)
        else:
            events.append(Declined(s.active, s.victim))
            s.kind = Kind.RECLAIM_OR_DISCARD
            s.seat = s.victim
            s.legal = _RECLAIM_OR_DISCARD
    elif kind is Kind.RECLAIM_OR_DISCARD:
        group = s.stacks[s.victim][-1]
        s.stacks = _set(s.stacks, s.victim, s.stacks[s.victim][:-1])
        if action is Choice.RECLAIM:
            s.hands = _set(s.hands, s.victim, _add_group(s.hands[s.victim], group, 1))
            events.append(Reclaimed(s.victim, group))
            s.victim = -1
            _check_next(s, events)
        else:
            s.discard = _add_group(s.discard, group, 1)
            events.append(Discarded(s.victim, group))
            _start_draw(s, s.victim, group.count)
    elif kind is Kind.DRAW:
        if not _draw_card(s, cast(Draw, action), events):
            s.to_draw -= 1
            if s.to_draw:
                s.legal = _draws(s.market, s.pile_pos < len(s.deck))
            elif not _refill(s, events):
                s.victim = -1
                _check_next(s, events)
    else:  # Kind.DRAW_ONE
        if action is Choice.SKIP:
            events.append(Skipped(s.seat))
            _next_turn(s, events)
        elif not _draw_card(s, cast(Draw, action), events) and not _refill(s, events):
            _next_turn(s, events)
    return s, events


def _play(s: State, g: Group, events: list[Event]) -> None:
    a = s.active
    hand = _add_group(s.hands[a], g, -1)
    s.hands = _set(s.hands, a, hand)
    s.stacks = _set(s.stacks, a, s.stacks[a] + (g,))
    events.append(Played(a, g))
    if not any(hand):  # R7: the game ends at once, no abluxx check
        _end(s, EndReason.EMPTY_HAND, events)
        return
    s.played = g
    s.next_check = 1
    s.abluxxed_any = False
    _check_next(s, events)


def _check_next(s: State, events: list[Event]) -> None:
    """R8: check the remaining opponents in seat order; stop at the next one abluxxed."""
    n, a, g = s.players, s.active, s.played
    assert g is not None  # set by _play for the whole check
    count, value = g.count, g.value
    off = s.next_check
    while off < n:
        opp = (a + off) % n
        off += 1
        stack = s.stacks[opp]
        if stack:
            top = stack[-1]
            if top.numbers + top.jokers == count and value > top.value:
                s.next_check = off
                s.victim = opp
                s.abluxxed_any = True
                s.kind = Kind.TAKE_OR_DECLINE
                s.seat = a
                s.legal = _TAKE_OR_DECLINE
                events.append(Abluxxed(a, opp, top))
                return
    s.next_check = n
    if s.options.draw_one and not s.abluxxed_any:
        s.kind = Kind.DRAW_ONE
        s.seat = a
        s.legal = (*_draws(s.market, s.pile_pos < len(s.deck)), Choice.SKIP)
        return
    _next_turn(s, events)


def _next_turn(s: State, events: list[Event]) -> None:
    """R13."""
    a = (s.active + 1) % s.players
    s.active = a
    s.turn += 1
    s.kind = Kind.PLAY
    s.seat = a
    s.played = None
    s.victim = -1
    s.legal = legal_plays(s.hands[a])
    events.append(TurnStarted(a, s.turn))


def _start_draw(s: State, seat: int, n: int) -> None:
    """R10: ``seat`` must draw ``n`` cards, one decision each."""
    s.kind = Kind.DRAW
    s.seat = seat
    s.to_draw = n
    s.legal = _draws(s.market, s.pile_pos < len(s.deck))


def _draw_card(s: State, d: Draw, events: list[Event]) -> bool:
    """Move one card to the deciding seat's hand. True if that ended the game (R12, end_on_empty_pile)."""
    seat = s.seat
    if d.card is None:
        card = s.deck[s.pile_pos]
        s.pile_pos += 1
    else:
        card = d.card
        s.market = _add(s.market, card, -1)
    s.hands = _set(s.hands, seat, _add(s.hands[seat], card, 1))
    events.append(Drew(seat, card, d.card is not None))
    pile_empty = s.pile_pos == len(s.deck)
    if pile_empty and not any(s.market):
        _end(s, EndReason.EXHAUSTED, events)
        return True
    if pile_empty and s.options.end_on_empty_pile:
        _end(s, EndReason.PILE_EMPTY, events)
        return True
    return False


def _refill(s: State, events: list[Event]) -> bool:
    """R11: fill the market back to 6 from the pile. True if that ended the game (end_on_empty_pile)."""
    s.to_draw = 0
    need = MARKET_SIZE - sum(s.market)
    pos = s.pile_pos
    take = min(need, len(s.deck) - pos)
    if take > 0:
        cards = s.deck[pos : pos + take]
        market = list(s.market)
        for c in cards:
            market[c] += 1
        s.market = tuple(market)
        s.pile_pos = pos + take
        events.append(Refilled(cards))
        if s.options.end_on_empty_pile and s.pile_pos == len(s.deck):
            _end(s, EndReason.PILE_EMPTY, events)
            return True
    return False


def _end(s: State, reason: EndReason, events: list[Event]) -> None:
    s.kind = None
    s.seat = -1
    s.legal = ()
    s.victim = -1
    s.to_draw = 0
    s.end_reason = reason
    events.append(GameOver(reason, scores(s)))


def scores(s: State) -> tuple[int, ...]:
    """R14: +1 for each card in the stack, -1 for each card in hand."""
    return tuple(sum(g.numbers + g.jokers for g in s.stacks[i]) - sum(s.hands[i]) for i in range(s.players))


def _exactly(action: object, legal: Action) -> bool:
    """``action``, equal to ``legal``, also has its type and its fields' types (an int, not a bool or a float)."""
    if type(action) is not type(legal):
        return False
    if isinstance(action, Group | Draw) and isinstance(legal, Group | Draw):
        return all(type(x) is type(y) for x, y in zip(action, legal, strict=True))
    return True  # a Choice: enum members are singletons


def _describe(action: object) -> str:
    if isinstance(action, Group):
        return f"play {action}" if action.count else "play of no cards"
    if isinstance(action, Draw):
        return f"draw from {action}"
    if isinstance(action, Choice):
        return action.value
    return repr(action)


def _why_illegal(s: State, action: object) -> str:
    """A reason, in the rules' words, why ``action`` is not in ``s.legal``."""
    if s.kind is None:
        return "the game is over"
    expected = {
        Kind.PLAY: "a group to play",
        Kind.TAKE_OR_DECLINE: "take or decline",
        Kind.RECLAIM_OR_DISCARD: "reclaim or discard",
        Kind.DRAW: "a market card or the pile",
        Kind.DRAW_ONE: "a market card, the pile, or skip",
    }[s.kind]
    if type(action) not in (Group, Draw, Choice):
        return f"expected {expected} as a Group, Draw or Choice, got a {type(action).__name__}"
    if s.kind is Kind.PLAY and isinstance(action, Group):
        hand = s.hands[s.seat]
        v, n, j = action
        if type(v) is not int or type(n) is not int or type(j) is not int or n < 0 or j < 0:
            return "value, numbers and jokers must be whole numbers >= 0"
        if n + j == 0:
            return "a group needs at least one card (R5)"
        if v == JOKER and n:
            return "a group of jokers alone has value 14 and no number cards (R6)"
        if v == JOKER and j > 5:
            return "jokers alone form groups of 1 to 5 (R5b)"
        if v != JOKER and (v not in NUMBERS or n == 0):
            return "a group with number cards has value 1 to 13 and at least one number card (R5a)"
        if v != JOKER and n > hand[v]:
            return f"hand holds {hand[v]} card(s) of {v}, the group needs {n}"
        if j > hand[JOKER]:
            return f"hand holds {hand[JOKER]} joker(s), the group needs {j}"
        return "not a legal group (R5)"
    if s.kind in (Kind.DRAW, Kind.DRAW_ONE) and isinstance(action, Draw):
        if action.card is None:
            return "the pile is empty"
        if type(action.card) is not int:
            return f"a card is an int 1 to 14 or None (the pile), got {action.card!r}"
        if action.card not in CARD_CODES:
            return f"no such card {action.card!r}"
        return f"the market holds no {card_name(action.card)}"
    return f"expected {expected}"
