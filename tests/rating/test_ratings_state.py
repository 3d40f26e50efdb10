"""What a ``Ratings`` holds beside the fit: its names, the leaderboard's order, a copy that goes its own way, and
ratings restored from a store, which fold new games in and never refit on a read."""

import math

import pytest
import trueskill

from referee.rating import Ratings, draw_margin, history, rate, restored, state

from .test_rating import GAMES


def test_the_leaderboard_is_by_mu_minus_three_sigma_then_by_name() -> None:
    """Names out of rating order, and two entrants who never played (equal ratings: by name)."""
    r = rate("dcba", [(("c", "d"), (1, 2))])
    assert r.names() == ["d", "c", "b", "a"]
    assert [n for n, _ in r.leaderboard()] == ["c", "a", "b", "d"]
    assert r.get("a") == r.get("b")


def _live() -> Ratings:
    """GAMES fitted, a fourth entrant, and one game added since that no read has folded in yet."""
    live = Ratings("abcd")
    for seats, places in GAMES:
        live.add(seats, places)
    live.fit()
    live.add(("a", "d", "b"), (2, 1, 3))  # a local update of rows that hold messages already
    return live


def test_a_copy_rates_as_its_original_then_goes_its_own_way() -> None:
    live = _live()
    twin = live.copy()
    assert twin.names() == live.names() == list("abcd")
    assert (twin.games, twin.local) == (live.games, live.local) == (61, 1)
    assert twin.all() == live.all()  # the game added before the copy is in both
    assert twin.difference_sd("a", "c") == live.difference_sd("a", "c")  # the last full fit's covariance
    before = live.all()
    more = [(("d", "b"), (1, 2)), (("c", "d"), (1, 2))] * 3
    for seats, places in more:
        twin.add(seats, places)
    assert twin.get("d").mu != before["d"].mu
    assert twin.converged  # 7 games since the last full fit, over 5% of 67: a read refits, as the original would
    assert live.all() == before and live.games == 61 and not live.converged
    for seats, places in more:
        live.add(seats, places)
    live.fit()
    assert live.all() == twin.all()


def test_restored_ratings_fold_new_games_in_and_never_refit_on_a_read() -> None:
    fit = rate("abc", GAMES)
    back = restored(state(fit), fit.games)
    for _ in range(10):  # a sixth of the history: ratings that could refit would, and fail (no games to fit)
        back.add(("a", "b"), (1, 2))
    assert back.get("a").mu > fit.get("a").mu and back.local == 10 and not back.converged
    twin = back.copy()  # a copy never refits on a read either
    assert twin.all() == back.all()
    with pytest.raises(
        RuntimeError, match=r"^ratings restored from a store hold no games to fit again: rate the stored games$"
    ):
        twin.fit()


@pytest.mark.parametrize("history, refits", [(19, True), (20, False)])
def test_a_read_refits_once_the_games_since_the_last_fit_reach_their_share(history: int, refits: bool) -> None:
    """REFIT_SHARE is 5%: one new game after 19 is 1 of 20 and a read refits; after 20, 1 of 21 is folded in."""
    r = rate("abc", GAMES[:history])
    r.add(("a", "c"), (1, 2))
    r.leaderboard()
    assert r.converged is refits and r.local == (0 if refits else 1)


@pytest.mark.parametrize("seats, places", [(tuple("abcdef"), (1, 2, 3, 4, 5, 6)), (("a", "b"), (1, 2, 3))])
def test_a_game_of_six_seats_or_places_that_do_not_match_its_seats_is_refused(
    seats: tuple[str, ...], places: tuple[int, ...]
) -> None:
    r = Ratings("abcdef")
    with pytest.raises(ValueError, match="2 to 5 seats with one place each"):
        r.add(seats, places)
    assert r.games == 0 and r.local == 0 and r.converged


def test_a_field_of_max_joint_entrants_keeps_its_covariance_and_a_larger_one_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Up to MAX_JOINT entrants a full fit inverts their joint precision: a difference between two entrants who
    played each other is known far better than their sigmas say; above it, sqrt(sigma_a^2 + sigma_b^2)."""
    monkeypatch.setattr(history, "MAX_JOINT", 3)
    games = [(("a", "b"), (1, 2)), (("a", "b"), (2, 1))] * 20
    joint, apart = rate("abc", games), rate("abcd", games)
    assert joint.difference_sd("a", "b") < 0.8 * math.hypot(joint.get("a").sigma, joint.get("b").sigma)
    assert apart.difference_sd("a", "b") == math.hypot(apart.get("a").sigma, apart.get("b").sigma)


def test_an_entrant_without_games_stays_at_the_prior_and_the_fit_converges_in_few_sweeps() -> None:
    """A newcomer beside a pair who played 20 games: the fit stops in 10 sweeps here (MAX_SWEEPS is 300), and a
    full fit leaves no game folded in locally."""
    r = Ratings("abc")
    for _ in range(10):
        r.add(("a", "b"), (1, 2))
        r.add(("a", "b"), (2, 1))
    assert r.fit() < 30
    assert r.converged and r.local == 0
    assert (r.get("c").mu, r.get("c").sigma) == pytest.approx((25, 25 / 3), abs=1e-9)


def test_no_entrants_no_leaderboard() -> None:
    assert Ratings(()).leaderboard() == [] and Ratings(()).names() == []


def test_the_draw_margin_is_our_environments_whatever_trueskills_global_one_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """trueskill's global environment (beta 25/6 by default, as ours) is never read: another one changes nothing."""
    ours = draw_margin()
    monkeypatch.setattr(trueskill.global_env, "__trueskill__", trueskill.TrueSkill(beta=1.0), raising=False)
    assert draw_margin() == ours == pytest.approx(0.0739, abs=1e-4)
    assert draw_margin(0.05) == pytest.approx(0.3695, abs=1e-4)  # the ratings' margin until 2026-12-07


def test_ratings_of_another_draw_probability_keep_it_through_a_copy_and_read_decisive_games_harder() -> None:
    """The draw probability a ladder's older choices were made with (0.05) is one of the model's: its margin reads
    every decisive result as won by more, so the same games give a wider gap, and a copy keeps it."""
    games = [(("a", "b"), (1, 2))] * 3 + [(("b", "a"), (1, 2))]
    gaps = {}
    for p in (0.01, 0.05):
        ratings = Ratings(["a", "b"], draw_probability=p)
        for seats, places in games:
            ratings.add(seats, places)
        copy = ratings.copy()
        assert copy.draw_probability == ratings.draw_probability == p
        copy.fit()
        gaps[p] = copy.get("a").mu - copy.get("b").mu
    assert gaps[0.05] > gaps[0.01] > 0
