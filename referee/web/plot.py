"""Rating-history plots as inline SVG, drawn on the server: numbers only, no script, nothing fetched."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

WIDTH, HEIGHT, PAD = 600, 220, 30
LEFT = 60  # room for the rating labels left of the axis, at a phone's larger text (site.css)


@dataclass(frozen=True)
class Line:
    name: str
    points: str  # the polyline's "x,y x,y ..." in the plot's coordinates
    last: float  # the rating now
    css: str  # its colour class


@dataclass(frozen=True)
class Plot:
    lines: list[Line]
    low: float
    high: float
    games: int  # the x axis: games played by the entrant who played most
    width: int = WIDTH
    height: int = HEIGHT
    pad: int = PAD
    left: int = LEFT


def plot(
    history: Mapping[str, Sequence[tuple[int, float]]], names: Sequence[str], marks: Mapping[str, str] = {}
) -> Plot | None:
    """One line per name of ``names`` (at most 8, in that order) from ``history`` (standings.History.lines):
    the conservative rating against the number of games the entrant had played. A name with a mark (``retired``,
    ``superseded``) is shown with it."""
    chosen = [n for n in names if history.get(n)][:8]  # one point: ratings kept from before, the line starts there
    if not chosen:
        return None
    values = [y for n in chosen for _, y in history[n]]
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    games = max(history[n][-1][0] for n in chosen) or 1
    lines = []
    for i, n in enumerate(chosen):
        pts = " ".join(
            f"{LEFT + (WIDTH - LEFT - PAD) * x / games:.1f},{HEIGHT - PAD - (HEIGHT - 2 * PAD) * (y - low) / span:.1f}"
            for x, y in history[n]
        )
        if len(history[n]) == 1:
            pts = f"{pts} {pts}"  # a line of one point: drawn as a dot (the plot's round line caps)
        label = f"{n} ({marks[n]})" if marks.get(n) else n
        lines.append(Line(label, pts, history[n][-1][1], f"line{i}"))
    return Plot(lines, low, high, games)
