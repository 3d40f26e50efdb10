"""Standings from stored game rows: the leaderboard's order and head to head with tied places (R15)."""

from __future__ import annotations

import csv
import io

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
