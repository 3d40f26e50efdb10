from referee.proto.abluxxen.v1 import game_pb2 as _game_pb2
from referee.proto.abluxxen.v1 import record_pb2 as _record_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EntrantState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ENTRANT_STATE_UNSPECIFIED: _ClassVar[EntrantState]
    ENTRANT_STATE_ACTIVE: _ClassVar[EntrantState]
    ENTRANT_STATE_SUPERSEDED: _ClassVar[EntrantState]
    ENTRANT_STATE_RETIRED: _ClassVar[EntrantState]

class ComplianceCheck(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMPLIANCE_CHECK_UNSPECIFIED: _ClassVar[ComplianceCheck]
    COMPLIANCE_CHECK_HELLO: _ClassVar[ComplianceCheck]
    COMPLIANCE_CHECK_VALIDATION_GAME: _ClassVar[ComplianceCheck]

class TournamentState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOURNAMENT_STATE_UNSPECIFIED: _ClassVar[TournamentState]
    TOURNAMENT_STATE_CREATED: _ClassVar[TournamentState]
    TOURNAMENT_STATE_RUNNING: _ClassVar[TournamentState]
    TOURNAMENT_STATE_FINISHED: _ClassVar[TournamentState]
    TOURNAMENT_STATE_CANCELLED: _ClassVar[TournamentState]
    TOURNAMENT_STATE_PAUSED: _ClassVar[TournamentState]
ENTRANT_STATE_UNSPECIFIED: EntrantState
ENTRANT_STATE_ACTIVE: EntrantState
ENTRANT_STATE_SUPERSEDED: EntrantState
ENTRANT_STATE_RETIRED: EntrantState
COMPLIANCE_CHECK_UNSPECIFIED: ComplianceCheck
COMPLIANCE_CHECK_HELLO: ComplianceCheck
COMPLIANCE_CHECK_VALIDATION_GAME: ComplianceCheck
TOURNAMENT_STATE_UNSPECIFIED: TournamentState
TOURNAMENT_STATE_CREATED: TournamentState
TOURNAMENT_STATE_RUNNING: TournamentState
TOURNAMENT_STATE_FINISHED: TournamentState
TOURNAMENT_STATE_CANCELLED: TournamentState
TOURNAMENT_STATE_PAUSED: TournamentState

class Entrant(_message.Message):
    __slots__ = ("name", "version", "entrant_id", "address", "owner", "bot_version", "bot_author", "state", "submitted_at", "validation_game_id", "mu", "sigma", "games", "health")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ENTRANT_ID_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_AUTHOR_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_AT_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_GAME_ID_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    entrant_id: str
    address: str
    owner: str
    bot_version: str
    bot_author: str
    state: EntrantState
    submitted_at: str
    validation_game_id: str
    mu: float
    sigma: float
    games: int
    health: EntrantHealth
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ..., entrant_id: _Optional[str] = ..., address: _Optional[str] = ..., owner: _Optional[str] = ..., bot_version: _Optional[str] = ..., bot_author: _Optional[str] = ..., state: _Optional[_Union[EntrantState, str]] = ..., submitted_at: _Optional[str] = ..., validation_game_id: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., games: _Optional[int] = ..., health: _Optional[_Union[EntrantHealth, _Mapping]] = ...) -> None: ...

class EntrantHealth(_message.Message):
    __slots__ = ("status", "since", "missed", "reason", "probes")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    MISSED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PROBES_FIELD_NUMBER: _ClassVar[int]
    status: str
    since: str
    missed: int
    reason: str
    probes: int
    def __init__(self, status: _Optional[str] = ..., since: _Optional[str] = ..., missed: _Optional[int] = ..., reason: _Optional[str] = ..., probes: _Optional[int] = ...) -> None: ...

class SubmitBotRequest(_message.Message):
    __slots__ = ("name", "address", "owner", "force", "games_at_once", "upload", "command")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    GAMES_AT_ONCE_FIELD_NUMBER: _ClassVar[int]
    UPLOAD_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    name: str
    address: str
    owner: str
    force: bool
    games_at_once: int
    upload: bytes
    command: str
    def __init__(self, name: _Optional[str] = ..., address: _Optional[str] = ..., owner: _Optional[str] = ..., force: _Optional[bool] = ..., games_at_once: _Optional[int] = ..., upload: _Optional[bytes] = ..., command: _Optional[str] = ...) -> None: ...

class GetBotOutputRequest(_message.Message):
    __slots__ = ("game_id", "entrant")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    entrant: str
    def __init__(self, game_id: _Optional[str] = ..., entrant: _Optional[str] = ...) -> None: ...

class BotOutput(_message.Message):
    __slots__ = ("output",)
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    output: str
    def __init__(self, output: _Optional[str] = ...) -> None: ...

class Refusal(_message.Message):
    __slots__ = ("check", "reason", "game_id", "seq", "kind", "fault")
    CHECK_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    check: ComplianceCheck
    reason: str
    game_id: str
    seq: int
    kind: _game_pb2.DecisionKind
    fault: _record_pb2.FaultKind
    def __init__(self, check: _Optional[_Union[ComplianceCheck, str]] = ..., reason: _Optional[str] = ..., game_id: _Optional[str] = ..., seq: _Optional[int] = ..., kind: _Optional[_Union[_game_pb2.DecisionKind, str]] = ..., fault: _Optional[_Union[_record_pb2.FaultKind, str]] = ...) -> None: ...

class SubmitBotResponse(_message.Message):
    __slots__ = ("entrant", "refusal", "output")
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    REFUSAL_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    entrant: Entrant
    refusal: Refusal
    output: str
    def __init__(self, entrant: _Optional[_Union[Entrant, _Mapping]] = ..., refusal: _Optional[_Union[Refusal, _Mapping]] = ..., output: _Optional[str] = ...) -> None: ...

class ListEntrantsRequest(_message.Message):
    __slots__ = ("active_only", "page_size", "page_token", "all_versions")
    ACTIVE_ONLY_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ALL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    active_only: bool
    page_size: int
    page_token: str
    all_versions: bool
    def __init__(self, active_only: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., all_versions: _Optional[bool] = ...) -> None: ...

class ListEntrantsResponse(_message.Message):
    __slots__ = ("entrants", "next_page_token")
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entrants: _containers.RepeatedCompositeFieldContainer[Entrant]
    next_page_token: str
    def __init__(self, entrants: _Optional[_Iterable[_Union[Entrant, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetEntrantRequest(_message.Message):
    __slots__ = ("name", "version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class RetireEntrantRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class TournamentEntrant(_message.Message):
    __slots__ = ("name", "bot", "address", "policy")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    name: str
    bot: str
    address: str
    policy: str
    def __init__(self, name: _Optional[str] = ..., bot: _Optional[str] = ..., address: _Optional[str] = ..., policy: _Optional[str] = ...) -> None: ...

class OptionsConfig(_message.Message):
    __slots__ = ("draw_one", "end_on_empty_pile")
    DRAW_ONE_FIELD_NUMBER: _ClassVar[int]
    END_ON_EMPTY_PILE_FIELD_NUMBER: _ClassVar[int]
    draw_one: bool
    end_on_empty_pile: bool
    def __init__(self, draw_one: _Optional[bool] = ..., end_on_empty_pile: _Optional[bool] = ...) -> None: ...

class TimeControlConfig(_message.Message):
    __slots__ = ("decision_ms", "bank_ms", "grace_ms")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    bank_ms: int
    grace_ms: int
    def __init__(self, decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ...) -> None: ...

class TournamentConfig(_message.Message):
    __slots__ = ("name", "entrants", "seed", "table_size", "deals", "tables", "seat_orders", "concurrency", "max_strikes", "options", "time_control", "public_deals", "ladder")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    TABLE_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    SEAT_ORDERS_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_DEALS_FIELD_NUMBER: _ClassVar[int]
    LADDER_FIELD_NUMBER: _ClassVar[int]
    name: str
    entrants: _containers.RepeatedCompositeFieldContainer[TournamentEntrant]
    seed: int
    table_size: int
    deals: int
    tables: int
    seat_orders: str
    concurrency: int
    max_strikes: int
    options: OptionsConfig
    time_control: TimeControlConfig
    public_deals: bool
    ladder: LadderConfig
    def __init__(self, name: _Optional[str] = ..., entrants: _Optional[_Iterable[_Union[TournamentEntrant, _Mapping]]] = ..., seed: _Optional[int] = ..., table_size: _Optional[int] = ..., deals: _Optional[int] = ..., tables: _Optional[int] = ..., seat_orders: _Optional[str] = ..., concurrency: _Optional[int] = ..., max_strikes: _Optional[int] = ..., options: _Optional[_Union[OptionsConfig, _Mapping]] = ..., time_control: _Optional[_Union[TimeControlConfig, _Mapping]] = ..., public_deals: _Optional[bool] = ..., ladder: _Optional[_Union[LadderConfig, _Mapping]] = ...) -> None: ...

class LadderConfig(_message.Message):
    __slots__ = ("tables", "games", "sigma_target", "new_games", "max_meetings", "meeting_window", "open", "games_per_hour", "max_concurrent", "games_at_once", "games_at_once_cap", "deal_tables")
    TABLES_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    SIGMA_TARGET_FIELD_NUMBER: _ClassVar[int]
    NEW_GAMES_FIELD_NUMBER: _ClassVar[int]
    MAX_MEETINGS_FIELD_NUMBER: _ClassVar[int]
    MEETING_WINDOW_FIELD_NUMBER: _ClassVar[int]
    OPEN_FIELD_NUMBER: _ClassVar[int]
    GAMES_PER_HOUR_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_FIELD_NUMBER: _ClassVar[int]
    GAMES_AT_ONCE_FIELD_NUMBER: _ClassVar[int]
    GAMES_AT_ONCE_CAP_FIELD_NUMBER: _ClassVar[int]
    DEAL_TABLES_FIELD_NUMBER: _ClassVar[int]
    tables: int
    games: int
    sigma_target: float
    new_games: int
    max_meetings: int
    meeting_window: int
    open: bool
    games_per_hour: int
    max_concurrent: int
    games_at_once: int
    games_at_once_cap: int
    deal_tables: int
    def __init__(self, tables: _Optional[int] = ..., games: _Optional[int] = ..., sigma_target: _Optional[float] = ..., new_games: _Optional[int] = ..., max_meetings: _Optional[int] = ..., meeting_window: _Optional[int] = ..., open: _Optional[bool] = ..., games_per_hour: _Optional[int] = ..., max_concurrent: _Optional[int] = ..., games_at_once: _Optional[int] = ..., games_at_once_cap: _Optional[int] = ..., deal_tables: _Optional[int] = ...) -> None: ...

class PauseTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class StopTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class CreateTournamentRequest(_message.Message):
    __slots__ = ("config",)
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    config: TournamentConfig
    def __init__(self, config: _Optional[_Union[TournamentConfig, _Mapping]] = ...) -> None: ...

class StartTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class CancelTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class GetTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class WatchTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class ListTournamentsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListTournamentsResponse(_message.Message):
    __slots__ = ("tournaments", "next_page_token")
    TOURNAMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tournaments: _containers.RepeatedCompositeFieldContainer[Tournament]
    next_page_token: str
    def __init__(self, tournaments: _Optional[_Iterable[_Union[Tournament, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class Tournament(_message.Message):
    __slots__ = ("tournament_id", "name", "state", "games", "finished", "in_flight", "entrants", "created_at", "created_by", "config_json", "waiting", "budget")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    name: str
    state: TournamentState
    games: int
    finished: int
    in_flight: int
    entrants: _containers.RepeatedScalarFieldContainer[str]
    created_at: str
    created_by: str
    config_json: str
    waiting: str
    budget: int
    def __init__(self, tournament_id: _Optional[str] = ..., name: _Optional[str] = ..., state: _Optional[_Union[TournamentState, str]] = ..., games: _Optional[int] = ..., finished: _Optional[int] = ..., in_flight: _Optional[int] = ..., entrants: _Optional[_Iterable[str]] = ..., created_at: _Optional[str] = ..., created_by: _Optional[str] = ..., config_json: _Optional[str] = ..., waiting: _Optional[str] = ..., budget: _Optional[int] = ...) -> None: ...

class GameStarted(_message.Message):
    __slots__ = ("game_id", "slot", "entrants")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    slot: int
    entrants: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game_id: _Optional[str] = ..., slot: _Optional[int] = ..., entrants: _Optional[_Iterable[str]] = ...) -> None: ...

class GameFinished(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: GameSummary
    def __init__(self, game: _Optional[_Union[GameSummary, _Mapping]] = ...) -> None: ...

class TournamentEvent(_message.Message):
    __slots__ = ("tournament", "started", "finished", "standings", "health")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    started: GameStarted
    finished: GameFinished
    standings: Standings
    health: EntrantHealthChanged
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ..., started: _Optional[_Union[GameStarted, _Mapping]] = ..., finished: _Optional[_Union[GameFinished, _Mapping]] = ..., standings: _Optional[_Union[Standings, _Mapping]] = ..., health: _Optional[_Union[EntrantHealthChanged, _Mapping]] = ...) -> None: ...

class EntrantHealthChanged(_message.Message):
    __slots__ = ("entrant", "health")
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    entrant: str
    health: EntrantHealth
    def __init__(self, entrant: _Optional[str] = ..., health: _Optional[_Union[EntrantHealth, _Mapping]] = ...) -> None: ...

class GetStandingsRequest(_message.Message):
    __slots__ = ("tournament_id", "all_versions")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    ALL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    all_versions: bool
    def __init__(self, tournament_id: _Optional[str] = ..., all_versions: _Optional[bool] = ...) -> None: ...

class Standing(_message.Message):
    __slots__ = ("rank", "entrant", "mu", "sigma", "conservative", "games", "wins", "avg_score", "dup_avg_score", "faults", "retired", "median_decision_ms", "separated_from_next", "state", "health")
    class FaultsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    RANK_FIELD_NUMBER: _ClassVar[int]
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    CONSERVATIVE_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    AVG_SCORE_FIELD_NUMBER: _ClassVar[int]
    DUP_AVG_SCORE_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    MEDIAN_DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    SEPARATED_FROM_NEXT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    rank: int
    entrant: str
    mu: float
    sigma: float
    conservative: float
    games: int
    wins: int
    avg_score: float
    dup_avg_score: float
    faults: _containers.ScalarMap[str, int]
    retired: int
    median_decision_ms: float
    separated_from_next: bool
    state: str
    health: str
    def __init__(self, rank: _Optional[int] = ..., entrant: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., conservative: _Optional[float] = ..., games: _Optional[int] = ..., wins: _Optional[int] = ..., avg_score: _Optional[float] = ..., dup_avg_score: _Optional[float] = ..., faults: _Optional[_Mapping[str, int]] = ..., retired: _Optional[int] = ..., median_decision_ms: _Optional[float] = ..., separated_from_next: _Optional[bool] = ..., state: _Optional[str] = ..., health: _Optional[str] = ...) -> None: ...

class Standings(_message.Message):
    __slots__ = ("tournament_id", "games", "scheduled", "rows")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    games: int
    scheduled: int
    rows: _containers.RepeatedCompositeFieldContainer[Standing]
    def __init__(self, tournament_id: _Optional[str] = ..., games: _Optional[int] = ..., scheduled: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[Standing, _Mapping]]] = ...) -> None: ...

class SeatResult(_message.Message):
    __slots__ = ("entrant", "score", "place", "retired", "faults")
    class FaultsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    PLACE_FIELD_NUMBER: _ClassVar[int]
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    entrant: str
    score: int
    place: int
    retired: bool
    faults: _containers.ScalarMap[str, int]
    def __init__(self, entrant: _Optional[str] = ..., score: _Optional[int] = ..., place: _Optional[int] = ..., retired: _Optional[bool] = ..., faults: _Optional[_Mapping[str, int]] = ...) -> None: ...

class GameSummary(_message.Message):
    __slots__ = ("game_id", "tournament_id", "slot", "table", "deal", "seat_order", "seats", "end_reason", "decisions", "finished_at")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    SEAT_ORDER_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    END_REASON_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    tournament_id: str
    slot: int
    table: int
    deal: int
    seat_order: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatResult]
    end_reason: str
    decisions: int
    finished_at: str
    def __init__(self, game_id: _Optional[str] = ..., tournament_id: _Optional[str] = ..., slot: _Optional[int] = ..., table: _Optional[int] = ..., deal: _Optional[int] = ..., seat_order: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatResult, _Mapping]]] = ..., end_reason: _Optional[str] = ..., decisions: _Optional[int] = ..., finished_at: _Optional[str] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ("tournament_id", "entrant", "fault", "page_size", "page_token", "oldest_first")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OLDEST_FIRST_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    entrant: str
    fault: str
    page_size: int
    page_token: str
    oldest_first: bool
    def __init__(self, tournament_id: _Optional[str] = ..., entrant: _Optional[str] = ..., fault: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., oldest_first: _Optional[bool] = ...) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games", "total", "next_page_token")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[GameSummary]
    total: int
    next_page_token: str
    def __init__(self, games: _Optional[_Iterable[_Union[GameSummary, _Mapping]]] = ..., total: _Optional[int] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetGameRecordRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class WatchGameRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class GameOpening(_message.Message):
    __slots__ = ("game_id", "tournament_id", "players", "options", "start_seat", "market", "hand_sizes", "delay_ms")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    START_SEAT_FIELD_NUMBER: _ClassVar[int]
    MARKET_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    tournament_id: str
    players: _containers.RepeatedCompositeFieldContainer[_game_pb2.Player]
    options: _game_pb2.Options
    start_seat: int
    market: _containers.RepeatedScalarFieldContainer[int]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    delay_ms: int
    def __init__(self, game_id: _Optional[str] = ..., tournament_id: _Optional[str] = ..., players: _Optional[_Iterable[_Union[_game_pb2.Player, _Mapping]]] = ..., options: _Optional[_Union[_game_pb2.Options, _Mapping]] = ..., start_seat: _Optional[int] = ..., market: _Optional[_Iterable[int]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., delay_ms: _Optional[int] = ...) -> None: ...

class PublicDecision(_message.Message):
    __slots__ = ("seq", "seat", "kind", "chosen_by", "fault", "events")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CHOSEN_BY_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    seq: int
    seat: int
    kind: _game_pb2.DecisionKind
    chosen_by: _record_pb2.Chooser
    fault: _record_pb2.FaultKind
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, seq: _Optional[int] = ..., seat: _Optional[int] = ..., kind: _Optional[_Union[_game_pb2.DecisionKind, str]] = ..., chosen_by: _Optional[_Union[_record_pb2.Chooser, str]] = ..., fault: _Optional[_Union[_record_pb2.FaultKind, str]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class GameClosing(_message.Message):
    __slots__ = ("reason", "scores", "places", "retired")
    REASON_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    reason: _game_pb2.EndReason
    scores: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    retired: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, reason: _Optional[_Union[_game_pb2.EndReason, str]] = ..., scores: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., retired: _Optional[_Iterable[int]] = ...) -> None: ...

class GameWatchEvent(_message.Message):
    __slots__ = ("opening", "decision", "closing")
    OPENING_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    CLOSING_FIELD_NUMBER: _ClassVar[int]
    opening: GameOpening
    decision: PublicDecision
    closing: GameClosing
    def __init__(self, opening: _Optional[_Union[GameOpening, _Mapping]] = ..., decision: _Optional[_Union[PublicDecision, _Mapping]] = ..., closing: _Optional[_Union[GameClosing, _Mapping]] = ...) -> None: ...
