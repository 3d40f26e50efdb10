"""The pure rules engine (docs/rules.md). No I/O, no clock, no logging, no gRPC."""

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
from .cards import DECK_SIZE, JOKER, card_name, cards_of, check_deck, counts_of, deck_from_seed, full_deck
from .core import ALL_DRAWS, DRAW_PILE, PLAY_RUNS, RULES_VERSION, apply, legal_plays, new_game, scores
from .state import State
from .view import View, digest, event_for, match_scores, placings, public_view, round_start_seat, view

__all__ = [
    "ALL_DRAWS", "DECK_SIZE", "DRAW_PILE", "JOKER", "PLAY_RUNS", "RULES_VERSION", "Abluxxed", "Action", "Choice",
    "Declined", "Discarded", "Draw", "Drew", "EndReason", "Event", "GameOver", "Group", "IllegalAction", "Kind",
    "Options", "Played", "Reclaimed", "Refilled", "Skipped", "State", "Taken", "TurnStarted", "View", "apply",
    "card_name", "cards_of", "check_deck", "counts_of", "deck_from_seed", "digest", "event_for", "full_deck",
    "legal_plays", "match_scores", "new_game", "placings", "public_view", "round_start_seat", "scores", "view",
]  # fmt: skip
