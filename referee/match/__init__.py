"""The match runner: play one game between 2 to 5 seats under time control (docs/match.md)."""

from . import dialin
from .builtin import BuiltinSeat, builtin_names, is_builtin
from .channels import BotChannel, ChannelPool
from .clock import LagMonitor, lag_monitor
from .remote import RemoteSeat
from .runner import fault_name, make_seat, make_seats, play_game
from .seats import MAX_RECEIVE_BYTES, Seat, SeatAnswer, SeatError, fallback_index
from .spec import EntrantRef, GameResult, GameSpec, SeatStats, TimeControl

__all__ = [
    "MAX_RECEIVE_BYTES", "BotChannel", "BuiltinSeat", "ChannelPool", "EntrantRef", "GameResult", "GameSpec",
    "LagMonitor", "RemoteSeat", "Seat", "SeatAnswer", "SeatError", "SeatStats", "TimeControl", "builtin_names",
    "dialin", "fallback_index", "fault_name", "is_builtin", "lag_monitor", "make_seat", "make_seats", "play_game",
]  # fmt: skip
