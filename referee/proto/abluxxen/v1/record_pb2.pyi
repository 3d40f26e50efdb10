from referee.proto.abluxxen.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Chooser(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHOOSER_UNSPECIFIED: _ClassVar[Chooser]
    CHOOSER_BOT: _ClassVar[Chooser]
    CHOOSER_FALLBACK: _ClassVar[Chooser]

class FaultKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_KIND_UNSPECIFIED: _ClassVar[FaultKind]
    FAULT_KIND_TIMEOUT: _ClassVar[FaultKind]
    FAULT_KIND_INVALID: _ClassVar[FaultKind]
    FAULT_KIND_MALFORMED: _ClassVar[FaultKind]
    FAULT_KIND_RPC_ERROR: _ClassVar[FaultKind]
    FAULT_KIND_DISCONNECTED: _ClassVar[FaultKind]
    FAULT_KIND_UNREACHABLE: _ClassVar[FaultKind]
    FAULT_KIND_RETIRED: _ClassVar[FaultKind]
    FAULT_KIND_REFEREE: _ClassVar[FaultKind]

class SeatKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEAT_KIND_UNSPECIFIED: _ClassVar[SeatKind]
    SEAT_KIND_REMOTE: _ClassVar[SeatKind]
    SEAT_KIND_BUILTIN: _ClassVar[SeatKind]
CHOOSER_UNSPECIFIED: Chooser
CHOOSER_BOT: Chooser
CHOOSER_FALLBACK: Chooser
FAULT_KIND_UNSPECIFIED: FaultKind
FAULT_KIND_TIMEOUT: FaultKind
FAULT_KIND_INVALID: FaultKind
FAULT_KIND_MALFORMED: FaultKind
FAULT_KIND_RPC_ERROR: FaultKind
FAULT_KIND_DISCONNECTED: FaultKind
FAULT_KIND_UNREACHABLE: FaultKind
FAULT_KIND_RETIRED: FaultKind
FAULT_KIND_REFEREE: FaultKind
SEAT_KIND_UNSPECIFIED: SeatKind
SEAT_KIND_REMOTE: SeatKind
SEAT_KIND_BUILTIN: SeatKind

class PlayerRecord(_message.Message):
    __slots__ = ("seat", "name", "version", "author", "address", "kind", "transport")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    version: str
    author: str
    address: str
    kind: SeatKind
    transport: str
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., author: _Optional[str] = ..., address: _Optional[str] = ..., kind: _Optional[_Union[SeatKind, str]] = ..., transport: _Optional[str] = ...) -> None: ...

class RecordHeader(_message.Message):
    __slots__ = ("format_version", "rules_version", "game_id", "tournament_id", "options", "players", "time_control", "seed", "deck", "start_seat", "commitment", "max_strikes", "started_at")
    FORMAT_VERSION_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    START_SEAT_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    format_version: int
    rules_version: str
    game_id: str
    tournament_id: str
    options: _game_pb2.Options
    players: _containers.RepeatedCompositeFieldContainer[PlayerRecord]
    time_control: _game_pb2.TimeControl
    seed: int
    deck: _containers.RepeatedScalarFieldContainer[int]
    start_seat: int
    commitment: bytes
    max_strikes: int
    started_at: str
    def __init__(self, format_version: _Optional[int] = ..., rules_version: _Optional[str] = ..., game_id: _Optional[str] = ..., tournament_id: _Optional[str] = ..., options: _Optional[_Union[_game_pb2.Options, _Mapping]] = ..., players: _Optional[_Iterable[_Union[PlayerRecord, _Mapping]]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., seed: _Optional[int] = ..., deck: _Optional[_Iterable[int]] = ..., start_seat: _Optional[int] = ..., commitment: _Optional[bytes] = ..., max_strikes: _Optional[int] = ..., started_at: _Optional[str] = ...) -> None: ...

class DecisionRecord(_message.Message):
    __slots__ = ("seq", "seat", "kind", "index", "action", "chosen_by", "fault", "fault_detail", "bot_us", "transport_us", "bank_left_ms", "events", "retired")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CHOSEN_BY_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    FAULT_DETAIL_FIELD_NUMBER: _ClassVar[int]
    BOT_US_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_US_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    seq: int
    seat: int
    kind: _game_pb2.DecisionKind
    index: int
    action: _game_pb2.Action
    chosen_by: Chooser
    fault: FaultKind
    fault_detail: str
    bot_us: int
    transport_us: int
    bank_left_ms: int
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    retired: bool
    def __init__(self, seq: _Optional[int] = ..., seat: _Optional[int] = ..., kind: _Optional[_Union[_game_pb2.DecisionKind, str]] = ..., index: _Optional[int] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ..., chosen_by: _Optional[_Union[Chooser, str]] = ..., fault: _Optional[_Union[FaultKind, str]] = ..., fault_detail: _Optional[str] = ..., bot_us: _Optional[int] = ..., transport_us: _Optional[int] = ..., bank_left_ms: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., retired: _Optional[bool] = ...) -> None: ...

class RecordFooter(_message.Message):
    __slots__ = ("reason", "scores", "places", "retired", "final_digest", "salt", "finished_at")
    REASON_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    FINAL_DIGEST_FIELD_NUMBER: _ClassVar[int]
    SALT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    reason: _game_pb2.EndReason
    scores: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    retired: _containers.RepeatedScalarFieldContainer[int]
    final_digest: str
    salt: bytes
    finished_at: str
    def __init__(self, reason: _Optional[_Union[_game_pb2.EndReason, str]] = ..., scores: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., retired: _Optional[_Iterable[int]] = ..., final_digest: _Optional[str] = ..., salt: _Optional[bytes] = ..., finished_at: _Optional[str] = ...) -> None: ...

class RecordFrame(_message.Message):
    __slots__ = ("header", "decision", "footer")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    FOOTER_FIELD_NUMBER: _ClassVar[int]
    header: RecordHeader
    decision: DecisionRecord
    footer: RecordFooter
    def __init__(self, header: _Optional[_Union[RecordHeader, _Mapping]] = ..., decision: _Optional[_Union[DecisionRecord, _Mapping]] = ..., footer: _Optional[_Union[RecordFooter, _Mapping]] = ...) -> None: ...

class GameRecord(_message.Message):
    __slots__ = ("header", "decisions", "footer", "complete", "deal_withheld")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    FOOTER_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    DEAL_WITHHELD_FIELD_NUMBER: _ClassVar[int]
    header: RecordHeader
    decisions: _containers.RepeatedCompositeFieldContainer[DecisionRecord]
    footer: RecordFooter
    complete: bool
    deal_withheld: bool
    def __init__(self, header: _Optional[_Union[RecordHeader, _Mapping]] = ..., decisions: _Optional[_Iterable[_Union[DecisionRecord, _Mapping]]] = ..., footer: _Optional[_Union[RecordFooter, _Mapping]] = ..., complete: _Optional[bool] = ..., deal_withheld: _Optional[bool] = ...) -> None: ...
