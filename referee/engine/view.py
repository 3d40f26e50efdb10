"""What each seat may see (R17), results (R14-R16) and the state digest."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Sequence
from typing import NamedTuple

from .actions import Action, Choice, Drew, EndReason, Event, Group, Kind, Options
from .core import scores
from .state import State


class View(NamedTuple):
    """One seat's information set (R17), or the public view when ``seat`` is None.

    Two states that differ only in what ``seat`` cannot see give equal views.
    """

    seat: int | None
    players: int
    options: Options
    turn: int
    active: int
    kind: Kind | None  # None once the game is over
    deciding: int  # the seat that decides now, -1 once over
    victim: int  # the abluxxed seat being resolved, or -1
    to_draw: int  # cards the drawer still has to draw
    played: Group | None  # the group the active player laid this turn
    hand: tuple[int, ...] | None  # own hand as counts per card code; None in the public view
    hand_sizes: tuple[int, ...]
    stacks: tuple[tuple[Group, ...], ...]
    market: tuple[int, ...]
    discard: tuple[int, ...]
    pile_size: int
    scores: tuple[int, ...]
    legal: tuple[Action, ...]  # only in the view of the seat that decides
    end_reason: EndReason | None


def view(state: State, seat: int | None) -> View:
    """The view of ``seat``, or the public (spectator) view for None."""
    if seat is not None and not 0 <= seat < state.players:
        raise ValueError(f"seat must be 0 to {state.players - 1}, got {seat}")
    return View(
        seat=seat,
        players=state.players,
        options=state.options,
        turn=state.turn,
        active=state.active,
        kind=state.kind,
        deciding=state.seat,
        victim=state.victim,
        to_draw=state.to_draw,
        played=state.played,
        hand=None if seat is None else state.hands[seat],
        hand_sizes=tuple(sum(h) for h in state.hands),
        stacks=state.stacks,
        market=state.market,
        discard=state.discard,
        pile_size=state.pile_size,
        scores=scores(state),
        legal=state.legal if seat is not None and seat == state.seat else (),
        end_reason=state.end_reason,
    )


def public_view(state: State) -> View:
    return view(state, None)


def event_for(event: Event, seat: int | None) -> Event:
    """``event`` as ``seat`` may see it (None: a spectator). A card drawn from the pile is seen only by its drawer."""
    if type(event) is Drew and not event.from_market and event.seat != seat:
        return Drew(event.seat, None, False)
    return event


def placings(final_scores: Sequence[int], hand_sizes: Sequence[int], retired: Collection[int] = ()) -> tuple[int, ...]:
    """R15: place 1 is best. Higher score first, then fewer cards in hand; players still equal share a place.

    Seats in ``retired`` (a bot the fallback had to finish for) place below every other seat.
    """
    keys = [(i in retired, -final_scores[i], hand_sizes[i]) for i in range(len(final_scores))]
    return tuple(1 + sum(k < keys[i] for k in keys) for i in range(len(keys)))


def match_scores(rounds: Iterable[Sequence[int]]) -> tuple[int, ...]:
    """R16: the scores of several rounds, summed per seat."""
    return tuple(sum(col) for col in zip(*rounds, strict=True))


def round_start_seat(first: int, round_index: int, players: int) -> int:
    """R16: the start seat moves one seat on each round."""
    return (first + round_index) % players


def digest(state: State) -> str:
    """SHA-256 (hex) of a canonical encoding of the full state, hidden parts included."""
    parts = (
        state.players,
        int(state.options.draw_one),
        int(state.options.end_on_empty_pile),
        state.deck,
        state.start_seat,
        state.hands,
        tuple(tuple(tuple(g) for g in st) for st in state.stacks),
        state.market,
        state.pile_pos,
        state.discard,
        state.active,
        state.turn,
        state.kind.value if state.kind else "over",
        state.seat,
        tuple(_action_key(a) for a in state.legal),
        tuple(state.played) if state.played else None,
        state.next_check,
        state.victim,
        state.to_draw,
        int(state.abluxxed_any),
        state.end_reason.value if state.end_reason else None,
    )
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _action_key(a: Action) -> object:
    return a.value if isinstance(a, Choice) else tuple(a)
