"""The Referee gRPC service: submit bots, run tournaments, watch games (docs/service.md).

``serve`` runs it (``abluxx serve``); ``RefereeService`` is the servicer; ``settings`` reads the server's TOML
config and token environment variables.
"""

from .server import RefereeService, ServeError, serve
from .settings import Settings, load

__all__ = ["RefereeService", "ServeError", "Settings", "load", "serve"]
