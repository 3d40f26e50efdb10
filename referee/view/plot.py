"""The report's rating chart: an inline SVG of each entrant's conservative rating against the games it played."""

from __future__ import annotations

import html
import math

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22")  # fmt: skip


def _e(x: object) -> str:
    return html.escape(str(x))


def _nice_step(span: float) -> float:
    raw = span / 5 or 1
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)


def rating_plot(history: dict[str, list[tuple[int, float]]], order: list[str]) -> str:
    """An inline SVG line chart, each entrant's conservative rating against the games it has played, and its legend
    as HTML below it. The SVG scales with the page, its text with it: report.css sets the text's size in the
    chart's own units for each screen width (a phone shows 760 units in about 360 px), so the margins leave room
    for labels twice as large as a laptop's. The axes' names are in the legend's caption, not in the SVG."""
    w, h, left, right, top, bottom = 760, 340, 84, 18, 18, 40
    xs = [x for pts in history.values() for x, _ in pts] or [0]
    ys = [y for pts in history.values() for _, y in pts] or [0.0]
    x_max = max(1, max(xs))
    y_lo, y_hi = min(ys), max(ys)
    if y_hi - y_lo < 1:
        y_lo, y_hi = y_lo - 1, y_hi + 1
    step = _nice_step(y_hi - y_lo)
    y_lo, y_hi = math.floor(y_lo / step) * step, math.ceil(y_hi / step) * step

    def px(x: float) -> float:
        return left + (w - left - right) * x / x_max

    def py(y: float) -> float:
        return top + (h - top - bottom) * (y_hi - y) / (y_hi - y_lo)

    out = [f'<figure class="plot"><svg id="rating-plot" viewBox="0 0 {w} {h}" role="img" aria-label="conservative '
           'rating over games played">']  # fmt: skip
    y = y_lo
    while y <= y_hi + 1e-9:
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 8}" y="{py(y):.1f}" dy=".35em" text-anchor="end">{y:g}</text>')  # fmt: skip
        y += step
    xstep = max(1, int(_nice_step(x_max)))
    for x in range(0, x_max + 1, xstep):
        out.append(f'<text x="{px(x):.1f}" y="{h - bottom + 8}" dy=".9em" text-anchor="middle">{x}</text>')
    out.append(f'<line x1="{left}" x2="{w - right}" y1="{h - bottom}" y2="{h - bottom}" stroke="#888"/>')
    legend = []
    for i, name in enumerate(order):
        pts = history.get(name, [])
        colour = _COLOURS[i % len(_COLOURS)]
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline class="rating-line" data-entrant="{_e(name)}" points="{path}" fill="none" '
                   f'stroke="{colour}" stroke-width="2"><title>{_e(name)}</title></polyline>')  # fmt: skip
        legend.append(f'<li data-entrant="{_e(name)}"><span class="swatch" style="background:{colour}"></span>'
                      f"{_e(name)}</li>")  # fmt: skip
    out.append('</svg><figcaption>Up: &mu; &minus; 3&sigma;; across: games played.'
               f'<ul class="legend">{"".join(legend)}</ul></figcaption></figure>')  # fmt: skip
    return "".join(out)
