"""Replay a game record through the engine into drawable frames, for the viewer.

Frame 0 is the deal; each later frame is the table just after one recorded decision. A frame carries everything a
page needs to draw that moment (every hand, every stack, the market, the pile size, the discard pile, the scores)
and says in words what happened. The page chooses which hands to show, so a frame is the full truth and the point
of view is a matter of display (the record itself reveals the deal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from referee.engine import Drew, GameOver, State, cards_of, scores
from referee.engine.words import END_WORDS, say_action, say_event
from referee.proto.abluxxen.v1 import game_pb2, record_pb2
from referee.records import FAULT_WORDS, VerifyError, check_footer, start_state
from referee.records import replay as replay_record
from referee.wire import END_FROM_PB


class ReplayError(ValueError):
    """A record that does not replay: it names the decision and what went wrong."""


@dataclass
class Frame:
    """The table after one decision (or the deal, for frame 0); the page steps through the frames."""

    turn: int  # the turn the decision belongs to
    active: int  # whose turn it is
    decision: dict[str, Any] | None  # None for the deal
    events: list[dict[str, Any]]  # each {"text", and for a pile draw "hidden" (as others see it) and "seat"}
    hands: list[list[int]]
    stacks: list[list[list[int]]]  # per seat, bottom group first, each group [value, numbers, jokers]
    market: list[int]
    pile: int
    discard: list[int]
    scores: list[int]
    hand_sizes: list[int]
    next_seat: int  # who decides next, -1 once over
    next_kind: str  # what they decide ("play", "draw", ...), "" once over
    victim: int  # the abluxxed seat being resolved, or -1

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "active": self.active,
            "d": self.decision,
            "ev": self.events,
            "hands": self.hands,
            "stacks": self.stacks,
            "market": self.market,
            "pile": self.pile,
            "discard": self.discard,
            "scores": self.scores,
            "sizes": self.hand_sizes,
            "next": self.next_seat,
            "nextKind": self.next_kind,
            "victim": self.victim,
        }


@dataclass
class Replay:
    """A record replayed for the viewer: what is fixed for the game, and the frames."""

    game_id: str
    tournament_id: str
    names: list[str]
    players: list[dict[str, Any]]
    options: dict[str, bool]
    start_seat: int
    seed: int
    rules_version: str
    complete: bool
    end_reason: str  # in words; "" when the record is incomplete
    final_scores: list[int]  # the footer's, or the last step's for an incomplete record
    places: list[int]
    retired: list[int]
    frames: list[Frame] = field(default_factory=list)

    @property
    def turns(self) -> int:
        return self.frames[-1].turn if self.frames else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "game": {
                "id": self.game_id,
                "tournament": self.tournament_id,
                "players": self.players,
                "options": self.options,
                "startSeat": self.start_seat,
                "seed": self.seed,
                "rules": self.rules_version,
                "complete": self.complete,
                "endReason": self.end_reason,
                "scores": self.final_scores,
                "places": self.places,
                "retired": self.retired,
            },
            "steps": [f.to_json() for f in self.frames],  # the page's name for them
        }


def _snapshot(state: State) -> dict[str, Any]:
    return {
        "hands": [cards_of(h) for h in state.hands],
        "stacks": [[list(g) for g in st] for st in state.stacks],
        "market": cards_of(state.market),
        "pile": state.pile_size,
        "discard": cards_of(state.discard),
        "scores": list(scores(state)),
        "hand_sizes": [sum(h) for h in state.hands],
        "next_seat": state.seat,
        "next_kind": state.kind.value if state.kind else "",
        "victim": state.victim,
    }


def _event_words(events, names: list[str]) -> list[dict[str, Any]]:
    out = []
    for e in events:
        item: dict[str, Any] = {"text": say_event(e, names)}
        if type(e) is Drew and not e.from_market:
            # R17: only the drawer sees which card came from the pile.
            item["hidden"] = say_event(Drew(e.seat, None, False), names)
            item["seat"] = e.seat
        if type(e) is GameOver:
            item["end"] = True
        out.append(item)
    return out


def build_replay(record: record_pb2.GameRecord) -> Replay:
    """The viewer's replay of ``record``: one frame per step of ``referee.records.replay``, which re-runs every
    decision through the engine and checks it.

    Raises ReplayError naming the first decision that does not fit, or a footer that differs from the replay.
    An incomplete record (no footer) replays as far as it goes.
    """
    h = record.header
    try:
        state = start_state(h)
    except VerifyError as e:
        raise ReplayError(f"the record's header does not start a game: {e}") from None
    names = [p.name or f"seat {p.seat}" for p in h.players]
    out = Replay(
        game_id=h.game_id,
        tournament_id=h.tournament_id,
        names=names,
        players=[
            {"seat": p.seat, "name": names[i], "version": p.version, "author": p.author, "address": p.address}
            for i, p in enumerate(h.players)
        ],
        options={"draw_one": h.options.draw_one, "end_on_empty_pile": h.options.end_on_empty_pile},
        start_seat=h.start_seat,
        seed=h.seed,
        rules_version=h.rules_version,
        complete=record.complete and record.HasField("footer"),
        end_reason="",
        final_scores=[],
        places=[],
        retired=[],
    )
    out.frames.append(Frame(turn=1, active=state.active, decision=None, events=[], **_snapshot(state)))
    retired: frozenset[int] = frozenset()
    try:
        for step in replay_record(record):
            d, before = step.decision, step.before
            assert before.kind is not None  # a decision is asked while the game goes on
            decision = {
                "seq": d.seq,
                "seat": d.seat,
                "kind": before.kind.value,
                "action": say_action(step.action),
                "by": "fallback" if d.chosen_by == record_pb2.CHOOSER_FALLBACK else "bot",
                "fault": FAULT_WORDS.get(d.fault, ""),
                "detail": d.fault_detail,
                "retired": d.retired,
                "botMs": round(d.bot_us / 1000, 1),
            }
            events = _event_words(step.events, names)
            out.frames.append(
                Frame(turn=before.turn, active=before.active, decision=decision, events=events, **_snapshot(step.after))
            )
            state, retired = step.after, step.retired
        if out.complete:
            check_footer(record, state, retired)
    except VerifyError as e:
        raise ReplayError(str(e)) from None
    if out.complete:
        f = record.footer
        out.end_reason = END_WORDS[END_FROM_PB[f.reason]] if f.reason in END_FROM_PB else ""
        if f.reason == game_pb2.END_REASON_EMPTY_HAND and record.decisions:  # R7: who laid their last card
            out.end_reason = f"{names[record.decisions[-1].seat]} laid their last card"
        out.final_scores = list(f.scores)
        out.places = list(f.places)
        out.retired = list(f.retired)
    else:
        out.final_scores = out.frames[-1].scores
    return out
