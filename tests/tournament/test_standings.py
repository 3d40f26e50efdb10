"""Standings from stored game rows: the leaderboard's order and head to head with tied places (R15)."""

from __future__ import annotations

import csv
import io

import pytest

from referee.store.sqlite import GameRow, SeatRow
from referee.tournament.standings import compute

NAMES = ["steady", "b", "c", "lucky"]


def _game(slot: int, names: tuple[str, ...], places: tuple[int, ...]) -> GameRow:
    seats = [SeatRow(n, 10 - p, p, False, {}, [1000]) for n, p in zip(names, places, strict=True)]
    return GameRow(slot, f"g{slot}", 0, slot, 0, seats, "empty_hand", 50, None, 0.0)


def _games(results: list[tuple[tuple[str, ...], tuple[int, ...]]]) -> list[GameRow]:
    return [_game(i, names, places) for i, (names, places) in enumerate(results)]


def test_the_leaderboard_orders_by_mu_minus_3_sigma_not_mu() -> None:
    """`lucky` won its one game: the highest mu but after `steady`, the highest sigma too, so it ranks last."""
    results = [(("steady", "b", "c"), (1, 2, 3))] * 6 + [(("c", "b", "steady"), (2, 3, 1))] * 6
    results += [(("lucky", "b", "c"), (1, 2, 3))]
    s = compute("t", NAMES, _games(results), len(results))
    by_name = {r.entrant: r for r in s.rows}
    lucky = by_name["lucky"]
    assert lucky.mu > by_name["b"].mu and lucky.mu > by_name["c"].mu and lucky.sigma > by_name["c"].sigma
    assert [r.entrant for r in s.rows] == ["steady", "c", "b", "lucky"]
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


def test_neighbours_whose_scores_are_within_the_noise_are_marked_not_separated() -> None:
    close = compute("t", NAMES, _section([(6, 5), (5, 6), (7, 7), (4, 5)], [(2, 1), (1, 2), (3, 3), (1, 1)]), 8)
    assert [r.separated_from_next for r in close.rows] == [False, False, False, None]
    assert "~ not separated from the next row at 95%" in close.table()
    apart = compute("t", NAMES, _section([(6, -2), (8, 0), (10, 2), (8, 0)], [(6, 1), (6, 2)] * 2), 8)
    assert [r.separated_from_next for r in apart.rows] == [True, True, True, None]
    assert "~ not separated" not in apart.table()


def test_one_deal_gives_no_interval() -> None:
    games = [_held(0, 0, 0, 0, [("steady", 5), ("b", 1)]), _held(1, 0, 0, 1, [("c", 0), ("lucky", 1)])]
    rows = compute("t", NAMES, games, 2).rows
    assert all(r.dup_ci95 is None and r.separated_from_next is None for r in rows)
