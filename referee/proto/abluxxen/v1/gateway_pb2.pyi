from referee.proto.abluxxen.v1 import bot_pb2 as _bot_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DialIn(_message.Message):
    __slots__ = ("name", "hello", "games_at_once")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HELLO_FIELD_NUMBER: _ClassVar[int]
    GAMES_AT_ONCE_FIELD_NUMBER: _ClassVar[int]
    name: str
    hello: _bot_pb2.HelloReply
    games_at_once: int
    def __init__(self, name: _Optional[str] = ..., hello: _Optional[_Union[_bot_pb2.HelloReply, _Mapping]] = ..., games_at_once: _Optional[int] = ...) -> None: ...

class GatewayMessage(_message.Message):
    __slots__ = ("hello", "entered", "open_game")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ENTERED_FIELD_NUMBER: _ClassVar[int]
    OPEN_GAME_FIELD_NUMBER: _ClassVar[int]
    hello: _bot_pb2.HelloRequest
    entered: Entered
    open_game: OpenGame
    def __init__(self, hello: _Optional[_Union[_bot_pb2.HelloRequest, _Mapping]] = ..., entered: _Optional[_Union[Entered, _Mapping]] = ..., open_game: _Optional[_Union[OpenGame, _Mapping]] = ...) -> None: ...

class Entered(_message.Message):
    __slots__ = ("entrant", "new_version", "validation_game_id")
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    NEW_VERSION_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_GAME_ID_FIELD_NUMBER: _ClassVar[int]
    entrant: str
    new_version: bool
    validation_game_id: str
    def __init__(self, entrant: _Optional[str] = ..., new_version: _Optional[bool] = ..., validation_game_id: _Optional[str] = ...) -> None: ...

class OpenGame(_message.Message):
    __slots__ = ("ticket",)
    TICKET_FIELD_NUMBER: _ClassVar[int]
    ticket: str
    def __init__(self, ticket: _Optional[str] = ...) -> None: ...
