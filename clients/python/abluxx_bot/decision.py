"""``Decision``: one DecisionRequest in the engine's words, for a bot to read.

Everything is computed on first use and then kept, so a bot pays only for what it reads.
"""

from __future__ import annotations

import time
from functools import cached_property

from referee.engine import JOKER, Action, Event, Group, Kind, counts_of
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.wire import KIND_FROM_PB, WireError, action_from_pb, event_from_pb, group_from_pb


class Decision:
    """A decision to make: the request, the seat's view as counts and engine objects, and the legal actions.

    Cards are ints 1..13 and 14 for a joker; ``hand``, ``market`` and ``discard`` are 15-int count lists
    (index 0 unused), so ``d.hand[7]`` is how many 7s the hand holds and ``d.hand[14]`` its jokers.
    """

    def __init__(self, request: bot_pb.DecisionRequest, start: bot_pb.GameStart | None = None) -> None:
        self.request = request  # the raw message
        self.start = start  # the game's GameStart, when the kit has seen it
        self.received = time.monotonic()
        if request.kind not in KIND_FROM_PB:
            raise WireError(f"request seq {request.seq} has unknown decision kind {request.kind}")
        self.kind: Kind = KIND_FROM_PB[request.kind]

    # The request's fields.
    @property
    def game_id(self) -> str:
        return self.request.game_id

    @property
    def seat(self) -> int:
        return self.request.seat

    @property
    def seq(self) -> int:
        return self.request.seq

    @property
    def view(self) -> pb.SeatView:
        return self.request.view

    @property
    def players(self) -> int:
        return len(self.request.view.hand_sizes)

    @property
    def turn(self) -> int:
        return self.request.view.turn

    @property
    def active_seat(self) -> int:
        return self.request.view.active_seat

    @property
    def victim(self) -> int:
        """The abluxxed seat being resolved (take/decline, reclaim/discard, and its draws), or -1."""
        return self.request.view.victim

    @property
    def victim_group(self) -> Group:
        """In take_or_decline and reclaim_or_discard: the group abluxxed, the victim's top group (R9)."""
        top = self.top_groups[self.victim] if self.kind in (Kind.TAKE_OR_DECLINE, Kind.RECLAIM_OR_DISCARD) else None
        if top is None:
            raise ValueError(f"a {self.kind.value} decision is about no abluxxed group")
        return top

    @property
    def to_draw(self) -> int:
        """In a draw: cards still to draw, this one included."""
        return self.request.view.to_draw

    @property
    def pile_size(self) -> int:
        return self.request.view.pile_size

    # Time.
    @property
    def decision_ms(self) -> int:
        return self.request.decision_ms

    @property
    def bank_ms(self) -> int:
        return self.request.bank_ms

    @property
    def time_left_ms(self) -> float:
        """What is left of decision_ms + bank_ms, counted from when the kit received the request (0 = no limit)."""
        total = self.request.decision_ms + self.request.bank_ms
        if total == 0:
            return 0.0
        return max(0.0, total - (time.monotonic() - self.received) * 1000)

    # The view in the engine's words.
    @cached_property
    def hand(self) -> list[int]:
        """Own hand as counts per card (15 ints; [14] is jokers)."""
        return list(counts_of(self.request.view.hand))

    @cached_property
    def market(self) -> list[int]:
        return list(counts_of(self.request.view.market))

    @cached_property
    def discard(self) -> list[int]:
        return list(counts_of(self.request.view.discard))

    @property
    def hand_size(self) -> int:
        return len(self.request.view.hand)

    @cached_property
    def hand_sizes(self) -> list[int]:
        return list(self.request.view.hand_sizes)

    @cached_property
    def scores(self) -> list[int]:
        return list(self.request.view.scores)

    @cached_property
    def stacks(self) -> list[list[Group]]:
        """Every seat's stack, bottom group first."""
        return [[group_from_pb(g) for g in st.groups] for st in self.request.view.stacks]

    @cached_property
    def top_groups(self) -> list[Group | None]:
        """Every seat's top group (None for an empty stack), by seat; your own included."""
        return [st[-1] if st else None for st in self.stacks]

    @cached_property
    def opponents(self) -> list[int]:
        """The other seats, in check order (R8): the next seat first."""
        n, s = self.players, self.seat
        return [(s + k) % n for k in range(1, n)]

    @property
    def played(self) -> Group | None:
        """The group the active player laid this turn, or None before the play."""
        v = self.request.view
        return group_from_pb(v.played) if v.HasField("played") else None

    @cached_property
    def events(self) -> list[Event]:
        """Public events since this seat's previous request (R17 redacted: a pile card others drew is None)."""
        return [event_from_pb(e) for e in self.request.events]

    # The legal actions.
    @cached_property
    def legal(self) -> list[Action]:
        """The legal actions as engine objects (Group, Draw, Choice), in the request's order."""
        return [action_from_pb(a) for a in self.request.legal_actions]

    @cached_property
    def plays_by_value(self) -> dict[int, list[Group]]:
        """In a play decision: the legal groups by value (14 = jokers alone), smallest group first."""
        out: dict[int, list[Group]] = {}
        for a in self.legal:
            if isinstance(a, Group):
                out.setdefault(a.value, []).append(a)
        for groups in out.values():
            groups.sort(key=lambda g: (g.count, g.jokers))
        return out

    def index(self, action: Action) -> int:
        """The index of ``action`` in the legal list; ValueError if it is not legal."""
        try:
            return self.legal.index(action)
        except ValueError:
            raise ValueError(f"{action!r} is not a legal action here ({self.kind.value})") from None

    def victims_of(self, group: Group) -> list[int]:
        """The opponents ``group`` would abluxx if played now (R8), in check order."""
        out = []
        for opp in self.opponents:
            top = self.top_groups[opp]
            if top is not None and top.count == group.count and group.value > top.value:
                out.append(opp)
        return out

    @property
    def jokers(self) -> int:
        return self.hand[JOKER]
