"""Pages to watch and understand games: the HTML replay viewer and the tournament report (docs/viewer.md)."""

from .replay import Frame, Replay, ReplayError, build_replay
from .viewer import viewer_html, write_viewer

__all__ = ["Frame", "Replay", "ReplayError", "build_replay", "viewer_html", "write_viewer"]
