"""The adjusted empirical likelihood of a mean (the duel's test, referee/stats.py; docs/duel.md): the likelihood of
the values seen under the most likely distribution on them with a given mean, against their empirical one.

Pure functions on numpy, no I/O: ``tilt`` (one mean), ``empirical_llr`` (mean M against mean 0), and
``with_spread_prior`` (how often the pairs differ from the most common difference, estimated with a pseudo-pair).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def tilt(xs: np.ndarray, cs: np.ndarray, s: float, start: float = 0.0) -> tuple[float, float]:
    """The adjusted empirical likelihood of mean ``s`` for the values ``xs`` seen ``cs`` times: (λ, sum_i c_i
    log(1 + λ y_i)) over y_i = x_i - s and one pseudo-value -a_n ȳ (ȳ their mean, a_n = max(1, log(n) / 2)), λ
    the root of sum_i c_i y_i / (1 + λ y_i) = 0, found by Newton's method from ``start``, kept inside the bracket
    where every weight 1 / (1 + λ y_i) is positive. The log-likelihood ratio of mean s to the empirical
    distribution is minus that sum. The pseudo-value corrects the small sample's optimism (Chen, Variyath and
    Abraham 2008); it is kept within the range of the values seen, or a mean far from the sample's would be
    explained by the pseudo-value alone (Emerson and Owen 2009: the adjusted ratio is bounded) and a clear lead
    never decided. Every value s: (0, 0)."""
    import numpy as np  # here: every `abluxx` command imports this module

    n = float(cs.sum())
    ys = xs - s
    pseudo = -max(1.0, math.log(n) / 2) * float(cs @ ys) / n
    # kept within the values seen: beyond them the pseudo-value alone would carry any mean far from the sample's
    # (the adjusted ratio is bounded), and a clear lead would never reach a bound
    pseudo = min(max(pseudo, float(ys.min())), float(ys.max()))
    ys, cs = np.append(ys, pseudo), np.append(cs, 1.0)
    low_y, high_y = float(ys.min()), float(ys.max())
    if not low_y < 0 < high_y:  # every value is s (or rounding puts s at an edge): the empirical law has mean s
        return 0.0, 0.0
    lo, hi = -1 / high_y, -1 / low_y
    lam = min(max(start, lo + (hi - lo) * 1e-9), hi - (hi - lo) * 1e-9)
    for _ in range(100):
        yw = ys / (1 + lam * ys)
        g, dg = float(cs @ yw), float(cs @ (yw * yw))
        if g > 0:
            lo = lam
        else:
            hi = lam
        step = lam + g / dg
        if abs(step - lam) <= 1e-13 * (1 + abs(lam)):
            lam = step if lo < step < hi else lam
            break
        lam = step if lo < step < hi else (lo + hi) / 2
    return lam, float(cs @ np.log1p(lam * ys))


def with_spread_prior(counts: Mapping[float, float], prior: float) -> Mapping[float, float]:
    """``counts`` with ``prior`` pseudo-pairs spread over the values other than the most common one, in their own
    proportions (each such count times 1 + prior / spread): the empirical LLR's estimate of how often the bots
    differ. A duel that stops on the pairs seen stops more often where they happened to differ less often than the
    bots do, and there, at 90% ties and more, the share spread / n alone held the wrong H1 near 0.03 for 0.05
    (docs/duel.md, "Ties"). Unchanged without spread, without a prior, or where no value repeats (no atom, such as
    the ties, whose share to estimate): then ``counts`` itself."""
    mode = max(counts, key=lambda x: counts[x], default=None)
    spread = sum(c for x, c in counts.items() if x != mode)
    if not spread or not prior or mode is None or counts[mode] < 2:
        return counts
    grow = 1 + prior / spread
    return {x: c if x == mode else c * grow for x, c in counts.items()}


def empirical_llr(counts: Mapping[float, float], margin: float, start: tuple[float, float] = (0.0, 0.0)
                  ) -> tuple[float, tuple[float, float]] | None:  # fmt: skip
    """The adjusted empirical-likelihood LLR of mean ``margin`` against mean 0 for the values seen ``counts``
    times, and the two λ (a warm start for the next count's); None when 0 or ``margin`` is not strictly inside
    the values' range, where the values seen say nothing about that mean but "impossible"."""
    import numpy as np

    xs = np.fromiter(counts.keys(), float, len(counts))
    if not float(xs.min()) < 0.0 < margin < float(xs.max()):
        return None
    cs = np.fromiter(counts.values(), float, len(counts))
    (lam0, l0), (lam1, l1) = tilt(xs, cs, 0.0, start[0]), tilt(xs, cs, margin, start[1])
    return l0 - l1, (lam0, lam1)
