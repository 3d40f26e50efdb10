"""The match runner: play one game between 2 to 5 seats under time control (docs/match.md)."""

from .clock import LagMonitor, lag_monitor
from .runner import fault_name, make_seat, make_seats, play_game
from .seats import (
    MAX_RECEIVE_BYTES,
    BotChannel,
    BuiltinSeat,
    ChannelPool,
    RemoteSeat,
    Seat,
    SeatAnswer,
    SeatError,
    builtin_names,
    fallback_index,
    is_builtin,
)
from .spec import EntrantRef, GameResult, GameSpec, SeatStats, TimeControl

__all__ = [
    "MAX_RECEIVE_BYTES", "BotChannel", "BuiltinSeat", "ChannelPool", "EntrantRef", "GameResult", "GameSpec",
    "LagMonitor", "RemoteSeat", "Seat", "SeatAnswer", "SeatError", "SeatStats", "TimeControl", "builtin_names",
    "fallback_index", "fault_name", "is_builtin", "lag_monitor", "make_seat", "make_seats", "play_game",
]  # fmt: skip
