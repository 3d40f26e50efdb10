"""Events and actions in words, for terminals, logs and the replay viewer."""

from __future__ import annotations

from collections.abc import Sequence

from .actions import (
    Abluxxed,
    Action,
    Declined,
    Discarded,
    Draw,
    Drew,
    EndReason,
    Event,
    GameOver,
    Group,
    Played,
    Reclaimed,
    Refilled,
    Skipped,
    Taken,
    TurnStarted,
)
from .cards import card_name

# Why a game ended, in plain words (R7, R12, option end_on_empty_pile).
END_WORDS = {
    EndReason.EMPTY_HAND: "a player laid their last card",
    EndReason.EXHAUSTED: "the pile and the market ran out",
    EndReason.PILE_EMPTY: "the pile ran out",
}


def say_action(action: Action) -> str:
    if isinstance(action, Group):
        return f"play {action}"
    if isinstance(action, Draw):
        return "draw from the pile" if action.card is None else f"draw {card_name(action.card)} from the market"
    return action.value


def say_event(event: Event, names: Sequence[str] | None = None) -> str:
    """One line for ``event``; ``names`` maps a seat to a player's name (default "seat N")."""

    def who(seat: int) -> str:
        return names[seat] if names else f"seat {seat}"

    match event:
        case TurnStarted(seat, turn):
            return f"turn {turn}: {who(seat)} to play"
        case Played(seat, group):
            return f"{who(seat)} plays {group}"
        case Abluxxed(seat, victim, group):
            return f"{who(seat)} abluxxes {who(victim)}'s {group}"
        case Taken(seat, victim, group):
            return f"{who(seat)} takes {group} from {who(victim)}"
        case Declined(seat, victim):
            return f"{who(seat)} declines {who(victim)}'s group"
        case Reclaimed(seat, group):
            return f"{who(seat)} reclaims {group}"
        case Discarded(seat, group):
            return f"{who(seat)} discards {group}"
        case Drew(seat, card, from_market):
            what = "a card" if card is None else card_name(card)  # None: a pile card hidden from the reader
            return f"{who(seat)} draws {what} from the {'market' if from_market else 'pile'}"
        case Skipped(seat):
            return f"{who(seat)} draws nothing"
        case Refilled(cards):
            return "market refilled with " + " ".join(card_name(c) for c in cards)
        case GameOver(reason, scores):
            return f"game over: {END_WORDS[reason]}; scores " + ", ".join(f"{who(i)} {x}" for i, x in enumerate(scores))
    return repr(event)
