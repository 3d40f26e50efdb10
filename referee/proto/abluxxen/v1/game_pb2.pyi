from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY: _ClassVar[DecisionKind]
    DECISION_KIND_TAKE_OR_DECLINE: _ClassVar[DecisionKind]
    DECISION_KIND_RECLAIM_OR_DISCARD: _ClassVar[DecisionKind]
    DECISION_KIND_DRAW: _ClassVar[DecisionKind]
    DECISION_KIND_DRAW_ONE: _ClassVar[DecisionKind]

class Choice(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHOICE_UNSPECIFIED: _ClassVar[Choice]
    CHOICE_TAKE: _ClassVar[Choice]
    CHOICE_DECLINE: _ClassVar[Choice]
    CHOICE_RECLAIM: _ClassVar[Choice]
    CHOICE_DISCARD: _ClassVar[Choice]
    CHOICE_SKIP: _ClassVar[Choice]

class DrawSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DRAW_SOURCE_UNSPECIFIED: _ClassVar[DrawSource]
    DRAW_SOURCE_MARKET: _ClassVar[DrawSource]
    DRAW_SOURCE_PILE: _ClassVar[DrawSource]

class EndReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    END_REASON_UNSPECIFIED: _ClassVar[EndReason]
    END_REASON_EMPTY_HAND: _ClassVar[EndReason]
    END_REASON_EXHAUSTED: _ClassVar[EndReason]
    END_REASON_PILE_EMPTY: _ClassVar[EndReason]
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_PLAY: DecisionKind
DECISION_KIND_TAKE_OR_DECLINE: DecisionKind
DECISION_KIND_RECLAIM_OR_DISCARD: DecisionKind
DECISION_KIND_DRAW: DecisionKind
DECISION_KIND_DRAW_ONE: DecisionKind
CHOICE_UNSPECIFIED: Choice
CHOICE_TAKE: Choice
CHOICE_DECLINE: Choice
CHOICE_RECLAIM: Choice
CHOICE_DISCARD: Choice
CHOICE_SKIP: Choice
DRAW_SOURCE_UNSPECIFIED: DrawSource
DRAW_SOURCE_MARKET: DrawSource
DRAW_SOURCE_PILE: DrawSource
END_REASON_UNSPECIFIED: EndReason
END_REASON_EMPTY_HAND: EndReason
END_REASON_EXHAUSTED: EndReason
END_REASON_PILE_EMPTY: EndReason

class Group(_message.Message):
    __slots__ = ("value", "numbers", "jokers")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    NUMBERS_FIELD_NUMBER: _ClassVar[int]
    JOKERS_FIELD_NUMBER: _ClassVar[int]
    value: int
    numbers: int
    jokers: int
    def __init__(self, value: _Optional[int] = ..., numbers: _Optional[int] = ..., jokers: _Optional[int] = ...) -> None: ...

class Draw(_message.Message):
    __slots__ = ("source", "card")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    source: DrawSource
    card: int
    def __init__(self, source: _Optional[_Union[DrawSource, str]] = ..., card: _Optional[int] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("play", "draw", "choice")
    PLAY_FIELD_NUMBER: _ClassVar[int]
    DRAW_FIELD_NUMBER: _ClassVar[int]
    CHOICE_FIELD_NUMBER: _ClassVar[int]
    play: Group
    draw: Draw
    choice: Choice
    def __init__(self, play: _Optional[_Union[Group, _Mapping]] = ..., draw: _Optional[_Union[Draw, _Mapping]] = ..., choice: _Optional[_Union[Choice, str]] = ...) -> None: ...

class Stack(_message.Message):
    __slots__ = ("groups",)
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    groups: _containers.RepeatedCompositeFieldContainer[Group]
    def __init__(self, groups: _Optional[_Iterable[_Union[Group, _Mapping]]] = ...) -> None: ...

class Options(_message.Message):
    __slots__ = ("draw_one", "end_on_empty_pile")
    DRAW_ONE_FIELD_NUMBER: _ClassVar[int]
    END_ON_EMPTY_PILE_FIELD_NUMBER: _ClassVar[int]
    draw_one: bool
    end_on_empty_pile: bool
    def __init__(self, draw_one: _Optional[bool] = ..., end_on_empty_pile: _Optional[bool] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("decision_ms", "bank_ms", "grace_ms")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    bank_ms: int
    grace_ms: int
    def __init__(self, decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ...) -> None: ...

class Player(_message.Message):
    __slots__ = ("seat", "name", "version")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    version: str
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("seat", "turn", "active_seat", "hand", "hand_sizes", "stacks", "market", "discard", "pile_size", "scores", "played", "victim", "to_draw")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    STACKS_FIELD_NUMBER: _ClassVar[int]
    MARKET_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    VICTIM_FIELD_NUMBER: _ClassVar[int]
    TO_DRAW_FIELD_NUMBER: _ClassVar[int]
    seat: int
    turn: int
    active_seat: int
    hand: _containers.RepeatedScalarFieldContainer[int]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    stacks: _containers.RepeatedCompositeFieldContainer[Stack]
    market: _containers.RepeatedScalarFieldContainer[int]
    discard: _containers.RepeatedScalarFieldContainer[int]
    pile_size: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    played: Group
    victim: int
    to_draw: int
    def __init__(self, seat: _Optional[int] = ..., turn: _Optional[int] = ..., active_seat: _Optional[int] = ..., hand: _Optional[_Iterable[int]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., stacks: _Optional[_Iterable[_Union[Stack, _Mapping]]] = ..., market: _Optional[_Iterable[int]] = ..., discard: _Optional[_Iterable[int]] = ..., pile_size: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., played: _Optional[_Union[Group, _Mapping]] = ..., victim: _Optional[int] = ..., to_draw: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("turn_started", "played", "abluxxed", "taken", "declined", "reclaimed", "discarded", "drew", "skipped", "refilled", "game_ended")
    TURN_STARTED_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    ABLUXXED_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    DECLINED_FIELD_NUMBER: _ClassVar[int]
    RECLAIMED_FIELD_NUMBER: _ClassVar[int]
    DISCARDED_FIELD_NUMBER: _ClassVar[int]
    DREW_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    REFILLED_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    turn_started: TurnStarted
    played: Played
    abluxxed: Abluxxed
    taken: Taken
    declined: Declined
    reclaimed: Reclaimed
    discarded: Discarded
    drew: Drew
    skipped: Skipped
    refilled: Refilled
    game_ended: GameEnded
    def __init__(self, turn_started: _Optional[_Union[TurnStarted, _Mapping]] = ..., played: _Optional[_Union[Played, _Mapping]] = ..., abluxxed: _Optional[_Union[Abluxxed, _Mapping]] = ..., taken: _Optional[_Union[Taken, _Mapping]] = ..., declined: _Optional[_Union[Declined, _Mapping]] = ..., reclaimed: _Optional[_Union[Reclaimed, _Mapping]] = ..., discarded: _Optional[_Union[Discarded, _Mapping]] = ..., drew: _Optional[_Union[Drew, _Mapping]] = ..., skipped: _Optional[_Union[Skipped, _Mapping]] = ..., refilled: _Optional[_Union[Refilled, _Mapping]] = ..., game_ended: _Optional[_Union[GameEnded, _Mapping]] = ...) -> None: ...

class TurnStarted(_message.Message):
    __slots__ = ("seat", "turn")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    turn: int
    def __init__(self, seat: _Optional[int] = ..., turn: _Optional[int] = ...) -> None: ...

class Played(_message.Message):
    __slots__ = ("seat", "group")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    seat: int
    group: Group
    def __init__(self, seat: _Optional[int] = ..., group: _Optional[_Union[Group, _Mapping]] = ...) -> None: ...

class Abluxxed(_message.Message):
    __slots__ = ("seat", "victim", "group")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VICTIM_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    seat: int
    victim: int
    group: Group
    def __init__(self, seat: _Optional[int] = ..., victim: _Optional[int] = ..., group: _Optional[_Union[Group, _Mapping]] = ...) -> None: ...

class Taken(_message.Message):
    __slots__ = ("seat", "victim", "group")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VICTIM_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    seat: int
    victim: int
    group: Group
    def __init__(self, seat: _Optional[int] = ..., victim: _Optional[int] = ..., group: _Optional[_Union[Group, _Mapping]] = ...) -> None: ...

class Declined(_message.Message):
    __slots__ = ("seat", "victim")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VICTIM_FIELD_NUMBER: _ClassVar[int]
    seat: int
    victim: int
    def __init__(self, seat: _Optional[int] = ..., victim: _Optional[int] = ...) -> None: ...

class Reclaimed(_message.Message):
    __slots__ = ("seat", "group")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    seat: int
    group: Group
    def __init__(self, seat: _Optional[int] = ..., group: _Optional[_Union[Group, _Mapping]] = ...) -> None: ...

class Discarded(_message.Message):
    __slots__ = ("seat", "group")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    seat: int
    group: Group
    def __init__(self, seat: _Optional[int] = ..., group: _Optional[_Union[Group, _Mapping]] = ...) -> None: ...

class Drew(_message.Message):
    __slots__ = ("seat", "card", "from_market")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    FROM_MARKET_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: int
    from_market: bool
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ..., from_market: _Optional[bool] = ...) -> None: ...

class Skipped(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Refilled(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, cards: _Optional[_Iterable[int]] = ...) -> None: ...

class GameEnded(_message.Message):
    __slots__ = ("reason", "scores")
    REASON_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    reason: EndReason
    scores: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, reason: _Optional[_Union[EndReason, str]] = ..., scores: _Optional[_Iterable[int]] = ...) -> None: ...
