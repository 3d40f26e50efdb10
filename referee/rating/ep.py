"""Expectation propagation for TrueSkill's factor graph over a whole history of games, vectorised on numpy.

Each game of n seats (in place order) is TrueSkill's free-for-all: performance p_k ~ N(skill_k, beta^2), and for
each neighbouring pair of places a difference d = p_k - p_{k+1} truncated to d > eps (a better place) or
|d| <= eps (a tie). A game's factor sends each of its players' skills one Gaussian message; a skill's marginal is
its prior times every message it receives. Updating a game: divide its old messages out of its players' marginals
(the cavity), run the game's own chain of difference factors to convergence (``game_messages``, for every game of
one size at once), and put the new messages back. Natural parameters throughout: precision ``pi`` and
precision-adjusted mean ``tau`` (mu = tau / pi, sigma^2 = 1 / pi).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.special import log_ndtr

Floats = NDArray[np.float64]
LOG_ROOT_2PI = 0.5 * np.log(2 * np.pi)
TINY = 1e-12  # the least precision a truncation message keeps (one that says almost nothing)
# passes up and down a game's chain of differences: one for 2 seats (exact), else one per difference and at least
# 3, at most INNER; a fit then lands within 1e-4 of six passes (8.5e-5 measured on fixed tables of 4: more than the
# fit's convergence tolerance of 1e-5, far less than the two decimals a rating is shown with) at about half the
# cost (docs/notes/2026-12-06-rating-speed.md)
INNER = 6


def _log_pdf(x: Floats) -> Floats:
    return -0.5 * x * x - LOG_ROOT_2PI


def truncate_above(mu: Floats, var: Floats, eps: float) -> tuple[Floats, Floats]:
    """Mean and variance of N(mu, var) restricted to d > eps (the better place won by more than the margin)."""
    sd = np.sqrt(var)
    t = (mu - eps) / sd
    v = np.exp(_log_pdf(t) - log_ndtr(t))
    w = np.clip(v * (v + t), 0.0, 1.0 - 1e-12)
    return mu + sd * v, var * (1.0 - w)


def truncate_within(mu: Floats, var: Floats, eps: float) -> tuple[Floats, Floats]:
    """Mean and variance of N(mu, var) restricted to |d| <= eps (a tie), computed on the mirrored side where the
    interval lies below the mean, so a tie far from the mean loses no precision."""
    sd = np.sqrt(var)
    sign = np.where(mu < 0, -1.0, 1.0)
    m = np.abs(mu)
    a, b = (-eps - m) / sd, (eps - m) / sd
    log_z = log_ndtr(b) + np.log(-np.expm1(np.minimum(log_ndtr(a) - log_ndtr(b), -1e-300)))
    pa, pb = np.exp(_log_pdf(a) - log_z), np.exp(_log_pdf(b) - log_z)
    shift = pa - pb
    factor = np.clip(1.0 + a * pa - b * pb - shift * shift, 1e-12, 1.0)
    return sign * (m + sd * shift), var * factor


def _to_diff(
    a_pi: Floats, a_tau: Floats, b_pi: Floats, b_tau: Floats, tie: NDArray[np.bool_], eps: float
) -> tuple[Floats, Floats, Floats, Floats, Floats, Floats]:
    """One difference factor: from the messages of its upper and lower performance, the truncation's message as
    (mean, variance), and those two messages as (mean, variance)."""
    mu_a, var_a, mu_b, var_b = a_tau / a_pi, 1.0 / a_pi, b_tau / b_pi, 1.0 / b_pi
    c_mu, c_var = mu_a - mu_b, var_a + var_b
    new_mu, new_var = truncate_above(c_mu, c_var, eps)
    if tie.any():  # ties are few: their moments only where they are
        new_mu[tie], new_var[tie] = truncate_within(c_mu[tie], c_var[tie], eps)
    t_pi = np.maximum(1.0 / new_var - 1.0 / c_var, TINY)
    t_tau = new_mu / new_var - c_mu / c_var
    return t_tau / t_pi, 1.0 / t_pi, mu_a, var_a, mu_b, var_b


def game_messages(
    cav_mu: Floats, cav_var: Floats, ties: NDArray[np.bool_], beta2: float, eps: float
) -> tuple[Floats, Floats, Floats]:
    """Every game of one size at once: cavities (G, n) of the seats in place order and ``ties`` (G, n - 1), True
    where neighbouring places are equal. Returns the game factors' messages to the skills as (pi, tau), (G, n),
    and each difference's truncation message's precision (G, n - 1)."""
    g, n = cav_mu.shape
    pi0 = 1.0 / (cav_var + beta2)
    tau0 = cav_mu * pi0
    up_pi, up_tau = np.zeros((g, n - 1)), np.zeros((g, n - 1))  # difference j -> performance j
    dn_pi, dn_tau = np.zeros((g, n - 1)), np.zeros((g, n - 1))  # difference j -> performance j + 1
    sites = np.zeros((g, n - 1))
    order = list(range(n - 1)) + list(range(n - 3, 0, -1))
    for _ in range(1 if n == 2 else min(max(n - 1, 3), INNER)):
        for j in order:
            a_pi, a_tau = pi0[:, j] + (dn_pi[:, j - 1] if j else 0.0), tau0[:, j] + (dn_tau[:, j - 1] if j else 0.0)
            last = j + 1 == n - 1
            b_pi = pi0[:, j + 1] + (0.0 if last else up_pi[:, j + 1])
            b_tau = tau0[:, j + 1] + (0.0 if last else up_tau[:, j + 1])
            t_mu, t_var, mu_a, var_a, mu_b, var_b = _to_diff(a_pi, a_tau, b_pi, b_tau, ties[:, j], eps)
            sites[:, j] = 1.0 / t_var
            up_pi[:, j] = 1.0 / (t_var + var_b)
            up_tau[:, j] = (t_mu + mu_b) * up_pi[:, j]
            dn_pi[:, j] = 1.0 / (t_var + var_a)
            dn_tau[:, j] = (mu_a - t_mu) * dn_pi[:, j]
    zero = np.zeros((g, 1))
    r_pi = np.hstack([up_pi, zero]) + np.hstack([zero, dn_pi])
    r_tau = np.hstack([up_tau, zero]) + np.hstack([zero, dn_tau])
    m_var = 1.0 / r_pi + beta2
    return 1.0 / m_var, (r_tau / r_pi) / m_var, sites


def skill_precisions(sites: Floats, beta2: float) -> Floats:
    """Each game's information about its seats' skills jointly, (G, n, n): the truncation messages' precisions on
    the differences of performances, with the performances' own noise integrated out. It says nothing about the
    seats' common level (a row sums to 0), which is what a product of one message per skill overstates."""
    k = sites.shape[1]
    diff = np.eye(k + 1)[:-1] - np.eye(k + 1)[1:]  # (n - 1, n): p_j - p_{j+1}
    on_perf = np.einsum("gj,ja,jb->gab", sites, diff, diff)
    return np.linalg.solve(np.eye(k + 1) + beta2 * on_perf, on_perf)
