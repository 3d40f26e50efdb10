import re
from pathlib import Path

import pytest

from referee.rating import DRAW_PROBABILITY, Ratings, environment, rate


def test_the_environment_is_explicit_and_allows_draws() -> None:
    env = environment()
    assert env.draw_probability == DRAW_PROBABILITY > 0


def test_a_tie_is_rated_as_a_tie_and_never_raises_sigma() -> None:
    r = Ratings(["a", "b", "c"])
    r.add(("a", "b", "c"), (1, 1, 3))
    a, b, c = r.get("a"), r.get("b"), r.get("c")
    assert abs(a.mu - b.mu) < 0.05 and a.mu > c.mu
    assert a.sigma < 25 / 3 and b.sigma < 25 / 3


def test_a_retired_seat_placed_last_loses_rating() -> None:
    r = rate("abcd", [(tuple("abcd"), (1, 2, 3, 4))] * 5)
    board = [n for n, _ in r.leaderboard()]
    assert board == ["a", "b", "c", "d"]
    assert all(x.conservative == x.mu - 3 * x.sigma for x in r.all().values())


def test_the_same_games_in_the_same_order_give_bit_identical_ratings() -> None:
    games = [(("a", "b", "c"), (1, 2, 3)), (("c", "a", "b"), (1, 1, 3)), (("b", "c", "a"), (2, 1, 3))] * 20
    assert rate("abc", games).all() == rate("abc", games).all()
    assert rate("abc", games).all() != rate("abc", list(reversed(games))).all()  # order matters: hence schedule order


DOCS = Path(__file__).resolve().parents[2] / "docs" / "tournaments.md"


def test_the_environment_is_the_one_the_docs_state() -> None:
    """docs/tournaments.md states mu, sigma, beta, tau and draw_probability: the ratings use exactly those."""
    text = " ".join(DOCS.read_text().split())
    m = re.search(r"mu (\S+), sigma (\S+), beta (\S+), tau (\S+), and `draw_probability` ([\d.]+)", text)
    assert m, "docs/tournaments.md no longer states the TrueSkill environment in the expected words"
    mu = float(m[1].rstrip(","))
    sigma = _fraction(m[2], mu=mu)
    documented = {"mu": mu, "sigma": sigma, "beta": _fraction(m[3], sigma=sigma),
                  "tau": _fraction(m[4], sigma=sigma), "draw_probability": float(m[5])}  # fmt: skip
    literal = {"mu": 25, "sigma": 25 / 3, "beta": 25 / 6, "tau": 25 / 300, "draw_probability": 0.05}
    assert documented == pytest.approx(literal, rel=1e-12)
    env = environment()
    assert {k: getattr(env, k) for k in documented} == pytest.approx(documented, rel=1e-12)


def _fraction(text: str, **names: float) -> float:
    """'25/3' or 'sigma/2' as a number."""
    top, _, bottom = text.rstrip(",").partition("/")
    value = names[top] if top in names else float(top)
    return value / float(bottom) if bottom else value
