"""Why an action is illegal, in the rules' words: what ``apply`` says when it refuses one."""

from __future__ import annotations

from .actions import Action, Choice, Draw, Group, Kind
from .cards import CARD_CODES, JOKER, NUMBERS, card_name
from .state import State


def exactly(action: object, legal: Action) -> bool:
    """``action``, equal to ``legal``, also has its type and its fields' types (an int, not a bool or a float)."""
    if type(action) is not type(legal):
        return False
    if isinstance(action, Group | Draw) and isinstance(legal, Group | Draw):
        return all(type(x) is type(y) for x, y in zip(action, legal, strict=True))
    return True  # a Choice: enum members are singletons


def describe(action: object) -> str:
    if isinstance(action, Group):
        return f"play {action}" if action.count else "play of no cards"
    if isinstance(action, Draw):
        return f"draw from {action}"
    if isinstance(action, Choice):
        return action.value
    return repr(action)


def why_illegal(s: State, action: object) -> str:
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
