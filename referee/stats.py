"""The statistics of a duel (docs/duel.md): a sequential test on paired differences, and confidence intervals.

Pure functions, no I/O. The unit of evidence is one **pair**: the candidate's score minus the baseline's score on
the same cards (same deal, same seat, same field), in score points per game.

**The test** is a generalized sequential probability ratio test (GSPRT) of H0 (mean = 0) against H1 (mean = M) on the
**empirical (multinomial) distribution** of the differences, as fishtest runs one on its pentanomial pair outcomes,
generalised from five outcomes to the values seen. M is in score points, not in units of the standard deviation: this is
not the "normalized" SPRT. Under each hypothesis the likelihood is maximised over the distributions on the observed
values with that mean: the maximum is an exponential tilting of the empirical one, p_i = p̂_i / (1 + λ (x_i - s)), λ the
root of sum_i p̂_i (x_i - s) / (1 + λ (x_i - s)) = 0 (Owen's empirical likelihood, 1988; fishtest's MLE under a mean
constraint), and the LLR is the difference of the two maximised log-likelihoods. One pseudo-value, -a_n (mean - s)
with a_n = max(1, log(n) / 2), joins the values for each hypothesis (the adjusted empirical likelihood of Chen,
Variyath and Abraham 2008), kept within the range of the values seen: it corrects the empirical likelihood's
small-sample optimism. No normal approximation of the mean is made, so skewed differences (a low mean that comes
with a low variance) do not overstate the evidence as the normal GSPRT's n M (2m - M) / (2 s²) did (0.07-0.10 for
0.05 on real counter-vs-greedy pairs). Where 0 or M is not strictly inside the range of the values seen, the values
say nothing of that mean but "impossible" (a duel of nearly identical bots, all ties but one gain, would say H1 at
once), and the normal GSPRT's LLR stands in, with no verdict on it before STAND_IN_SPREAD pairs differ from the most
common difference (**Spread**, below). To either
LLR a skewness term is added, SKEW_WEIGHT g1 M / sd (g1 the sample skewness), weighted by the share of pairs left
when the repeats of the most common difference are set aside (ties inflate g1 / sd without saying more of a tail):
the first pairs of a skewed duel have more likely missed some of its long tail than not, which left the error
the skew favours at 0.058 and the other at 0.038 for 0.05; in units of the mean the term is about a shift of
SKEW_WEIGHT g1 sd / n, Johnson's (1978) skewness bias of the mean times 4.5, a weight measured on real skewed pairs
(docs/duel.md, "Skewed differences").

**Bounds.** Wald's, log(beta / (1 - alpha)) and log((1 - beta) / alpha), moved inward by the expected overshoot of
the last step, estimated as the duel goes from the LLR's own ladder heights (each new minimum's drop below the
last, each new maximum's rise) from MIN_PAIRS on: E[H²] / (2 E[H]) (Siegmund 1985, "Sequential Analysis",
Corollary 8.33; fishtest's dynamic overshoot correction). Without it the LLR stops past the bound and the
realised error rates sit below alpha and beta. No verdict before MIN_PAIRS pairs.

**Spread.** No verdict either before MIN_SPREAD pairs differ from the most common difference (the *spread* pairs,
n minus the mode's count). Pairs that all differ alike (a patch that changes play on few deals: mostly ties) say
how often the bots play alike, not how much the rare differing deals gain or lose, and their variance, near 0, is
no estimate of the truth's: the normal LLR then stopped at pair 30 with near certainty, whatever the gain
(docs/notes/2026-12-06-duel-ties.md). No variance floor can stand in for the differing pairs: the truth's variance
is that of the rare differences, which no fixed scale bounds. The test waits for them; the first look, and the
overshoot's ladder, start at the first pair count with both MIN_PAIRS pairs and MIN_SPREAD spread pairs (as many,
STAND_IN_SPREAD, where the normal LLR stands in). How often the bots differ is then estimated with one pseudo-pair
(SPREAD_PRIOR) added to the spread pairs, (spread + 1) / (n + 1): a test that stops on the pairs seen stops
soonest for "not better" where they differed less often than the bots do, and with spread / n alone the wrong H1
was 0.03 for 0.05 at 94% to 99% ties.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from referee.likelihood import empirical_llr, with_spread_prior

MIN_PAIRS = 30  # no verdict before this many pairs: the empirical distribution of fewer is too rough to stop on
MIN_SPREAD = 3  # no verdict before this many pairs differ from the most common difference (docs/duel.md, "Ties")
# the same where the normal LLR stands in: 6 held the wrong H0 of real tie pools at 0.002-0.017 for 0.05
STAND_IN_SPREAD = MIN_SPREAD  # (docs/notes/2026-12-06-duel-ties-and-mark.md)
# the LLR's skewness term, SKEW_WEIGHT * g1 * M / sd (docs/duel.md, "Skewed differences"): measured on real skewed
# pairs, it brings the error the skew favours and the other one both to alpha (0.058 and 0.038 without it)
SKEW_WEIGHT = 0.75
# pseudo-pairs the empirical LLR adds to the spread pairs, in their own proportions: the share of pairs that differ
# from the most common difference is estimated as (spread + 1) / (n + 1), Laplace's "add one", rather than spread / n
# (docs/duel.md, "Ties"; measured in docs/notes/2026-12-07-duel-tie-share.md)
SPREAD_PRIOR = 1.0
# the normal GSPRT (METHODS' "normal"): a finite LLR for pairs with no spread; no verdict is given on such pairs
# (MIN_SPREAD), so the floor never decides one
VARIANCE_FLOOR = 1e-6
METHODS = ("empirical", "normal")  # the empirical-likelihood GSPRT; the normal-approximation one (for comparison)


class Verdict(StrEnum):
    H1 = "H1"  # the candidate is better (by M)
    H0 = "H0"  # the candidate is not better by M
    INCONCLUSIVE = "inconclusive"  # the budget ran out first (or the duel is still going)


@dataclass(frozen=True)
class Sprt:
    """The test's settings: error rates and the margin M (score points per game). ``method`` and ``overshoot``
    are not settings of a duel: "normal" without the overshoot correction is the plain GSPRT the duel ran before,
    kept to measure what the change buys (scripts/duel_sim.py)."""

    alpha: float = 0.05
    beta: float = 0.05
    margin: float = 1.0
    method: str = "empirical"
    overshoot: bool = True
    min_pairs: int = MIN_PAIRS
    # pairs that differ from the most common difference before any verdict (stand_in_spread of them where the normal
    # LLR stands in); 0: no such rule, the test before issue 49 (for comparison, scripts/duel_sim.py)
    min_spread: int = MIN_SPREAD
    stand_in_spread: int = STAND_IN_SPREAD
    skew_weight: float = SKEW_WEIGHT  # of the empirical LLR's skewness term; 0 leaves it out
    spread_prior: float = SPREAD_PRIOR  # pseudo-pairs added to the spread pairs (``with_spread_prior``); 0: none

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5 (exclusive), got {value}")
        if not self.margin > 0 or not math.isfinite(self.margin):
            raise ValueError(f"the margin must be above 0, got {self.margin}")
        if self.method not in METHODS:
            raise ValueError(f"the method must be one of {', '.join(METHODS)}, got {self.method!r}")

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's bounds (lower, upper): accept H0 at or below the lower, H1 at or above the upper."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, n: int, mean: float, variance: float) -> float:
        """The normal GSPRT's log-likelihood ratio of H1 (mean M) against H0 (mean 0) for n differences of this
        mean and sample variance: n M (2 mean - M) / (2 variance)."""
        if n < 2:
            return 0.0
        return n * self.margin * (2 * mean - self.margin) / (2 * max(variance, VARIANCE_FLOOR))

    def looks(self, n: int, spread: int, stand_in: bool = False) -> bool:
        """Whether the test may stop at this count: ``min_pairs`` pairs, of which ``min_spread`` differ from the
        most common difference (``spread``); ``stand_in_spread`` of them when the normal LLR stands in for the empirical
        one (``stand_in``: its variance is then estimated from the differing pairs alone)."""
        need = max(self.stand_in_spread, self.min_spread) if stand_in and self.min_spread else self.min_spread
        return n >= self.min_pairs and spread >= need

    def verdict(self, n: int, llr: float, bounds: tuple[float, float] | None = None, spread: int | None = None,
                stand_in: bool = False) -> Verdict:  # fmt: skip
        """H1 at or above the upper bound, H0 at or below the lower (``bounds``: as corrected for overshoot,
        Wald's by default), once the test ``looks`` (``spread``: the pairs that differ from the most common
        difference, None: every pair; ``stand_in``: the LLR is the normal one standing in for the empirical)."""
        lower, upper = bounds or self.bounds
        if not self.looks(n, n if spread is None else spread, stand_in):
            return Verdict.INCONCLUSIVE
        if llr >= upper:
            return Verdict.H1
        if llr <= lower:
            return Verdict.H0
        return Verdict.INCONCLUSIVE


@dataclass
class Ladder:
    """The LLR's ladder heights, for the expected overshoot of its last step (Siegmund 1985, Corollary 8.33):
    each time the LLR falls below its lowest value so far, the drop is a descending ladder height; each time it
    rises above its highest, an ascending one. The first LLR seen starts both."""

    started: bool = False
    low: float = 0.0
    high: float = 0.0
    down: tuple[float, float] = (0.0, 0.0)  # sums of the descending heights and of their squares
    up: tuple[float, float] = (0.0, 0.0)

    def add(self, llr: float) -> None:
        if not self.started:
            self.started, self.low, self.high = True, llr, llr
            return
        if llr < self.low:
            h = self.low - llr
            self.down, self.low = (self.down[0] + h, self.down[1] + h * h), llr
        if llr > self.high:
            h = llr - self.high
            self.up, self.high = (self.up[0] + h, self.up[1] + h * h), llr

    def bounds(self, test: Sprt) -> tuple[float, float]:
        """Wald's bounds moved inward by the expected overshoot E[H²] / (2 E[H]) of each side's ladder heights,
        each move at most half its bound (so the two never meet)."""
        lower, upper = test.bounds
        if not test.overshoot:
            return lower, upper
        o0 = self.down[1] / (2 * self.down[0]) if self.down[0] else 0.0
        o1 = self.up[1] / (2 * self.up[0]) if self.up[0] else 0.0
        return lower + min(o0, -lower / 2), upper - min(o1, upper / 2)


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


@functools.lru_cache(maxsize=4096)
def t_quantile(level: float, dof: int) -> float:
    """The two-sided Student t quantile for a ``level`` interval (1.96 for large dof at 0.95); remembered, since
    standings ask it for every entrant and pair. ``stdtrit``: ``scipy.stats.t.ppf`` to the bit, but 0.6 CPU-s less."""
    from scipy import special  # here: scipy costs ~40 MB, and every `abluxx` command imports this module

    return float(special.stdtrit(dof, 0.5 + level / 2))


def mean_ci(values: Sequence[float], level: float = 0.95) -> Interval:
    """The mean of ``values`` with its t interval; a single value (or none) has an unbounded interval."""
    n = len(values)
    if n == 0:
        return Interval(0.0, -math.inf, math.inf)
    mean = math.fsum(values) / n
    if n < 2:
        return Interval(mean, -math.inf, math.inf)
    half = t_quantile(level, n - 1) * math.sqrt(variance(values) / n)
    return Interval(mean, mean - half, mean + half)


def ratio_ci(clusters: Sequence[tuple[float, int]], level: float = 0.95) -> Interval:
    """The mean of values that come in clusters (a deal's games are not independent), each cluster given as
    (sum of its values, how many): the ratio estimate sum/count with its cluster-robust standard error

        se² = J / (J - 1) * sum_j (s_j - mean * n_j)² / (sum_j n_j)²

    and Student's t with J - 1 degrees of freedom, J the number of clusters. One cluster gives no interval."""
    total = sum(n for _, n in clusters)
    if total == 0:
        return Interval(0.0, -math.inf, math.inf)
    mean = math.fsum(s for s, _ in clusters) / total
    j = len(clusters)
    if j < 2:
        return Interval(mean, -math.inf, math.inf)
    se = math.sqrt(j / (j - 1) * math.fsum((s - mean * n) ** 2 for s, n in clusters)) / total
    half = t_quantile(level, j - 1) * se
    return Interval(mean, mean - half, mean + half)


def variance(values: Sequence[float]) -> float:
    """The sample variance (n - 1 in the denominator); 0 for fewer than two values."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = math.fsum(values) / n
    return math.fsum((v - mean) ** 2 for v in values) / (n - 1)


@dataclass(frozen=True)
class Summary:
    """Where a duel stands after ``pairs`` pairs."""

    pairs: int
    mean_diff: float
    ci95: tuple[float, float]
    llr: float
    bounds: tuple[float, float]  # Wald's, moved inward by the overshoot estimated so far
    verdict: Verdict
    skew: float  # the sample skewness g1 of the differences
    wins: int  # pairs the candidate scored more in
    losses: int
    ties: int


def moments(diffs: Sequence[float]) -> tuple[float, float]:
    """(third central moment, sample skewness g1 = m3 / m2^1.5) of ``diffs``, both with n in the denominator;
    (0, 0) for fewer than three values or no spread."""
    n = len(diffs)
    if n < 3:
        return 0.0, 0.0
    mean = math.fsum(diffs) / n
    m2 = math.fsum((d - mean) ** 2 for d in diffs) / n
    m3 = math.fsum((d - mean) ** 3 for d in diffs) / n
    return (m3, m3 / m2**1.5) if m2 > VARIANCE_FLOOR else (0.0, 0.0)


@dataclass
class LlrPath:
    """The test's LLR pair after pair, in the pairs' order, with the ladder of its values from the first look on
    (``Sprt.looks``: the overshoot estimate that moves the bounds)."""

    test: Sprt
    n: int = 0
    counts: dict[float, int] = field(default_factory=dict)  # how often each difference was seen
    sums: tuple[float, float] = (0.0, 0.0)  # of d and d² (the normal GSPRT)
    lams: tuple[float, float] = (0.0, 0.0)  # the last λ under H0 and H1 (Newton's warm start)
    llr: float = 0.0
    stand_in: bool = False  # the last LLR is the normal one, standing in for the empirical one (or the method)
    ladder: Ladder = field(default_factory=Ladder)

    def add(self, d: float) -> None:
        self.n += 1
        self.counts[d] = self.counts.get(d, 0) + 1
        self.sums = (self.sums[0] + d, self.sums[1] + d * d)
        if self.looking:  # before the first look no verdict: the LLR is computed when asked (``current``)
            self.llr = self._llr()
            self.ladder.add(self.llr)

    @property
    def spread(self) -> int:
        """The pairs that differ from the most common difference so far."""
        return self.n - max(self.counts.values(), default=0)

    @property
    def looking(self) -> bool:
        return self.test.looks(self.n, self.spread)

    def current(self) -> float:
        """The LLR at this count (computed now if the test does not look yet)."""
        return self.llr if self.looking else self._llr()

    def _llr(self) -> float:
        n = self.n
        if n < 2:
            return 0.0
        empirical = self.test.method == "empirical"
        found = None
        if empirical:
            found = empirical_llr(with_spread_prior(self.counts, self.test.spread_prior), self.test.margin, self.lams)
        self.stand_in = empirical and found is None
        if found is None:  # the normal GSPRT, or a hypothesis outside the values seen (the normal one then)
            mean = self.sums[0] / n
            llr = self.test.llr(n, mean, max(0.0, self.sums[1] - n * mean * mean) / (n - 1))
        else:
            llr, self.lams = found
        return llr + self.test.skew_weight * self.skew_shift() if empirical else llr

    def skew_shift(self) -> float:
        """g1 * M / sd * (spread + 1) / n so far (g1 the sample skewness m3 / m2^1.5, sd with n - 1): what one
        unit of ``skew_weight`` adds to the LLR; a long tail of gains raises it (docs/duel.md, "Skewed
        differences"). (spread + 1) / n, the share of pairs left when the most common difference's repeats are set
        aside (1 without repeats), keeps ties out: an atom of ties holding 1 - s of the pairs inflates g1 / sd by
        about 1 / s, and the term then measured the sign balance of a few differing pairs, which the LLR already
        counts (docs/notes/2026-12-06-duel-ties-and-mark.md)."""
        n = self.n
        if n < 3:
            return 0.0
        mean = self.sums[0] / n
        m2 = math.fsum(c * (x - mean) ** 2 for x, c in self.counts.items()) / n
        if m2 <= VARIANCE_FLOOR:
            return 0.0
        m3 = math.fsum(c * (x - mean) ** 3 for x, c in self.counts.items()) / n
        return m3 / m2**1.5 * self.test.margin / math.sqrt(m2 * n / (n - 1)) * (self.spread + 1) / n

    @property
    def bounds(self) -> tuple[float, float]:
        return self.ladder.bounds(self.test)

    @property
    def verdict(self) -> Verdict:
        return self.test.verdict(self.n, self.llr, self.bounds, self.spread, self.stand_in)


def summarize(test: Sprt, diffs: Sequence[float], path: LlrPath | None = None) -> Summary:
    """The test applied to the paired differences so far, in the order they were played (``path``: the test's
    path over exactly these differences, when the caller has it already)."""
    if path is None or path.n != len(diffs):
        path = LlrPath(test)
        for d in diffs:
            path.add(d)
    ci = mean_ci(diffs)
    llr = path.current()
    return Summary(
        pairs=len(diffs),
        mean_diff=ci.mean,
        ci95=(ci.low, ci.high),
        llr=llr,
        bounds=path.bounds,
        verdict=test.verdict(len(diffs), llr, path.bounds, path.spread, path.stand_in),
        skew=moments(diffs)[1],
        wins=sum(d > 0 for d in diffs),
        losses=sum(d < 0 for d in diffs),
        ties=sum(d == 0 for d in diffs),
    )


@dataclass
class Sequential:
    """The test run one pair at a time, in the pairs' order, as a duel runs it: ``add`` each difference; the
    verdict is the one at the first pair count whose LLR crosses a bound (``n`` then), and differences added
    after it, or past ``max_pairs``, change nothing (``ignored`` counts them)."""

    test: Sprt
    max_pairs: int
    path: LlrPath = field(init=False)
    verdict: Verdict = Verdict.INCONCLUSIVE
    ignored: int = 0

    def __post_init__(self) -> None:
        self.path = LlrPath(self.test)

    @property
    def n(self) -> int:
        return self.path.n

    @property
    def done(self) -> bool:
        """A verdict, or the budget spent."""
        return self.verdict is not Verdict.INCONCLUSIVE or self.n >= self.max_pairs

    def add(self, d: float) -> None:
        if self.done:
            self.ignored += 1
            return
        self.path.add(d)
        self.verdict = self.path.verdict


def sequential(test: Sprt, diffs: Sequence[float], max_pairs: int) -> tuple[Verdict, int]:
    """Run the test over ``diffs`` one pair at a time, as a duel does: (verdict, pairs used). It stops at the first
    pair whose LLR crosses a bound, or at ``max_pairs`` (or the end of ``diffs``) with INCONCLUSIVE."""
    run = Sequential(test, max_pairs)
    for d in diffs:
        if run.done:
            break
        run.add(d)
    return run.verdict, run.n
