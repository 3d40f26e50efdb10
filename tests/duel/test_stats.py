"""The duel's statistics (referee/stats.py): the GSPRT's LLR and bounds, its error rates on synthetic paired
differences, and the confidence intervals."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from scipy import stats

from referee.likelihood import empirical_llr, with_spread_prior
from referee.stats import (
    MIN_PAIRS,
    SKEW_WEIGHT,
    SPREAD_PRIOR,
    Sprt,
    Verdict,
    mean_ci,
    ratio_ci,
    summarize,
)


def test_bounds_are_walds() -> None:
    lower, upper = Sprt(alpha=0.05, beta=0.1).bounds
    assert lower == pytest.approx(math.log(0.1 / 0.95))
    assert upper == pytest.approx(math.log(0.9 / 0.05))


def test_the_normal_llr_is_the_sum_of_normal_log_likelihood_ratios() -> None:
    rng = random.Random(3)
    d = [rng.gauss(0.4, 3) for _ in range(50)]
    test = Sprt(margin=0.7, method="normal")
    sd = stats.tstd(d)  # the n - 1 sample variance
    direct = sum(stats.norm.logpdf(x, 0.7, sd) - stats.norm.logpdf(x, 0.0, sd) for x in d)
    assert test.llr(len(d), sum(d) / len(d), sd**2) == pytest.approx(direct)
    assert summarize(test, d).llr == pytest.approx(direct)


def most_likely(values: dict[float, float], s: float) -> list[float]:
    """The maximum-likelihood distribution on ``values`` (value: count) with mean ``s``, found here apart from
    referee.stats: scipy's constrained optimiser on the probabilities themselves."""
    from scipy import optimize

    xs, cs = list(values), list(values.values())
    total = sum(cs)
    got = optimize.minimize(
        lambda p: -sum(c * math.log(max(q, 1e-300)) for c, q in zip(cs, p, strict=True)),
        [c / total for c in cs], method="SLSQP", bounds=[(1e-12, 1.0)] * len(xs),
        constraints=[{"type": "eq", "fun": lambda p: sum(p) - 1},
                     {"type": "eq", "fun": lambda p: sum(q * x for q, x in zip(p, xs, strict=True)) - s}],
        options={"ftol": 1e-14, "maxiter": 500},
    )  # fmt: skip
    assert got.success, got
    return list(got.x)


def log_ratio(counts: dict[float, int], s: float) -> float:
    """The adjusted empirical log-likelihood ratio of mean ``s``: the counts with one pseudo-value s - a_n (mean
    - s), a_n = max(1, log(n) / 2) (Chen, Variyath and Abraham 2008), the most likely law with mean s against
    the empirical one."""
    n = sum(counts.values())
    mean = sum(x * c for x, c in counts.items()) / n
    seen: dict[float, float] = {x: float(c) for x, c in counts.items()}
    pseudo = s - max(1.0, math.log(n) / 2) * (mean - s)
    seen[pseudo] = seen.get(pseudo, 0.0) + 1
    p = most_likely(seen, s)
    return sum(c * (math.log(q) - math.log(c / (n + 1))) for c, q in zip(seen.values(), p, strict=True))


def test_the_llr_is_the_ratio_of_the_maximised_multinomial_likelihoods() -> None:
    """The empirical GSPRT's LLR is log R(M) - log R(0), each the likelihood of the counts (with the adjusting
    pseudo-value) under the most likely distribution on the seen values with that mean against the empirical
    one: fishtest's GSPRT on its pentanomial, here on 7 values."""
    counts = {-4.0: 3, -1.5: 7, 0.0: 9, 0.5: 6, 2.0: 8, 3.5: 4, 9.0: 3}  # skewed right, mean 0.98
    for margin in (1.0, 0.5, 2.5):
        llr, _ = empirical_llr(counts, margin)
        assert llr == pytest.approx(log_ratio(counts, margin) - log_ratio(counts, 0.0), abs=1e-5)
    d = [x for x, c in counts.items() for _ in range(c)]
    seen = with_spread_prior(counts, SPREAD_PRIOR)  # the share of ties estimated with one pseudo-pair
    assert summarize(Sprt(skew_weight=0.0), d).llr == pytest.approx(empirical_llr(seen, 1.0)[0])
    assert summarize(Sprt(skew_weight=0.0, spread_prior=0.0), d).llr == pytest.approx(empirical_llr(counts, 1.0)[0])
    assert summarize(Sprt(), d).skew == pytest.approx(stats.skew(d))
    assert (summarize(Sprt(), d).wins, summarize(Sprt(), d).ties) == (21, 9)


def test_a_hypothesis_outside_the_values_seen_falls_back_to_the_normal_llr() -> None:
    """A mean at or outside the edge of the values seen has empirical likelihood 0 whatever the truth's unseen
    tail: counter against counter, 29 ties and one gain, would say H1 at once. There the test uses the normal
    GSPRT's LLR (with the skewness term), which says H1 for a clear gain, H0 for three small ones among ties, and
    nothing for that duel: one differing pair is too few to estimate a variance on (STAND_IN_SPREAD, issue 49)."""
    test = Sprt()
    for seen in ({0.0: 29, 3.0: 1}, {0.0: 30}, {0.5: 10, 3.0: 10}, {-3.0: 10, 0.5: 10}, {0.2: 10, 0.7: 10},
                 {-1.0: 10, 1.0: 10}):  # fmt: skip
        assert empirical_llr(seen, 1.0) is None
        d = [x for x, c in seen.items() for _ in range(c)]
        mean = sum(d) / len(d)
        spread = len(set(d)) > 1
        share = 1 - (max(seen.values()) - 1) / len(d)  # the most common difference's repeats set aside
        term = SKEW_WEIGHT * stats.skew(d) / statistics.stdev(d) * share if spread else 0.0  # as with the EL
        assert summarize(test, d).llr == pytest.approx(test.llr(len(d), mean, stats.tvar(d) if spread else 0) + term)
    assert summarize(test, [0.0] * 29 + [3.0]).verdict is Verdict.INCONCLUSIVE
    assert summarize(test, [0.0] * 28 + [0.5] * 2).verdict is Verdict.INCONCLUSIVE
    assert summarize(test, [0.0] * 27 + [0.5] * 3).verdict is Verdict.H0
    assert summarize(test, [0.5, 3.0] * 15).verdict is Verdict.H1
    assert empirical_llr({-1.0: 10, 1.5: 10}, 1.0) is not None  # 0 and 1 strictly inside


def test_mean_ci_is_students_t_interval() -> None:
    d = [1.0, 4.0, -2.0, 3.5, 0.5, 2.0]
    low, high = stats.t.interval(0.95, len(d) - 1, loc=sum(d) / len(d), scale=stats.sem(d))
    ci = mean_ci(d)
    assert (ci.low, ci.high) == (pytest.approx(low), pytest.approx(high))
    assert math.isinf(mean_ci([1.0]).low)


def test_ratio_ci_of_single_game_clusters_is_the_plain_interval() -> None:
    d = [1.0, 4.0, -2.0, 3.5, 0.5, 2.0]
    a, b = ratio_ci([(x, 1) for x in d]), mean_ci(d)
    assert (a.mean, a.low, a.high) == (pytest.approx(b.mean), pytest.approx(b.low), pytest.approx(b.high))
    # clusters of several games: the interval widens with the clusters' spread, not the games'
    wide = ratio_ci([(10.0, 2), (-6.0, 2), (8.0, 2), (-4.0, 2)])
    assert wide.mean == pytest.approx(1.0) and wide.low < -3 and wide.high > 5


def test_ratio_ci_of_several_games_per_cluster_has_one_degree_of_freedom_per_cluster_less_one() -> None:
    # issue 22 item 8: four deals of two games each is J - 1 = 3 degrees of freedom, not games - 1 = 7
    clusters = [(10.0, 2), (-6.0, 2), (8.0, 2), (-4.0, 2)]
    got = ratio_ci(clusters)
    se = math.sqrt(4 / 3 * (8.0**2 + 8.0**2 + 6.0**2 + 6.0**2)) / 8  # residuals s_j - mean * n_j, mean 1
    half = stats.t.ppf(0.975, 3) * se
    assert got.mean == pytest.approx(1.0)
    assert (got.low, got.high) == (pytest.approx(1.0 - half), pytest.approx(1.0 + half))
    assert got.half_width == pytest.approx(6.496, abs=1e-3)  # 7 degrees of freedom would give 4.83
    # unequal clusters: the ratio of sums, not the mean of the clusters' means
    uneven = ratio_ci([(3.0, 1), (3.0, 3), (0.0, 2)], level=0.9)
    assert uneven.mean == pytest.approx(1.0)
    se = math.sqrt(3 / 2 * (2.0**2 + 0.0**2 + 2.0**2)) / 6
    assert uneven.half_width == pytest.approx(stats.t.ppf(0.95, 2) * se)


def test_no_verdict_before_the_minimum_pairs_then_a_clear_one() -> None:
    test = Sprt(margin=0.5)
    assert summarize(test, [5.0, 6.0, 5.5] * 9).verdict is Verdict.INCONCLUSIVE
    assert summarize(test, [5.0, 6.0, 5.5] * 10).verdict is Verdict.H1
    assert summarize(test, [-5.0, -6.0, -5.5] * 10).verdict is Verdict.H0
    assert summarize(test, [0.0] * MIN_PAIRS).verdict is Verdict.INCONCLUSIVE  # identical play: no spread yet


@pytest.mark.parametrize("bad", [{"alpha": 0.0}, {"alpha": 0.5}, {"beta": -0.1}, {"margin": 0.0}, {"margin": -1}])
def test_bad_settings_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Sprt(**bad)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_llr_carries_the_skewness_term(sign: float) -> None:
    """Issue 21 item 3: the duel's LLR is the empirical one plus SKEW_WEIGHT * g1 * M / sd (g1 the sample
    skewness, sd with n - 1), times the share of pairs left when the most common difference's repeats are set
    aside (issue 49): a long tail of gains raises it, a long tail of losses lowers it, by the same amount
    for the mirrored values; symmetric values leave it as it is."""
    counts = {sign * x: c for x, c in {-4.0: 3, -1.5: 7, 0.0: 9, 0.5: 6, 2.0: 8, 3.5: 4, 9.0: 3}.items()}
    d = [x for x, c in counts.items() for _ in range(c)]
    for margin in (1.0, 2.5):
        term = SKEW_WEIGHT * stats.skew(d) * margin / statistics.stdev(d) * 32 / 40  # 0's 8 repeats set aside
        assert sign * term > 0.1
        got = summarize(Sprt(margin=margin), d).llr
        assert got == pytest.approx(empirical_llr(with_spread_prior(counts, SPREAD_PRIOR), margin)[0] + term)
    symmetric = [*d, *(-x for x in d)]
    assert summarize(Sprt(), symmetric).llr == pytest.approx(summarize(Sprt(skew_weight=0.0), symmetric).llr)
    assert SKEW_WEIGHT == 0.75  # as docs/duel.md measures it
