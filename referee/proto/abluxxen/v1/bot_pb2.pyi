from referee.proto.abluxxen.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Transport(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRANSPORT_UNSPECIFIED: _ClassVar[Transport]
    TRANSPORT_UNARY: _ClassVar[Transport]
    TRANSPORT_STREAM: _ClassVar[Transport]

class ProtocolVersion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROTOCOL_VERSION_UNSPECIFIED: _ClassVar[ProtocolVersion]
    PROTOCOL_VERSION_1: _ClassVar[ProtocolVersion]
TRANSPORT_UNSPECIFIED: Transport
TRANSPORT_UNARY: Transport
TRANSPORT_STREAM: Transport
PROTOCOL_VERSION_UNSPECIFIED: ProtocolVersion
PROTOCOL_VERSION_1: ProtocolVersion

class HelloRequest(_message.Message):
    __slots__ = ("protocol_version",)
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    protocol_version: ProtocolVersion
    def __init__(self, protocol_version: _Optional[_Union[ProtocolVersion, str]] = ...) -> None: ...

class HelloReply(_message.Message):
    __slots__ = ("name", "version", "author", "protocol_version", "transports")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    TRANSPORTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    author: str
    protocol_version: ProtocolVersion
    transports: _containers.RepeatedScalarFieldContainer[Transport]
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., author: _Optional[str] = ..., protocol_version: _Optional[_Union[ProtocolVersion, str]] = ..., transports: _Optional[_Iterable[_Union[Transport, str]]] = ...) -> None: ...

class GameStart(_message.Message):
    __slots__ = ("game_id", "seat", "players", "options", "time_control", "start_seat", "rules_version", "deck_commitment")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    START_SEAT_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    DECK_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    players: _containers.RepeatedCompositeFieldContainer[_game_pb2.Player]
    options: _game_pb2.Options
    time_control: _game_pb2.TimeControl
    start_seat: int
    rules_version: str
    deck_commitment: bytes
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., players: _Optional[_Iterable[_Union[_game_pb2.Player, _Mapping]]] = ..., options: _Optional[_Union[_game_pb2.Options, _Mapping]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., start_seat: _Optional[int] = ..., rules_version: _Optional[str] = ..., deck_commitment: _Optional[bytes] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("game_id", "seat", "seq", "kind", "view", "events", "legal_actions", "decision_ms", "bank_ms", "start")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    seq: int
    kind: _game_pb2.DecisionKind
    view: _game_pb2.SeatView
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    legal_actions: _containers.RepeatedCompositeFieldContainer[_game_pb2.Action]
    decision_ms: int
    bank_ms: int
    start: GameStart
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., seq: _Optional[int] = ..., kind: _Optional[_Union[_game_pb2.DecisionKind, str]] = ..., view: _Optional[_Union[_game_pb2.SeatView, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., legal_actions: _Optional[_Iterable[_Union[_game_pb2.Action, _Mapping]]] = ..., decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., start: _Optional[_Union[GameStart, _Mapping]] = ...) -> None: ...

class DecisionReply(_message.Message):
    __slots__ = ("game_id", "seq", "index", "action", "error")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seq: int
    index: int
    action: _game_pb2.Action
    error: str
    def __init__(self, game_id: _Optional[str] = ..., seq: _Optional[int] = ..., index: _Optional[int] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class GameOverNotice(_message.Message):
    __slots__ = ("game_id", "seat", "reason", "scores", "places", "events", "deck", "salt", "deck_commitment")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    SALT_FIELD_NUMBER: _ClassVar[int]
    DECK_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    reason: _game_pb2.EndReason
    scores: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    deck: _containers.RepeatedScalarFieldContainer[int]
    salt: bytes
    deck_commitment: bytes
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., reason: _Optional[_Union[_game_pb2.EndReason, str]] = ..., scores: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., deck: _Optional[_Iterable[int]] = ..., salt: _Optional[bytes] = ..., deck_commitment: _Optional[bytes] = ...) -> None: ...

class GameOverAck(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("start", "decision", "game_over")
    START_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    GAME_OVER_FIELD_NUMBER: _ClassVar[int]
    start: GameStart
    decision: DecisionRequest
    game_over: GameOverNotice
    def __init__(self, start: _Optional[_Union[GameStart, _Mapping]] = ..., decision: _Optional[_Union[DecisionRequest, _Mapping]] = ..., game_over: _Optional[_Union[GameOverNotice, _Mapping]] = ...) -> None: ...
