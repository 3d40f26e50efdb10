"""The fit's parts, each against what it must compute: Anderson's mix on a linear iteration, the sweeps a fit runs,
a local update's reach, a tie's truncated moments against scipy's truncated normal."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import log_ndtr

from referee.rating import BETA, SIGMA, Ratings, anderson, draw_margin, environment, history, rate
from referee.rating.ep import truncate_above, truncate_within


def _linear(size: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x -> A x + b with a slow direction (eigenvalues 0.99 down to 0.5), and its fixed point."""
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(size, size)))
    a = q @ np.diag(np.linspace(0.99, 0.5, size)) @ q.T
    b = rng.normal(size=size)
    return a, b, np.linalg.solve(np.eye(size) - a, b)


def _run(mix: anderson.Anderson, a: np.ndarray, b: np.ndarray, x: np.ndarray, steps: int) -> list[np.ndarray]:
    out = []
    for _ in range(steps):
        x = mix.propose(x, a @ x + b)
        out.append(x)
    return out


def test_anderson_finds_a_linear_iterations_fixed_point_in_a_few_steps() -> None:
    """Four dimensions, five remembered: after six steps the mix is the fixed point, where plain steps at a rate
    of 0.99 would still be 0.94 of the way from it; the first step is the plain one."""
    a, b, fixed = _linear()
    start = np.zeros(4)
    steps = _run(anderson.Anderson(np.ones(4)), a, b, start, 6)
    assert steps[0] == pytest.approx(b)
    assert steps[-1] == pytest.approx(fixed, abs=1e-8)


def test_anderson_after_forget_mixes_as_a_new_one() -> None:
    a, b, _ = _linear()
    used = anderson.Anderson(np.ones(4), memory=3)
    x = _run(used, a, b, np.zeros(4), 5)[-1]
    used.forget()
    assert all(
        (p == q).all()
        for p, q in zip(_run(used, a, b, x, 4), _run(anderson.Anderson(np.ones(4), memory=3), a, b, x, 4), strict=True)
    )


def test_anderson_weights_a_coordinate_as_that_many_copies_of_it() -> None:
    """A weight of sqrt(2) on a coordinate mixes as the same iteration with that coordinate twice."""
    a, b, _ = _linear(3)
    twice = np.zeros((4, 4))
    twice[:3, :3], twice[3, :3] = a, a[2]
    copy_b = np.append(b, b[2])
    plain = _run(anderson.Anderson(np.ones(4)), twice, copy_b, np.zeros(4), 5)
    weighted = _run(anderson.Anderson(np.array([1, 1, np.sqrt(2)])), a, b, np.zeros(3), 5)
    assert np.concatenate([p[:3] for p in plain]) == pytest.approx(np.concatenate(weighted), abs=1e-9)


def _counting_sweeps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    sweep = history.Fit.sweep

    def counted(self: history.Fit) -> None:
        calls.append(1)
        sweep(self)

    monkeypatch.setattr(history.Fit, "sweep", counted)
    return calls


def test_a_fit_returns_the_sweeps_it_ran_and_stops_at_max_sweeps(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_sweeps(monkeypatch)
    games = [(("a", "b", "c"), (1, 2, 3)), (("b", "c"), (1, 2)), (("c", "a"), (1, 1))] * 5
    fit = Ratings("abc")
    for seats, places in games:
        fit.add(seats, places)
    assert fit.fit() == len(calls) > 1
    calls.clear()
    monkeypatch.setattr(history, "MAX_SWEEPS", 3)
    monkeypatch.setattr(history, "TOLERANCE", 0.0)
    assert fit.fit() == len(calls) == 3


def test_a_field_without_games_or_entrants_rates_at_the_prior() -> None:
    assert rate([], []).leaderboard() == []
    r = rate("ab", [])
    assert r.get("a").mu == pytest.approx(25) and r.get("b").sigma == pytest.approx(25 / 3)


def test_a_local_update_is_trueskills_update_and_moves_only_its_seats() -> None:
    """Ratings that never refit on a read fold a new game in by local passes over it alone: one game on the prior
    is trueskill's one-pass update, and entrants not in it keep their ratings exactly."""
    local = Ratings("abcd", refit_share=None)
    local.add(("a", "b"), (1, 2))
    env = environment()
    (a,), (b,) = env.rate([(env.create_rating(),), (env.create_rating(),)], ranks=[0, 1])
    assert [local.get("a").mu, local.get("a").sigma, local.get("b").mu] == pytest.approx([a.mu, a.sigma, b.mu], 1e-5)
    fitted = rate("abcd", [(("a", "b"), (1, 2)), (("c", "d"), (1, 2)), (("a", "c"), (2, 1))])
    fitted.refit_share = None
    before = fitted.all()
    fitted.add(("a", "b"), (2, 1))
    after = fitted.all()
    assert after["c"] == before["c"] and after["d"] == before["d"] and after["a"].mu < before["a"].mu


@pytest.mark.parametrize("mu", [-6.0, -0.7, 0.0, 0.4, 2.5, 9.0])
def test_a_ties_truncated_moments_are_scipys(mu: float) -> None:
    """|d| <= eps for d ~ N(mu, var): the mean and variance of scipy's truncated normal, on either side."""
    var, eps = 4.0, 0.5
    sd = var**0.5
    want = stats.truncnorm((-eps - mu) / sd, (eps - mu) / sd, loc=mu, scale=sd)
    got_mu, got_var = truncate_within(np.array([mu]), np.array([var]), eps)
    assert [got_mu[0], got_var[0]] == pytest.approx([want.mean(), want.var()], rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("mu", [-6.0, -0.7, 0.0, 2.5])
def test_a_wins_truncated_moments_are_scipys(mu: float) -> None:
    var, eps = 4.0, 0.5
    sd = var**0.5
    want = stats.truncnorm((eps - mu) / sd, np.inf, loc=mu, scale=sd)
    got_mu, got_var = truncate_above(np.array([mu]), np.array([var]), eps)
    assert [got_mu[0], got_var[0]] == pytest.approx([want.mean(), want.var()], rel=1e-6, abs=1e-9)


def test_how_well_two_entrants_difference_is_known_is_the_exact_posteriors() -> None:
    """200 games of two entrants, each winning half: their difference is known to about 0.52 (the exact posterior
    of the difference, integrated on a grid: the prior on it is N(0, 2 sigma0^2), each game a probit in it), far
    better than either level; an entrant who joined after the fit has only sqrt(sigma_a^2 + sigma_b^2)."""
    eps, d = draw_margin(), np.linspace(-15, 15, 20001)
    wins = log_ndtr((d - eps) / (np.sqrt(2) * BETA)) + log_ndtr((-d - eps) / (np.sqrt(2) * BETA))
    log_p = -d * d / (4 * SIGMA**2) + 100 * wins
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    exact = np.sqrt((p * (d - (p * d).sum()) ** 2).sum())
    fit = rate("ab", [(("a", "b"), (1, 2)), (("a", "b"), (2, 1))] * 100)
    assert fit.difference_sd("a", "b") == pytest.approx(exact, abs=0.01)
    fit.join("c")
    assert fit.difference_sd("c", "a") == pytest.approx(np.hypot(fit.get("c").sigma, fit.get("a").sigma))
