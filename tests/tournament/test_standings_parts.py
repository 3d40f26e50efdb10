"""The parts of the standings that the leaderboard tests do not reach: the JSON a run writes, the rating history the
report plots, the thinned history the site plots, the median decision time, and the tally kept one game at a time
(a service adds games as they finish, in any order, and a ladder shows only some entrants). In this process, so
mutation testing sees the calls (scripts/mutation.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from referee.rating import Ratings, rate
from referee.store import open_store
from referee.store.sqlite import GameRow, SeatRow
from referee.tournament import schedule
from referee.tournament.config import parse
from referee.tournament.history import History, rating_history
from referee.tournament.runner import write_standings
from referee.tournament.standings import Standings, Tally, compute, dumps, separated


def _game(slot: int, seats: list[tuple[str, int]], times: tuple[int, ...] = (1000,), table: int = 0,
          deal: int | None = None) -> GameRow:  # fmt: skip
    rows = [SeatRow(n, s, 1 + sum(x > s for _, x in seats), False, {}, list(times)) for n, s in seats]
    return GameRow(slot, f"g{slot}", table, slot if deal is None else deal, 0, rows, "empty_hand", 9, None, 0.0)


GAMES = [
    _game(0, [("a", 9), ("b", 1)]),
    _game(1, [("b", 5), ("c", 4)]),
    _game(2, [("c", 7), ("a", 2)]),
    _game(3, [("a", 3), ("b", 8)]),
]


def _after_each(names: list[str], games: list[GameRow]) -> list[Ratings]:
    ratings, out = Ratings(names), []
    for g in games:
        ratings.add(g.names, g.places)
        out.append(ratings.copy())
    return out


def test_the_standings_file_a_run_writes_holds_every_part(tmp_path: Path) -> None:
    s = compute("t-1", ["a", "b", "c"], GAMES, 6)
    with open_store(tmp_path / "d") as store:
        json_path, _ = write_standings(store, s)
    written = json.loads(json_path.read_text())
    assert written == json.loads(dumps(s))
    assert list(written) == ["tournament_id", "games", "scheduled", "standings", "head_to_head", "score_diff"]
    assert (written["tournament_id"], written["games"], written["scheduled"]) == ("t-1", 4, 6)
    assert [r["entrant"] for r in written["standings"]] == [r.entrant for r in s.rows]
    assert written["head_to_head"]["a"]["b"] == {"wins": 1, "losses": 1, "ties": 0}
    assert written["score_diff"]["a"]["b"]["games"] == 2 and written["score_diff"]["a"]["b"]["mean_diff"] == 1.5


def test_the_reports_rating_history_is_each_entrants_rating_after_each_of_its_games() -> None:
    names = ["a", "b", "c"]
    ratings, history = rating_history(names, GAMES)
    start = Ratings(names).get("a").conservative
    after = _after_each(names, GAMES)
    flat = [x for points in (history["a"], history["c"]) for p in points for x in p]
    want = [(0, start), *((k + 1, after[i].get("a").conservative) for k, i in enumerate((0, 2, 3)))]
    want += [(0, start), *((k + 1, after[i].get("c").conservative) for k, i in enumerate((1, 2)))]
    assert flat == pytest.approx([x for p in want for x in p], abs=1e-3)
    assert ratings.converged
    got = [x for _, r in ratings.leaderboard() for x in (r.mu, r.sigma)]
    assert got == pytest.approx([x for _, r in after[-1].leaderboard() for x in (r.mu, r.sigma)], abs=1e-3)


def test_the_sites_history_keeps_at_most_its_points_doubling_its_step() -> None:
    """Four points at most: after 10 games the points kept are at 0, 4 and 8 games, and the current rating."""
    ratings = Ratings(["a", "b"])
    history = History(ratings, ["a", "b"], points=4)
    assert history.lines == {"a": [(0, ratings.get("a").conservative)], "b": [(0, ratings.get("b").conservative)]}
    seen = []
    for k in range(1, 11):
        ratings.add(("a", "b"), (1, 2) if k % 3 else (2, 1))
        history.add(("a", "b"), ratings)
        seen.append([x for x, _ in history.lines["a"]])
        assert history.lines["a"][-1] == (k, ratings.get("a").conservative)
    assert seen[:4] == [[0, 1], [0, 1, 2], [0, 1, 2, 3], [0, 2, 4]]
    assert seen[4:] == [[0, 2, 4, 5], [0, 2, 4, 6], [0, 4, 7], [0, 4, 8], [0, 4, 8, 9], [0, 4, 8, 10]]
    assert history.step["a"] == 4 and history.played["a"] == 10
    # an entrant that joined later (a ladder's) starts its own line at 0 games
    ratings.join("z")
    ratings.add(("z", "a"), (1, 2))
    history.add(("z", "a"), ratings)
    assert [x for x, _ in history.lines["z"]] == [0, 1] and history.lines["z"][-1][1] == ratings.get("z").conservative
    assert history.step["z"] == 1 and history.played["z"] == 1


def test_the_median_decision_time_of_an_odd_and_an_even_count() -> None:
    games = [_game(0, [("a", 5), ("b", 1)], times=(3000, 1000, 9000)),
             _game(1, [("a", 2), ("b", 4)], times=(2000,))]  # fmt: skip
    rows = {r.entrant: r for r in compute("t", ["a", "b"], games[:1], 2).rows}
    assert rows["a"].median_decision_ms == 3.0
    rows = {r.entrant: r for r in compute("t", ["a", "b"], games, 2).rows}
    assert rows["a"].median_decision_ms == 2.5  # 1000 2000 3000 9000
    empty = [_game(0, [("a", 5), ("b", 1)], times=())]
    assert all(r.median_decision_ms is None for r in compute("t", ["a", "b"], empty, 1).rows)


def _split(standings: Standings) -> tuple[Any, list[float]]:
    """The standings' JSON without the ratings, and the ratings: a tally converges its ratings from where it last
    was, compute from nothing, to the same fit within its tolerance."""
    out, ratings = json.loads(dumps(standings)), []
    for row in out["standings"]:
        ratings += [row.pop(key) for key in ("mu", "sigma", "conservative")]
    return out, ratings


def test_a_tally_fed_out_of_order_and_twice_gives_what_compute_gives() -> None:
    names = ["a", "b", "c"]
    tally = Tally("t", names, 4)
    tally.add(GAMES[2])
    tally.add(GAMES[0])
    half = tally.standings()
    assert half.games == 2 and tally.standings() is half  # asked again with nothing new: the same object
    for g in (GAMES[3], GAMES[1], GAMES[0]):  # the last one again: ignored
        tally.add(g)
    full = tally.standings()
    assert full is not half and full.games == 4
    (rest, ratings), (want_rest, want) = _split(full), _split(compute("t", names, GAMES, 4))
    assert rest == want_rest and ratings == pytest.approx(want, abs=1e-3)
    assert [x for x, _ in tally.history.lines["a"]] == [0, 1, 2, 3]


def test_a_tally_rates_the_games_it_has_whatever_gaps_the_schedule_has() -> None:
    """Games 0 and 2 finished, 1 not yet: the ratings are those of 0 and 2, and the plot has c's game 2."""
    names = ["a", "b", "c"]
    tally = Tally("t", names, 4)
    tally.add(GAMES[2])
    tally.add(GAMES[0])
    want = rate(names, [(g.names, g.places) for g in (GAMES[0], GAMES[2])])
    got = tally.ratings()
    assert [n for n, _ in got.leaderboard()] == [n for n, _ in want.leaderboard()]
    assert [r.mu for _, r in got.leaderboard()] == pytest.approx([r.mu for _, r in want.leaderboard()], abs=1e-3)
    assert [x for x, _ in tally.history.lines["c"]] == [0, 1]
    tally.add(GAMES[1])
    assert [x for x, _ in tally.history.lines["c"]] == [0, 1, 2]


def test_a_ladder_shows_some_entrants_ranked_among_themselves() -> None:
    names = ["a", "b", "c"]
    tally = Tally("t", names, 4)
    for g in GAMES:
        tally.add(g)
    every = tally.standings()
    shown = tally.standings(shown={"a", "c"})
    assert [r.entrant for r in shown.rows] == [r.entrant for r in every.rows if r.entrant in ("a", "c")]
    assert [r.rank for r in shown.rows] == [1, 2]
    assert set(shown.head_to_head) == {"a", "c"} and set(shown.head_to_head["a"]) == {"c"}
    assert set(shown.score_diff) == {"a", "c"} and set(shown.score_diff["c"]) == {"a"}
    assert tally.standings() is every  # a ladder's view is not kept as the whole standings


def test_the_duplicate_average_of_a_schedule_built_tournament() -> None:
    """Two entrants in seat rotations: each deal's two games are a duplicate set, so each seat's cards were held
    by both, and a's duplicate score is its score minus b's on the same cards."""
    cfg = parse({"entrants": [{"name": n, "policy": "random"} for n in ("a", "b")], "table_size": 2, "deals": 2,
                 "seat_orders": "rotations", "seed": 1}, "t.toml")  # fmt: skip
    slots = schedule.build(cfg, bytes(32))
    scores = {0: (6, 2), 1: (4, 4)}  # a's and b's score in each deal's games, whatever the seat
    games = []
    for s in slots:
        a, b = scores[s.deal]
        seats = [(n, a if n == "a" else b) for n in s.seats]
        games.append(_game(s.slot, seats, table=s.table, deal=s.deal))
    rows = {r.entrant: r for r in compute(cfg.tournament_id, ["a", "b"], games, len(slots)).rows}
    assert rows["a"].dup_avg_score == 2.0 and rows["b"].dup_avg_score == -2.0 and rows["a"].dup_games == 4


def test_a_plot_of_a_long_tournament_keeps_256_points_an_entrant() -> None:
    ratings = Ratings(["a", "b"])
    history = History(ratings, ["a", "b"])
    for k in range(1, 257):
        ratings.add(("a", "b"), (1, 2) if k % 2 else (2, 1))
        history.add(("a", "b"), ratings)
        if k == 255:
            assert len(history.lines["a"]) == 256 and history.step["a"] == 1
    assert history.step["a"] == 2 and len(history.lines["a"]) == 129  # 0, 2, ..., 256


def test_a_tally_before_any_game_lists_every_entrant_with_nothing_played() -> None:
    s = Tally("t", ["a", "b"], 4).standings()
    assert s.games == 0 and s.scheduled == 4 and sorted(r.entrant for r in s.rows) == ["a", "b"]
    assert all((r.games, r.wins, r.avg_score, r.dup_avg_score, r.retired) == (0, 0, 0.0, 0.0, 0) for r in s.rows)


def _seat(name: str, score: int, place: int, retired: bool = False, faults: dict[str, int] | None = None) -> SeatRow:
    return SeatRow(name, score, place, retired, faults or {}, [1000])


def test_wins_retirements_faults_and_head_to_head_add_up_over_games() -> None:
    """Three games of a and b on one deal (a duplicate set): a first twice (once shared), b once; b retired in two,
    with timeouts in two; a's score minus b's summed over the set."""
    rows = [
        [_seat("a", 9, 1), _seat("b", 2, 2, True, {"timeout": 2})],
        [_seat("b", 5, 1), _seat("a", 3, 2)],
        [_seat("a", 4, 1), _seat("b", 4, 1, True, {"timeout": 1, "illegal": 1})],
        [_seat("a", 6, 1), _seat("b", 1, 2)],
    ]
    games = [GameRow(i, f"g{i}", 0, 0, i, seats, "empty_hand", 9, None, 0.0) for i, seats in enumerate(rows)]
    s = compute("t", ["a", "b"], games, 4)
    by = {r.entrant: r for r in s.rows}
    assert (by["a"].wins, by["b"].wins) == (3, 2)  # a shared first place counts for both
    assert (by["a"].retired, by["b"].retired) == (0, 2)
    assert by["b"].faults == {"illegal": 1, "timeout": 3} and by["b"].strikes == 4
    assert s.head_to_head["a"]["b"] == {"wins": 2, "losses": 1, "ties": 1}
    assert s.head_to_head["b"]["a"] == {"wins": 1, "losses": 2, "ties": 1}
    assert s.score_diff["a"]["b"]["mean_diff"] == (7 - 2 + 0 + 5) / 4 and s.score_diff["a"]["b"]["games"] == 4


def test_ratings_given_are_used_as_given_and_ratings_of_other_games_are_not() -> None:
    names = ["a", "b", "c"]
    in_reverse = _after_each(names, list(reversed(GAMES)))[-1]  # as many games, another order: other ratings
    mu = {r.entrant: r.mu for r in compute("t", names, GAMES, 4, ratings=in_reverse).rows}
    assert mu == {n: in_reverse.get(n).mu for n in names}
    fewer = _after_each(names, GAMES[:2])[-1]  # not these games' ratings: the tally's own are used
    mine = _after_each(names, GAMES)[-1]
    tally = Tally("t", names, 4)
    for g in GAMES:
        tally.add(g)
    got = {r.entrant: r.mu for r in tally.standings(ratings=fewer).rows}
    assert got == pytest.approx({n: mine.get(n).mu for n in names}, abs=1e-3)


def test_equal_ratings_are_not_separated_and_a_gap_is_by_its_own_sigmas() -> None:
    """Equal ratings are never separated (no sigma makes 0 exceed 1.96 sd); a gap is judged against both sigmas,
    so the same gap is separated with small ones and not with large ones."""
    from referee.rating import Rating

    assert separated(Rating(25.0, 0.0), Rating(25.0, 0.0)) is False
    assert separated(Rating(25.0, 1.0), Rating(25.0, 1.0)) is False
    assert separated(Rating(30.0, 1.0), Rating(25.0, 1.0)) is True  # 5 > 1.96 * 1.41
    assert separated(Rating(30.0, 2.0), Rating(25.0, 2.0)) is False  # 5 < 1.96 * 2.83


def test_head_to_head_counts_every_game_the_first_seated_lost() -> None:
    """b beats a twice from the second seat: a has two losses against b, b two wins against a."""
    rows = [[_seat("a", 2, 2), _seat("b", 7, 1)], [_seat("a", 1, 2), _seat("b", 5, 1)]]
    games = [GameRow(i, f"g{i}", 0, i, 0, seats, "empty_hand", 9, None, 0.0) for i, seats in enumerate(rows)]
    s = compute("t", ["a", "b"], games, 2)
    assert s.head_to_head["a"]["b"] == {"wins": 0, "losses": 2, "ties": 0}
    assert s.head_to_head["b"]["a"] == {"wins": 2, "losses": 0, "ties": 0}


def _rounded(x: Any) -> Any:
    if isinstance(x, float):
        return round(x, 9)
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    return [_rounded(v) for v in x] if isinstance(x, list) else x


def test_a_tally_read_between_games_in_any_order_ends_where_compute_does() -> None:
    """What a board recomputes after a game (only the pairs, duplicate sets and leads the game touched) ends where
    a count of every game from nothing does: 60 games of 3 of 7 entrants in sets of up to 4 games (a set's figures
    change for every entrant in it at each of its games), fed in a shuffled order with standings read every few."""
    rng = random.Random(3)
    names = [f"e{i}" for i in range(7)]
    games = [_game(slot, [(n, rng.randint(-5, 20)) for n in rng.sample(names, 3)], table=slot % 2, deal=slot // 8)
             for slot in range(60)]  # fmt: skip
    tally = Tally("t", names, 60)
    for i, g in enumerate(rng.sample(games, len(games))):
        tally.add(g)
        if i % 7 == 3:
            tally.standings()
    (rest, ratings), (want_rest, want) = _split(tally.standings()), _split(compute("t", names, games, 60))
    assert _rounded(rest) == _rounded(want_rest) and ratings == pytest.approx(want, abs=1e-3)
    assert sum(h["wins"] + h["ties"] / 2 for row in rest["head_to_head"].values() for h in row.values()) == 180
