"""The rules' vocabulary (docs/rules.md): what a decision asks (``Kind``), the actions that answer it (``Group``,
``Draw``, ``Choice``), the events a step produces, why a game ends, and the rule options."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple

from .cards import JOKER, card_name


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
