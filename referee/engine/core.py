"""The rules of Abluxxen as a pure state machine (docs/rules.md R1-R16).

``new_game`` deals a state from a deck order; ``apply(state, action)`` returns the next state and the events the
action produced. A state is never changed once made: ``apply`` copies it and replaces the containers it changes.
Every state carries its decision: ``kind`` (what is asked), ``seat`` (who answers) and ``legal`` (the legal
actions in canonical order). Building ``legal`` once per step, in ``apply``, keeps the per-decision cost low.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from operator import getitem
from typing import TypeVar, cast

from .actions import (
    Abluxxed,
    Action,
    Choice,
    Declined,
    Discarded,
    Draw,
    Drew,
    EndReason,
    Event,
    GameOver,
    Group,
    IllegalAction,
    Kind,
    Options,
    Played,
    Reclaimed,
    Refilled,
    Skipped,
    Taken,
    TurnStarted,
)
from .cards import (
    CARD_CODES,
    COPIES_PER_NUMBER,
    EMPTY_COUNTS,
    HAND_SIZE,
    JOKER,
    JOKERS_IN_DECK,
    MARKET_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUMBERS,
    check_deck,
    counts_of,
)
from .illegal import describe, exactly, why_illegal
from .state import State

RULES_VERSION = "abluxxen-rules-1"
T = TypeVar("T")


# Every action object is built once; legal lists hold these shared objects.
_PLAYS = {(v, n, j): Group(v, n, j) for v in NUMBERS for n in range(1, 9) for j in range(0, 6)}
_JOKER_PLAYS = {j: Group(JOKER, 0, j) for j in range(1, 6)}
_DRAWS = {c: Draw(c) for c in CARD_CODES}
DRAW_PILE = Draw(None)
ALL_DRAWS = (*_DRAWS.values(), DRAW_PILE)
_TAKE_OR_DECLINE = (Choice.TAKE, Choice.DECLINE)
_RECLAIM_OR_DISCARD = (Choice.RECLAIM, Choice.DISCARD)
# PLAY_RUNS[j][i][c]: the plays a hand with j jokers and c cards of code i adds, in legal_plays' order: for a number
# i, its groups of 1 to c cards with 0 to j jokers; for the joker code, its groups of jokers alone. Built once, so a
# hand's plays are joined from 15 of them and nothing is kept per hand. (A memo of every hand's plays held tuples
# of Group, which the collector walks: a 64-game referee grew it to 50 000 entries a minute, and collecting them
# stalled the loop for 70-80 ms; docs/match.md, "The collector".)
PLAY_RUNS = tuple(
    (
        ((),) * (COPIES_PER_NUMBER + 1),
        *(
            tuple(
                tuple(_PLAYS[v, n, k] for n in range(1, c + 1) for k in range(j + 1))
                for c in range(COPIES_PER_NUMBER + 1)
            )
            for v in NUMBERS
        ),
        tuple(tuple(_JOKER_PLAYS[k] for k in range(1, min(c, j) + 1)) for c in range(JOKERS_IN_DECK + 1)),
    )
    for j in range(JOKERS_IN_DECK + 1)
)


def legal_plays(hand: tuple[int, ...]) -> tuple[Group, ...]:
    """R5: every legal group from ``hand``, by value, then number cards, then jokers; jokers alone last."""
    return tuple(chain.from_iterable(map(getitem, PLAY_RUNS[hand[JOKER]], hand)))


def _draws(market: tuple[int, ...], pile_left: bool) -> tuple[Draw, ...]:
    """R10: each card value in the market (ascending, jokers last), then the pile."""
    out = [_DRAWS[c] for c in CARD_CODES if market[c]]
    if pile_left:
        out.append(DRAW_PILE)
    return tuple(out)


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
    if found is not action and (found is None or not exactly(action, found)):
        raise IllegalAction(
            f"illegal action {describe(action)} for seat {state.seat} "
            f"({state.kind.value if state.kind else 'game over'}): {why_illegal(state, action)}"
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
