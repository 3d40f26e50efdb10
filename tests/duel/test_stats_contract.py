"""The duel's test (referee/stats.py) as its callers use it: the errors a bad setting gives, the verdict exactly at a
bound and against the bounds it is handed, the LLR from the second pair on, the overshoot move of a single ladder
height, the summary against a path of other pairs, the likelihood's scale and Newton's search on hard samples.
Each pins a behaviour that mutation testing (scripts/mutation.py stats) found no other test held."""

from __future__ import annotations

import math
import random

import pytest

from referee.likelihood import empirical_llr, tilt
from referee.stats import MIN_PAIRS, Ladder, LlrPath, Sequential, Sprt, Verdict, summarize


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 0.7}, "alpha must be between 0 and 0.5 (exclusive), got 0.7"),
        ({"beta": 0.0}, "beta must be between 0 and 0.5 (exclusive), got 0.0"),
        ({"margin": 0.0}, "the margin must be above 0, got 0.0"),
        ({"margin": math.inf}, "the margin must be above 0, got inf"),
        ({"method": "exact"}, "the method must be one of empirical, normal, got 'exact'"),
    ],
)
def test_a_bad_setting_is_refused_with_its_name_and_value(kwargs: dict, message: str) -> None:
    """`abluxx duel --alpha 0.7` and a config's bad margin show this text to the user."""
    with pytest.raises(ValueError) as e:
        Sprt(**kwargs)
    assert str(e.value) == message


def test_a_verdict_at_a_bound_and_against_the_bounds_handed_in() -> None:
    """H1 at or above the upper bound, H0 at or below the lower (as documented), and the bounds a caller hands in
    (the overshoot-corrected ones) are the ones used, not Wald's."""
    test = Sprt()
    lower, upper = test.bounds
    assert test.verdict(MIN_PAIRS, upper) is Verdict.H1 and test.verdict(MIN_PAIRS, lower) is Verdict.H0
    assert test.verdict(MIN_PAIRS, math.nextafter(upper, 0)) is Verdict.INCONCLUSIVE
    moved = (lower / 2, upper / 2)
    assert test.verdict(MIN_PAIRS, upper / 2, moved) is Verdict.H1
    assert test.verdict(MIN_PAIRS, lower / 2, moved) is Verdict.H0
    assert test.verdict(MIN_PAIRS, 0.0, moved) is Verdict.INCONCLUSIVE


def test_the_llr_counts_from_the_second_pair() -> None:
    """One pair says nothing (LLR 0); two already do, in the normal GSPRT and in the empirical one."""
    test = Sprt()
    assert test.llr(1, 5.0, 1.0) == 0.0
    assert test.llr(2, 1.0, 1.0) == pytest.approx(1.0)  # n M (2m - M) / (2 s²) = 2 (2 - 1) / 2
    two = summarize(test, [3.0, -1.0])
    expected = empirical_llr({3.0: 1, -1.0: 1}, test.margin)
    assert expected is not None and two.llr == pytest.approx(expected[0]) and two.llr != 0.0


def test_one_ladder_height_moves_the_bound_by_half_its_square_over_itself() -> None:
    """A single rise of 2 (E[H²] / (2 E[H]) = 4 / 4 = 1): the upper bound moves in by 1, not by half the bound."""
    test = Sprt()
    ladder = Ladder()
    for llr in (0.0, 2.0):
        ladder.add(llr)
    assert ladder.bounds(test) == (test.bounds[0], pytest.approx(test.bounds[1] - 1.0))


def test_a_summary_handed_the_path_of_other_pairs_computes_its_own() -> None:
    diffs = [3.0, -2.5, 1.0, -1.5, 0.5, 2.0, -3.0, 0.0, 4.5, -1.0] * 4
    test = Sprt()
    shorter = LlrPath(test)
    for d in diffs[:-3]:
        shorter.add(d)
    assert summarize(test, diffs, shorter) == summarize(test, diffs)


def test_the_summary_at_the_first_crossing_judges_by_the_moved_bounds() -> None:
    """A duel that crossed the overshoot-corrected upper bound below Wald's: its summary (what `abluxx duel`
    prints and stores) says H1, as the running test did, not inconclusive."""
    test = Sprt()
    for seed in range(200):
        rng = random.Random(seed)
        diffs = [rng.gauss(1.5, 3.0) for _ in range(400)]
        run = Sequential(test, 400)
        for d in diffs:
            if run.done:
                break
            run.add(d)
        if run.verdict is Verdict.H1 and run.path.llr < test.bounds[1]:
            break
    else:
        pytest.fail("no seeded duel crossed between the moved and Wald's upper bound")
    summary = summarize(test, diffs[: run.n])
    assert summary.verdict is Verdict.H1 and summary.llr < test.bounds[1] <= summary.bounds[1] + 1.0


@pytest.mark.parametrize("scale", [0.02, 50.0])
def test_the_empirical_llr_does_not_depend_on_the_unit_of_the_scores(scale: float) -> None:
    """Differences in tenths of a point or in hundreds (another measure's unit), with M in the same unit, give the
    same LLR: the likelihood's search has no absolute cut-off."""
    counts = {-2.0: 3, 0.0: 5, 1.0: 4, 6.0: 1, 2.5: 2}
    base = empirical_llr(counts, 1.0)
    scaled = empirical_llr({x * scale: c for x, c in counts.items()}, 1.0 * scale)
    assert base is not None and scaled is not None and scaled[0] == pytest.approx(base[0], rel=1e-9)


@pytest.mark.parametrize(
    ("values", "counts", "s"),
    [
        ([-1.0, 1000.0], [999.0, 1.0], 0.5),  # one far outlier: the root sits at the bracket's edge
        ([-1000.0, 1.0], [1.0, 999.0], -0.5),
        ([-3.0, -1.0, 0.5, 40.0, 90.0], [50.0, 40.0, 30.0, 2.0, 1.0], 2.0),
        ([-0.001, 0.002, 5.0], [100.0, 100.0, 1.0], 0.0004),
    ],
)
def test_tilt_finds_the_root_on_samples_where_newtons_first_step_leaves_the_bracket(
    values: list[float], counts: list[float], s: float
) -> None:
    """From a start of 0 and from far off, Newton's method kept inside the bracket (a bisection step where it would
    leave it) gives positive weights that sum to one and put the mean at s."""
    import numpy as np

    xs, cs = np.array(values), np.array(counts)
    n = cs.sum()
    for start in (0.0, 1e6, -1e6):
        lam, ll = tilt(xs, cs, s, start)
        pseudo = -max(1.0, math.log(n) / 2) * float(cs @ (xs - s)) / n
        pseudo = min(max(pseudo, float((xs - s).min())), float((xs - s).max()))
        ys, c = np.append(xs - s, pseudo), np.append(cs, 1.0)
        w = c / (1 + lam * ys) / (n + 1)
        assert (w > 0).all() and w.sum() == pytest.approx(1.0) and float(w @ ys) == pytest.approx(0.0, abs=1e-9)
        assert math.isfinite(ll) and ll == pytest.approx(float(c @ np.log1p(lam * ys)))
