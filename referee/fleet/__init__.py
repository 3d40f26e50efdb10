"""The fleet: where games are played (docs/scale.md, docs/architecture.md).

One interface for every caller that plays games (tournaments, ladders, duels and gauntlets): ``open_games`` takes
where to play (``WorkerSettings``: inline, local worker processes or Ray actors) and who plays (a ``Lineup`` of
``Bot``s), and gives a ``Games`` whose ``play(spec, on_decision=None)`` plays one ``GameSpec`` and returns its
``GameResult``, its record written into the records folder, with each decision passed to ``on_decision`` live.
The fleet starts the local bot processes its games need (bots.py, guarded by watchdog.py), keeps its workers
alive, and plays again from its deal a game whose worker died. It holds no store and no deal key: its caller keeps
the schedule, the results and the secrets.
"""

from .bots import Addresses, Crash, LocalBots, check_reachable, crash_summary, fresh_bots, ready
from .errors import EntrantError, FleetError, WorkerError
from .lineup import Bot, Lineup
from .play import OnDecision, PlayerFactory, PlayFn, match_player
from .pool import Games, open_games
from .settings import BACKENDS, MAX_WORKERS, WorkerSettings, default_workers, ray_missing, settings_from

__all__ = [
    "Addresses", "BACKENDS", "Bot", "Crash", "EntrantError", "FleetError", "Games", "Lineup", "LocalBots",
    "MAX_WORKERS", "OnDecision", "PlayFn", "PlayerFactory", "WorkerError", "WorkerSettings", "check_reachable",
    "crash_summary", "default_workers", "fresh_bots", "match_player", "open_games", "ray_missing", "ready",
    "settings_from",
]  # fmt: skip
