"""The duel's statistics (referee/stats.py) at their edges: empty and one-value inputs, the first count that gives
an interval, the skewness's cut-offs and the summary's counts. Exact values, computed here from the formulas in
the docstrings (the behaviour under sampling is in test_stats.py)."""

from __future__ import annotations

import math
import statistics

import pytest
from scipy import stats

from referee.likelihood import empirical_llr, tilt, with_spread_prior
from referee.stats import (
    MIN_PAIRS,
    MIN_SPREAD,
    SKEW_WEIGHT,
    SPREAD_PRIOR,
    STAND_IN_SPREAD,
    VARIANCE_FLOOR,
    Interval,
    Ladder,
    LlrPath,
    Sequential,
    Sprt,
    Verdict,
    mean_ci,
    moments,
    ratio_ci,
    sequential,
    summarize,
    variance,
)

UNBOUNDED = (-math.inf, math.inf)


def test_mean_ci_of_nothing_of_one_and_of_two_values() -> None:
    assert mean_ci([]) == Interval(0.0, *UNBOUNDED)
    assert mean_ci([4.0]) == Interval(4.0, *UNBOUNDED)
    two = mean_ci([1.0, 3.0])
    half = stats.t.ppf(0.975, 1) * math.sqrt(2.0 / 2)
    assert (two.mean, two.low, two.high) == (2.0, pytest.approx(2.0 - half), pytest.approx(2.0 + half))


def test_ratio_ci_of_nothing_of_one_cluster_and_of_two() -> None:
    assert ratio_ci([]) == Interval(0.0, *UNBOUNDED) and ratio_ci([(0.0, 0)]) == Interval(0.0, *UNBOUNDED)
    assert ratio_ci([(5.0, 1)]) == Interval(5.0, *UNBOUNDED)  # one game
    assert ratio_ci([(6.0, 4)]) == Interval(1.5, *UNBOUNDED)  # one cluster of four games
    two = ratio_ci([(2.0, 1), (4.0, 3)])  # mean 6/4; residuals 2 - 1.5 = 0.5 and 4 - 4.5 = -0.5
    se = math.sqrt(2 / 1 * (0.25 + 0.25)) / 4
    assert two.mean == 1.5 and two.half_width == pytest.approx(stats.t.ppf(0.975, 1) * se)


def test_variance_and_moments_need_enough_values_and_spread() -> None:
    assert variance([]) == 0.0 and variance([3.0]) == 0.0 and variance([1.0, 3.0]) == 2.0
    assert moments([1.0, 9.0]) == (0.0, 0.0)  # fewer than three
    d = [0.0, 0.0, 3.0]  # mean 1; m2 = (1 + 1 + 4) / 3 = 2; m3 = (-1 - 1 + 8) / 3 = 2
    assert moments(d) == (pytest.approx(2.0), pytest.approx(2.0 / 2**1.5))
    assert moments([1.0, -1.0, 0.0]) == (0.0, 0.0)  # symmetric: no skew
    assert moments([2.0, 2.0, 2.0, 2.0]) == (0.0, 0.0)  # no spread
    tiny = math.sqrt(VARIANCE_FLOOR)  # m2 exactly at the floor counts as no spread
    assert moments([0.0, 2 * tiny, 0.0, 2 * tiny])[1] == 0.0


def test_a_summary_counts_wins_losses_ties_and_carries_the_test() -> None:
    test = Sprt(margin=0.5)
    diffs = [2.0, -1.0, 0.0, 0.0, 3.0, 1.0]
    s = summarize(test, diffs)
    ci = mean_ci(diffs)
    assert (s.pairs, s.wins, s.losses, s.ties) == (6, 3, 1, 2)
    assert s.mean_diff == ci.mean and s.ci95 == (ci.low, ci.high) and s.bounds == test.bounds
    found = empirical_llr(with_spread_prior({2.0: 1, -1.0: 1, 0.0: 2, 3.0: 1, 1.0: 1}, SPREAD_PRIOR), 0.5)
    term = SKEW_WEIGHT * moments(diffs)[1] * 0.5 / statistics.stdev(diffs) * 5 / 6  # the tie's repeat set aside
    assert found is not None and s.skew == moments(diffs)[1] and s.llr == pytest.approx(found[0] + term)
    assert summarize(test, [1.0]).llr == 0.0 and summarize(test, []).pairs == 0


def test_the_running_test_is_the_batch_test_at_every_count_and_ignores_what_comes_after() -> None:
    test = Sprt(margin=1.0)
    diffs = [3.0, 1.0, 4.0, 1.0, 5.0, 0.0, 2.0, 6.0] * 6  # skewed a little, clearly better than 1
    run = Sequential(test, max_pairs=100)
    for i, d in enumerate(diffs, 1):
        run.add(d)
        if run.done:
            break
        assert summarize(test, diffs[:i]).verdict is Verdict.INCONCLUSIVE
    assert run.verdict is Verdict.H1 and run.n >= MIN_PAIRS
    s = summarize(test, diffs[: run.n])
    assert s.verdict is Verdict.H1 and summarize(test, diffs[: run.n - 1]).verdict is Verdict.INCONCLUSIVE
    assert sequential(test, diffs, 100) == (Verdict.H1, run.n)
    run.add(-50.0)
    run.add(-50.0)
    assert run.ignored == 2 and run.n == sequential(test, diffs, 100)[1] and run.verdict is Verdict.H1
    budget = Sequential(test, max_pairs=3)
    for d in (1.0, 2.0, 3.0, 4.0):
        budget.add(d)
    assert (budget.n, budget.ignored, budget.done, budget.verdict) == (3, 1, True, Verdict.INCONCLUSIVE)
    assert sequential(test, [0.5] * 10, 4) == (Verdict.INCONCLUSIVE, 4)


def test_the_overshoot_estimate_is_half_the_ladder_heights_second_moment_over_their_first() -> None:
    """Siegmund's E[H²] / (2 E[H]) from the LLR's own ladder heights, each side apart, starting at the first
    LLR seen; a side with no ladder height yet keeps Wald's bound, and no move passes half the bound."""
    test = Sprt()
    lower, upper = test.bounds
    ladder = Ladder()
    assert ladder.bounds(test) == (lower, upper)
    for llr in (0.5, 0.9, 0.7, 1.0, 0.2, 0.4, -0.4):  # up 0.4 then 0.1; down 0.3 then 0.6
        ladder.add(llr)
    assert ladder.up == (pytest.approx(0.5), pytest.approx(0.17)) and ladder.down == (
        pytest.approx(0.9),
        pytest.approx(0.45),
    )
    assert ladder.bounds(test) == (pytest.approx(lower + 0.45 / 1.8), pytest.approx(upper - 0.17 / 1.0))
    assert Ladder().bounds(test) == test.bounds and Sprt(overshoot=False).bounds == test.bounds
    assert ladder.bounds(Sprt(overshoot=False)) == (lower, upper)
    big = Ladder()
    for llr in (0.0, 10.0, -10.0):
        big.add(llr)
    assert big.bounds(test) == (pytest.approx(lower / 2), pytest.approx(upper / 2))


def test_the_path_moves_the_bounds_from_the_minimum_pairs_on() -> None:
    """The ladder starts at the LLR of the MIN_PAIRS-th pair: the summary's bounds are Wald's before it."""
    diffs = [3.0, -2.5, 1.0, -1.5, 0.5, 2.0, -3.0, 0.0, 4.5, -1.0] * 6
    assert summarize(Sprt(), diffs[: MIN_PAIRS - 1]).bounds == Sprt().bounds
    moved = summarize(Sprt(), diffs).bounds
    assert moved[0] > Sprt().bounds[0] or moved[1] < Sprt().bounds[1]


def test_tilt_solves_the_weights_equation_inside_its_bracket() -> None:
    """The weights 1 / (1 + λ y) are positive, sum to one over the counts and give mean s; a warm start far off
    converges to the same root; every value at s gives (0, 0)."""
    import numpy as np

    xs, cs = np.array([-2.0, 0.0, 1.0, 6.0]), np.array([3.0, 5.0, 4.0, 1.0])
    for s in (-1.0, 0.0, 0.8, 2.5):
        lam, ll = tilt(xs, cs, s)
        pseudo = s - max(1.0, math.log(13) / 2) * ((xs @ cs) / 13 - s)
        pseudo = min(max(pseudo, -2.0), 6.0)  # kept within the values seen (s = -1 moves it)
        ys, c = np.append(xs, pseudo) - s, np.append(cs, 1.0)
        w = c / (1 + lam * ys) / 14
        assert (w > 0).all() and w.sum() == pytest.approx(1.0) and (w * ys).sum() == pytest.approx(0.0, abs=1e-9)
        assert ll == pytest.approx(float(c @ np.log1p(lam * ys)))
        assert tilt(xs, cs, s, start=50.0)[0] == pytest.approx(lam) == tilt(xs, cs, s, start=-50.0)[0]
    assert tilt(np.array([2.0]), np.array([7.0]), 2.0) == (0.0, 0.0)


def test_a_clear_lead_far_from_both_hypotheses_is_decided_at_the_minimum_pairs() -> None:
    """Differences of mean 14 and sd about 8 (greedy against random at 3 players), both 0 and M far below the
    sample's mean but inside its range: the pseudo-value kept within the values seen, the LLR crosses the upper
    bound at MIN_PAIRS (left at the sample's far side, it explained mean 0 and mean M alike: LLR 0.1 to 0.4 over
    200 such pairs, never a verdict)."""
    diffs = [14.0, 22.0, -3.0, 9.5, 18.0, 27.0, 11.0, 6.5, 35.0, 13.0, -6.5, 16.0, 20.5, 8.0, 12.0] * 2
    s = summarize(Sprt(), diffs)
    assert s.verdict is Verdict.H1 and s.pairs == MIN_PAIRS


def test_the_skewness_term_from_three_pairs_and_never_without_spread() -> None:
    """The skewness term is in the LLR from the third pair on (the sample skewness needs three), and is 0 where the
    pairs have no spread (the normal LLR alone, as ``moments`` prints skewness 0 there). The normal method (the
    plain GSPRT kept for comparison) has no such term and uses the pairs' own variance, however small."""
    d = [-1.0, 0.5, 4.0]
    found = empirical_llr({x: 1 for x in d}, 1.0)
    assert found is not None
    term = SKEW_WEIGHT * moments(d)[1] / statistics.stdev(d)
    assert abs(term) > 0.1 and summarize(Sprt(), d).llr == pytest.approx(found[0] + term)
    flat = [0.5] * 30
    assert summarize(Sprt(), flat).llr == pytest.approx(Sprt().llr(30, 0.5, 0.0))
    close = [0.1, 0.3, 0.2, 0.5, 0.25]  # their squared deviations sum to well under 1
    normal = Sprt(method="normal", overshoot=False)
    assert summarize(normal, close).llr == pytest.approx(normal.llr(5, statistics.fmean(close), stats.tvar(close)))


def test_the_first_look_needs_min_pairs_and_enough_pairs_that_differ() -> None:
    """``Sprt.looks`` at its edges (issue 49): MIN_PAIRS pairs, of which MIN_SPREAD differ from the most common
    difference, STAND_IN_SPREAD where the normal LLR stands in; ``min_spread=0`` is the test before (no rule)."""
    test = Sprt()
    assert (MIN_SPREAD, STAND_IN_SPREAD) == (3, 3)
    assert not test.looks(MIN_PAIRS - 1, MIN_PAIRS - 1) and test.looks(MIN_PAIRS, MIN_SPREAD)
    assert not test.looks(MIN_PAIRS, MIN_SPREAD - 1) and not test.looks(100, MIN_SPREAD - 1)
    assert not test.looks(MIN_PAIRS, STAND_IN_SPREAD - 1, stand_in=True)
    assert test.looks(MIN_PAIRS, STAND_IN_SPREAD, stand_in=True)
    before = Sprt(min_spread=0)
    assert before.looks(MIN_PAIRS, 0) and before.looks(MIN_PAIRS, 0, stand_in=True)
    assert not before.looks(MIN_PAIRS - 1, MIN_PAIRS - 1)
    assert Sprt(min_spread=8).looks(MIN_PAIRS, 8, stand_in=True) and not Sprt(min_spread=8).looks(MIN_PAIRS, 7, True)
    assert test.verdict(MIN_PAIRS, 100.0) is Verdict.H1  # spread None: every pair counts as differing
    assert test.verdict(MIN_PAIRS, 100.0, spread=2) is Verdict.INCONCLUSIVE
    assert test.verdict(MIN_PAIRS, -100.0, spread=2, stand_in=True) is Verdict.INCONCLUSIVE
    # a longer wait where the normal LLR stands in (the test before issue 49's third round: 6) is still a setting
    six = Sprt(stand_in_spread=6)
    assert six.looks(MIN_PAIRS, 5) and not six.looks(MIN_PAIRS, 5, stand_in=True) and six.looks(MIN_PAIRS, 6, True)
    assert six.verdict(MIN_PAIRS, -100.0, spread=5) is Verdict.H0
    assert six.verdict(MIN_PAIRS, -100.0, spread=5, stand_in=True) is Verdict.INCONCLUSIVE
    few = [0.0] * 25 + [0.5] * 5  # the normal LLR stands in (no pair below 0): H0 with 3, nothing yet with 6
    assert summarize(test, few).verdict is Verdict.H0 and summarize(six, few).verdict is Verdict.INCONCLUSIVE
    assert test.verdict(MIN_PAIRS, -100.0, spread=6, stand_in=True) is Verdict.H0


def test_the_spread_is_the_pairs_off_the_most_common_difference_and_the_ladder_starts_at_the_first_look() -> None:
    """The spread counts the pairs that differ from the mode, whatever the mode is (+1 here, not 0); the LLR is
    kept, and the overshoot's ladder started, only from the first look on: Wald's bounds before it."""
    path = LlrPath(Sprt())
    for d in [1.0] * 40 + [0.0, 2.0]:
        path.add(d)
    assert (path.n, path.spread, path.looking) == (42, 2, False)
    assert not path.ladder.started and path.bounds == Sprt().bounds and path.verdict is Verdict.INCONCLUSIVE
    llr = path.current()  # computed when asked, not stored
    assert path.llr == 0.0 and llr != 0.0
    path.add(-1.0)
    assert (path.spread, path.looking, path.ladder.started) == (3, True, True) and path.llr == path.current()
    assert summarize(Sprt(), [1.0] * 40 + [0.0, 2.0]).verdict is Verdict.INCONCLUSIVE
    # 0 and M inside the values seen: the empirical LLR, which needs only MIN_SPREAD differing pairs
    clear = [0.5] * 27 + [-1.0, 2.0, 3.0]
    walk = LlrPath(Sprt())
    for d in clear:
        walk.add(d)
    assert (walk.spread, walk.stand_in, walk.verdict) == (3, False, Verdict.H1)
    assert summarize(Sprt(), clear).verdict is Verdict.H1
    assert Sprt().verdict(MIN_PAIRS, 100.0, spread=MIN_SPREAD) is Verdict.H1  # not a stand-in unless said
