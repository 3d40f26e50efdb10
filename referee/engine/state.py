"""One moment of a game: the engine's immutable ``State``."""

from __future__ import annotations

from .actions import Action, EndReason, Group, Kind, Options


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
        """A shallow copy, for ``apply`` to change. Every slot by name: a loop of getattr/setattr over __slots__
        cost five times as much, once per decision (tests/engine/test_state_copy.py checks no slot is missed)."""
        new = State.__new__(State)
        new.abluxxed_any = self.abluxxed_any
        new.active = self.active
        new.deck = self.deck
        new.discard = self.discard
        new.end_reason = self.end_reason
        new.hands = self.hands
        new.kind = self.kind
        new.legal = self.legal
        new.market = self.market
        new.next_check = self.next_check
        new.options = self.options
        new.pile_pos = self.pile_pos
        new.played = self.played
        new.players = self.players
        new.seat = self.seat
        new.stacks = self.stacks
        new.start_seat = self.start_seat
        new.to_draw = self.to_draw
        new.turn = self.turn
        new.victim = self.victim
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
