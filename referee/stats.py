"""The statistics of a duel (docs/duel.md): a sequential test on paired differences, and confidence intervals.

Pure functions, no I/O. The unit of evidence is one **pair**: the candidate's score minus the baseline's score on
the same cards (same deal, same seat, same field), in score points per game.

**The test** is a generalized sequential probability ratio test (GSPRT) on the normal approximation of the paired
differences, as fishtest and OpenBench run one on pentanomial pair scores (Wald 1945 for the SPRT; the plug-in
variance makes it "generalized", Li, Liu and Ying 2014). M is in score points, not in units of the standard
deviation: this is not the "normalized" SPRT. With n pairs of mean ``m`` and sample variance ``s²`` (n - 1 in the
denominator), the log-likelihood ratio of H1 (mean = M) against H0 (mean = 0) is

    LLR = sum_i log N(d_i; M, s²) / N(d_i; 0, s²) = n * M * (2m - M) / (2 s²)

with ``m`` corrected for the skewness of the differences (below). The test stops at H1 when
LLR >= log((1 - beta) / alpha), at H0 when LLR <= log(beta / (1 - alpha)) (Wald's bounds), and otherwise plays on.
Testing at the two points 0 and M gives, approximately, P(H1 | mean <= 0) <= alpha and P(H0 | mean >= M) <= beta;
the A/A and A/B simulations (scripts/duel_sim.py, tests/duel) measure it.

**Skewed differences.** When the differences are skewed, a low sample mean comes with a low sample variance
(positive skew) or a high mean with a low variance (negative skew), and the plug-in LLR overstates the evidence in
one direction: positive skew gives too many false H0, negative skew too many false H1 (0.07-0.09 for 0.05 on real
counter-vs-greedy differences, skew 1.2-1.3). Two remedies, measured in docs/duel.md:

- Johnson's (1978) skewness-corrected mean, m + mu3 / (6 s² n) + mu3 (m - M/2)² / (3 s⁴), mu3 the sample's third
  central moment: it removes the first-order (n^-1/2) error the skewness puts in a one-sided test of the mean,
  around the midpoint M/2 where the test's drift changes sign;
- in the direction the skewness favours only (H0 under positive skew, H1 under negative), no verdict before
  28 + 25 g1² pairs, g1 the sample skewness (Sugden, Smith and Jones 2000, "Cochran's rule for simple random
  sampling", JRSS B 62: the pairs a skewed mean needs before its normal approximation holds). The other
  direction keeps MIN_PAIRS, so a clear-cut duel costs no more than before.

The confidence interval of a mean uses Student's t quantile (scipy.stats), which stays honest for the few deals
a short duel or a small tournament has.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

MIN_PAIRS = 30  # no verdict before this many pairs: the variance estimate of fewer is too rough to stop on
VARIANCE_FLOOR = 1e-6  # pairs that all differ by the same amount still give a finite LLR
SKEW_PAIRS = (28, 25)  # no verdict the skewness favours before 28 + 25 g1² pairs (Sugden, Smith and Jones 2000)


def skewed_min_pairs(skew: float, toward: Verdict) -> int:
    """The pairs a verdict needs when the differences have sample skewness ``skew``: MIN_PAIRS, or more for the
    verdict the skewness favours (H0 when it is positive, H1 when negative)."""
    favoured = (toward is Verdict.H0 and skew > 0) or (toward is Verdict.H1 and skew < 0)
    if not favoured:
        return MIN_PAIRS
    base, per = SKEW_PAIRS
    return max(MIN_PAIRS, math.ceil(base + per * skew * skew))


class Verdict(StrEnum):
    H1 = "H1"  # the candidate is better (by M)
    H0 = "H0"  # the candidate is not better by M
    INCONCLUSIVE = "inconclusive"  # the budget ran out first (or the duel is still going)


@dataclass(frozen=True)
class Sprt:
    """The test's settings: error rates and the margin M (score points per game)."""

    alpha: float = 0.05
    beta: float = 0.05
    margin: float = 1.0
    skew_remedy: bool = True  # False: the plain GSPRT, for measuring what the remedy costs (scripts/duel_sim.py)

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5 (exclusive), got {value}")
        if not self.margin > 0 or not math.isfinite(self.margin):
            raise ValueError(f"the margin must be above 0, got {self.margin}")

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's bounds (lower, upper): accept H0 at or below the lower, H1 at or above the upper."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, n: int, mean: float, variance: float, third: float = 0.0) -> float:
        """The log-likelihood ratio of H1 (mean M) against H0 (mean 0) for n differences of this mean, variance
        and third central moment (the mean corrected for skewness by Johnson's formula; 0 for symmetric data)."""
        if n < 2:
            return 0.0
        var = max(variance, VARIANCE_FLOOR)
        if self.skew_remedy:
            mean += third / (6 * var * n) + third * (mean - self.margin / 2) ** 2 / (3 * var * var)
        return n * self.margin * (2 * mean - self.margin) / (2 * var)

    def verdict(self, n: int, llr: float, skew: float = 0.0) -> Verdict:
        lower, upper = self.bounds
        skew = skew if self.skew_remedy else 0.0
        if llr >= upper and n >= skewed_min_pairs(skew, Verdict.H1):
            return Verdict.H1
        if llr <= lower and n >= skewed_min_pairs(skew, Verdict.H0):
            return Verdict.H0
        return Verdict.INCONCLUSIVE


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def t_quantile(level: float, dof: int) -> float:
    """The two-sided Student t quantile for a ``level`` interval (1.96 for large dof at 0.95)."""
    from scipy import stats  # here: scipy costs ~40 MB, and every `abluxx` command imports this module

    return float(stats.t.ppf(0.5 + level / 2, dof))


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
    bounds: tuple[float, float]
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


def summarize(test: Sprt, diffs: Sequence[float]) -> Summary:
    """The test applied to the paired differences so far, in the order they were played."""
    n = len(diffs)
    ci = mean_ci(diffs)
    third, skew = moments(diffs)
    llr = test.llr(n, ci.mean, variance(diffs), third)
    return Summary(
        pairs=n,
        mean_diff=ci.mean,
        ci95=(ci.low, ci.high),
        llr=llr,
        bounds=test.bounds,
        verdict=test.verdict(n, llr, skew),
        skew=skew,
        wins=sum(d > 0 for d in diffs),
        losses=sum(d < 0 for d in diffs),
        ties=sum(d == 0 for d in diffs),
    )


@dataclass
class Sequential:
    """The test run one pair at a time, in the pairs' order, as a duel runs it: ``add`` each difference; the
    verdict is the one at the first pair count whose LLR crosses a bound (``decided_at``), and differences added
    after it, or past ``max_pairs``, change nothing (``ignored`` counts them)."""

    test: Sprt
    max_pairs: int
    n: int = 0
    sums: tuple[float, float, float] = (0.0, 0.0, 0.0)  # of d, d², d³
    verdict: Verdict = Verdict.INCONCLUSIVE
    ignored: int = 0

    @property
    def done(self) -> bool:
        """A verdict, or the budget spent."""
        return self.verdict is not Verdict.INCONCLUSIVE or self.n >= self.max_pairs

    def add(self, d: float) -> None:
        if self.done:
            self.ignored += 1
            return
        n, (s1, s2, s3) = self.n + 1, self.sums
        self.n, self.sums = n, (s1 + d, s2 + d * d, s3 + d * d * d)
        if n >= MIN_PAIRS:
            s1, s2, s3 = (x / n for x in self.sums)
            m2 = max(0.0, s2 - s1 * s1)
            m3 = s3 - 3 * s1 * s2 + 2 * s1**3 if m2 > VARIANCE_FLOOR else 0.0
            llr = self.test.llr(n, s1, m2 * n / (n - 1), m3)
            self.verdict = self.test.verdict(n, llr, m3 / m2**1.5 if m3 else 0.0)


def sequential(test: Sprt, diffs: Sequence[float], max_pairs: int) -> tuple[Verdict, int]:
    """Run the test over ``diffs`` one pair at a time, as a duel does: (verdict, pairs used). It stops at the first
    pair whose LLR crosses a bound, or at ``max_pairs`` (or the end of ``diffs``) with INCONCLUSIVE."""
    run = Sequential(test, max_pairs)
    for d in diffs:
        if run.done:
            break
        run.add(d)
    return run.verdict, run.n
