"""Standings from stored game rows: the leaderboard's order and head to head with tied places (R15)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from scipy import stats

from referee.engine.core import EndReason
from referee.match.spec import GameResult, SeatStats
from referee.rating import Rating, rate
from referee.store import open_store
from referee.store.sqlite import GameRow, SeatRow
from referee.tournament import schedule
from referee.tournament.config import parse
from referee.tournament.standings import compute, dumps, separated

NAMES = ["steady", "b", "c", "lucky"]


def _game(slot: int, names: tuple[str, ...], places: tuple[int, ...]) -> GameRow:
    seats = [SeatRow(n, 10 - p, p, False, {}, [1000]) for n, p in zip(names, places, strict=True)]
    return GameRow(slot, f"g{slot}", 0, slot, 0, seats, "empty_hand", 50, None, 0.0)


def _games(results: list[tuple[tuple[str, ...], tuple[int, ...]]]) -> list[GameRow]:
    return [_game(i, names, places) for i, (names, places) in enumerate(results)]


def test_the_leaderboard_orders_by_mu_minus_3_sigma_not_mu() -> None:
    """`lucky` tied `b` in its one game: a higher mu than `b`'s (the fit compares it with `b` alone) but a higher
    sigma too, so it ranks last. `b` placed ahead of `c` 7 times of 13: the whole history puts it ahead, however late
    its 6 losses came."""
    results = [(("steady", "b", "c"), (1, 2, 3))] * 6 + [(("c", "b", "steady"), (2, 3, 1))] * 6
    results += [(("lucky", "b"), (1, 1))]
    s = compute("t", NAMES, _games(results), len(results))
    by_name = {r.entrant: r for r in s.rows}
    lucky = by_name["lucky"]
    assert lucky.mu > by_name["b"].mu and lucky.mu > by_name["c"].mu and lucky.sigma > by_name["c"].sigma
    assert [r.entrant for r in s.rows] == ["steady", "b", "c", "lucky"]
    assert [r.rank for r in s.rows] == [1, 2, 3, 4]


def test_tied_places_count_as_ties_in_head_to_head() -> None:
    """Places (1, 1, 3): steady and b tie each other and both beat c; (2, 2, 1): both lose to c and tie again."""
    results = [(("steady", "b", "c"), (1, 1, 3)), (("steady", "b", "c"), (2, 2, 1))]
    h2h = compute("t", NAMES[:3], _games(results), 2).head_to_head
    assert h2h["steady"]["b"] == {"wins": 0, "losses": 0, "ties": 2}
    assert h2h["b"]["steady"] == {"wins": 0, "losses": 0, "ties": 2}
    assert h2h["steady"]["c"] == {"wins": 1, "losses": 1, "ties": 0}
    assert h2h["c"]["b"] == {"wins": 1, "losses": 1, "ties": 0}


def test_the_csv_holds_the_faults_and_head_to_head_of_the_json() -> None:
    games = _games([(("steady", "b", "c"), (1, 1, 3)), (("c", "b", "steady"), (1, 2, 3))])
    games[0].seats[2].faults.update({"timeout": 2})
    s = compute("t", NAMES[:3], games, 2)
    rows = {r["entrant"]: r for r in csv.DictReader(io.StringIO(s.to_csv()))}
    assert rows["c"]["faults_timeout"] == "2" and rows["b"]["faults_timeout"] == "0"
    for a in NAMES[:3]:
        for b, h in s.head_to_head[a].items():
            assert [int(rows[a][f"vs_{b}_{x}"]) for x in ("wins", "losses", "ties")] == [
                h["wins"],
                h["losses"],
                h["ties"],
            ]
        assert rows[a][f"vs_{a}_wins"] == ""  # no entrant plays itself


def _held(slot: int, table: int, deal: int, order: int, seats: list[tuple[str, int]]) -> GameRow:
    rows = [SeatRow(n, score, 1 + sum(s > score for _, s in seats), False, {}, [1000]) for n, score in seats]
    return GameRow(slot, f"g{slot}", table, deal, order, rows, "empty_hand", 50, None, 0.0)


def test_the_duplicate_score_compares_with_the_others_who_held_the_same_cards() -> None:
    """Deal 0 at the three tables of section 0: seat 0's cards scored 10, 4 and 1. steady is compared with the
    other two holders, 10 - (4 + 1) / 2; its game at a lone table (section 1) has nobody to compare with."""
    games = [
        _held(0, 0, 0, 0, [("steady", 10), ("b", 0)]),
        _held(1, 0, 0, 1, [("c", 4), ("lucky", 2)]),
        _held(2, 0, 0, 2, [("e", 1), ("f", 3)]),
        _held(3, 1, 0, 0, [("steady", 20), ("c", -5)]),
    ]
    s = {r.entrant: r for r in compute("t", [*NAMES, "e", "f"], games, 4).rows}
    assert s["steady"].dup_avg_score == 10 - (4 + 1) / 2  # the lone game is left out, not counted as 0
    assert s["c"].dup_avg_score == 4 - (10 + 1) / 2
    assert s["lucky"].dup_avg_score == 2 - (0 + 3) / 2
    assert s["steady"].avg_score == 15 and s["steady"].games == 2


def _section(seat0: list[tuple[int, int]], seat1: list[tuple[int, int]]) -> list[GameRow]:
    """Four deals, each played at two tables: (steady vs b) and (c vs lucky); steady and c hold seat 0's cards, b
    and lucky seat 1's. ``seat0[d]`` is (steady's, c's) score on deal d, ``seat1[d]`` (b's, lucky's)."""
    games = []
    for deal, ((s0, c0), (b1, l1)) in enumerate(zip(seat0, seat1, strict=True)):
        games.append(_held(2 * deal, 0, deal, 0, [("steady", s0), ("b", b1)]))
        games.append(_held(2 * deal + 1, 0, deal, 1, [("c", c0), ("lucky", l1)]))
    return games


def test_the_duplicate_score_has_a_95_interval_over_its_deals() -> None:
    """steady beats c, the other holder of its cards, by 6, 8, 10 and 8: its interval is the cluster-robust t
    interval over the 4 deals (sd 1.63, t(3) = 3.182); b and lucky split the other seat's cards."""
    s = compute("t", NAMES, _section([(6, 0), (8, 0), (10, 0), (8, 0)], [(1, 1), (1, 2)] * 2), 8)
    steady = next(r for r in s.rows if r.entrant == "steady")
    assert steady.dup_avg_score == 8
    assert steady.dup_ci95 == (pytest.approx(8 - 3.182446 * 1.632993 / 2), pytest.approx(8 + 3.182446 * 1.632993 / 2))
    table = s.table()
    assert "±2.60" in table
    # head to head: steady's score minus b's in their 4 games, with its interval over the 4 deals
    d = s.score_diff["steady"]["b"]
    assert d["mean_diff"] == 7 and d["games"] == 4 and d["ci95"][0] > 0
    assert s.score_diff["b"]["steady"]["mean_diff"] == -7
    assert "score difference (row minus column" in table and "+7.0±" in table
    row = next(r for r in csv.DictReader(io.StringIO(s.to_csv())) if r["entrant"] == "steady")
    assert float(row["dup_ci95_low"]) == pytest.approx(steady.dup_ci95[0], abs=1e-4)


def _meetings(leads: list[int]) -> list[GameRow]:
    """a against b on one deal each, at one table in both seat rotations (a duplicate set of two games): lead +2, a
    placed ahead in both games; +1 ahead in one and level in the other; 0 one each; -1 behind in one, level in
    the other; -2 behind in both."""
    games: list[GameRow] = []
    results = {2: ((5, 1), (5, 1)), 1: ((5, 1), (3, 3)), 0: ((5, 1), (1, 5)), -1: ((1, 5), (3, 3)), -2: ((1, 5),) * 2}
    for deal, lead in enumerate(leads):
        for order, (sa, sb) in enumerate(results[lead]):
            seats = [("a", sa), ("b", sb)] if order == 0 else [("b", sb), ("a", sa)]
            games.append(_held(len(games), 0, deal, order, seats))
    return games


def test_separated_from_the_next_is_the_ratings_difference_at_its_boundary() -> None:
    """The mark's rule at its boundary (issue 49 item 3): the upper row is separated from the next when its mu is
    above the next one's by more than 1.96 standard deviations of the difference, sqrt(sigma1² + sigma2²): the
    quantity the order ranks by, from both entrants' ratings. The table, the CSV and the JSON carry it."""
    sd = math.hypot(1.2, 1.6)  # 2.0
    assert separated(Rating(30.0 + 1.96 * sd + 1e-9, 1.2), Rating(30.0, 1.6)) is True
    assert separated(Rating(30.0 + 1.96 * sd - 1e-9, 1.2), Rating(30.0, 1.6)) is False
    assert separated(Rating(20.0, 1.0), Rating(25.0, 3.0)) is False  # the order put it first by its lower sigma
    for leads in ([-1, 0, 0, 1, 2, 2, 2, 2], [2] * 8, [0, 1] * 4):
        games = _meetings(leads)
        st = compute("t", ["a", "b"], games, len(games))
        ratings = rate(
            ["a", "b"], [(tuple(x.entrant for x in g.seats), tuple(x.place for x in g.seats)) for g in games]
        )
        upper, lower = (ratings.get(r.entrant) for r in st.rows)
        sd = ratings.difference_sd(st.rows[0].entrant, st.rows[1].entrant)  # from the fit's covariance
        assert [r.separated_from_next for r in st.rows] == [separated(upper, lower, sd), None]
    close = compute("t", ["a", "b"], _meetings([0, 1] * 4), 16)
    assert [r.separated_from_next for r in close.rows] == [False, None]
    assert "~ not separated from the next row at 95%" in close.table()
    row = next(r for r in csv.DictReader(io.StringIO(close.to_csv())) if r["entrant"] == "a")
    assert row["separated_from_next"] == "false"
    assert json.loads(dumps(close))["standings"][0]["separated_from_next"] is False
    apart = compute("t", ["a", "b"], _meetings([2] * 8), 16)
    assert [r.separated_from_next for r in apart.rows] == [True, None] and "~" not in apart.table()


def test_neighbours_that_never_met_are_marked_by_their_ratings() -> None:
    """The mark uses every game of both entrants, not only the games they shared (issue 49): steady beat c and
    lucky beat b, twelve times each, while steady beat lucky and c beat b four games of six; so steady and lucky
    lead and c and b trail, in that order. Neighbours that never met (the second and the third rows) are far
    apart in rating, and marked separated; the rule on shared games gave them no mark at all. (Without the games
    between them, the two pairs would be two fields that no game compares: nothing but the prior would set them
    apart, and they are not marked.)"""
    close = [(("steady", "lucky"), (1, 2)), (("c", "b"), (1, 2))] * 4 + [(("lucky", "steady"), (1, 2)),
                                                                      (("b", "c"), (1, 2))] * 2  # fmt: skip
    results = [(("steady", "c"), (1, 2)), (("lucky", "b"), (1, 2))] * 12 + close
    rows = compute("t", NAMES, _games(results), len(results)).rows
    assert [r.entrant for r in rows] == ["steady", "lucky", "c", "b"] and rows[1].lead_over_next["games"] == 0
    assert [r.separated_from_next for r in rows] == [False, True, False, None]
    apart = [(("steady", "c"), (1, 2)), (("lucky", "b"), (1, 2))] * 12
    assert compute("t", NAMES, _games(apart), len(apart)).rows[1].separated_from_next is False


def test_one_deal_gives_no_interval() -> None:
    games = [_held(0, 0, 0, 0, [("steady", 5), ("b", 1)]), _held(1, 0, 0, 1, [("c", 0), ("lucky", 1)])]
    rows = compute("t", NAMES, games, 2).rows
    assert all(r.dup_ci95 is None for r in rows)
    assert all(r.separated_from_next is False for r in rows[:-1]) and rows[-1].separated_from_next is None


@pytest.mark.slow
def test_identical_entrants_are_marked_separated_at_most_at_the_stated_rate() -> None:
    """A/A for the mark: two entrants with the same score law (independent, uniform -5..10) over 20 deals in seat
    rotations, 400 tournaments (seeded): the upper row is marked separated in at most the top of the binomial 99%
    band of 5% of them. The order puts the higher rating first, so the rule is two-sided: 1.96."""
    import random

    rng, reps, hits = random.Random(21), 400, 0
    for _ in range(reps):
        games: list[GameRow] = []
        for deal in range(20):
            for order in range(2):
                a, b = rng.randint(-5, 10), rng.randint(-5, 10)
                seats = [("a", a), ("b", b)] if order == 0 else [("b", b), ("a", a)]
                games.append(_held(len(games), 0, deal, order, seats))
        hits += compute("t", ["a", "b"], games, len(games)).rows[0].separated_from_next is True
    assert hits <= stats.binom.interval(0.99, reps, 0.05)[1], hits


def test_ratings_are_the_same_in_whatever_order_the_games_finished(tmp_path: Path) -> None:
    # issue 22 lucky catch: one-pass TrueSkill depended on the order of its games. The whole-history fit does not: a
    # real store is given the games last slot first, and the standings equal the ratings of the schedule's order,
    # bit for bit, though "a" wins the first half of the schedule and loses the rest.
    cfg = parse({"entrants": [{"name": n, "policy": "random"} for n in ("a", "b", "c")], "table_size": 2,
                 "deals": 2, "seed": 3}, "t.toml")  # fmt: skip
    slots = schedule.build(cfg, bytes(32))
    names = [e.name for e in cfg.entrants]
    tid = cfg.tournament_id

    def places(slot: int, seats: tuple[str, ...]) -> tuple[int, ...]:  # "a" wins the first half, loses the rest
        a_wins = slot < len(slots) // 2
        return tuple(1 if (n == "a") == a_wins else 2 for n in seats) if "a" in seats else (1, 2)

    with open_store(tmp_path / "d") as store:
        store.create_tournament(cfg, slots, "t.toml", bytes(32))
        for s in reversed(slots):  # the last scheduled game finishes first
            p = places(s.slot, s.seats)
            result = GameResult(s.game_id, tuple(10 - x for x in p), p, EndReason.EMPTY_HAND,
                                [SeatStats() for _ in s.seats], 10, "", None)  # fmt: skip
            store.save_game(tid, s, result)
        stored = store.games(tid)
    assert [g.slot for g in stored] == [s.slot for s in slots]
    in_schedule = rate(names, ((s.seats, places(s.slot, s.seats)) for s in slots))
    in_finish = rate(names, ((s.seats, places(s.slot, s.seats)) for s in reversed(slots)))
    assert in_schedule.all() == in_finish.all()
    for s in (compute(tid, names, stored, len(slots)), compute(tid, names, list(reversed(stored)), len(slots))):
        assert {r.entrant: (r.mu, r.sigma) for r in s.rows} == {
            n: (in_schedule.get(n).mu, in_schedule.get(n).sigma) for n in names
        }


def test_an_entrant_compared_with_nobody_shows_no_duplicate_figure() -> None:
    """3 entrants at tables of 2 share no deal: dup+- showed "+0.00", a figure nobody measured."""
    games = [_held(0, 0, 0, 0, [("steady", 10), ("b", 0)]), _held(1, 1, 1, 0, [("c", 4), ("lucky", 2)])]
    s = compute("t", NAMES[:4], games, 2)
    assert all(r.dup_games == 0 for r in s.rows)
    for line in s.table().splitlines()[3:7]:
        assert line.split()[8] == "-", line  # the dup+- column
    held = compute("t", [*NAMES, "e", "f"], [_held(0, 0, 0, 0, [("steady", 10), ("b", 0)]),
                                             _held(1, 0, 0, 1, [("c", 4), ("lucky", 2)])], 2)  # fmt: skip
    row = next(r for r in held.rows if r.entrant == "steady")
    assert row.dup_games == 1 and f"{row.dup_avg_score:+.2f}" in held.table()
