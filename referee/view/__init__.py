"""Pages to watch and understand games: the HTML replay viewer and the tournament report (docs/viewer.md)."""

from .replay import Replay, ReplayError, Step, replay
from .viewer import viewer_html, write_viewer

__all__ = ["Replay", "ReplayError", "Step", "replay", "viewer_html", "write_viewer"]
