"""The standings' sparse pair rows shown dense, and a duplicate set's running sums (tournament/pairs.py)."""

from __future__ import annotations

import pytest

from referee.tournament.pairs import DupSet, PairRows

NAMES = ["a", "b", "c"]


def test_pair_rows_show_every_other_entrant_with_pairs_that_never_met_at_their_empty_figure() -> None:
    rows = PairRows(NAMES, {"a": {"b": 1}}, lambda: 0)
    assert dict(rows) == {"a": {"b": 1, "c": 0}, "b": {"a": 0, "c": 0}, "c": {"a": 0, "b": 0}}
    assert list(rows) == NAMES and len(rows) == 3 and rows.get("d") is None
    with pytest.raises(KeyError, match="d"):
        rows["d"]


def test_pair_rows_of_some_entrants_and_without_pairs_of_one_owner() -> None:
    some = PairRows(NAMES, {"a": {"b": 1, "c": 2}, "c": {"a": 3}}, lambda: 0, keep={"a", "c"}.__contains__)
    assert dict(some) == {"a": {"c": 2}, "c": {"a": 3}} and "b" not in some and len(some) == 2
    apart = some.without(lambda x, y: {x, y} == {"a", "c"})  # one owner's: they never meet
    assert dict(apart) == {"a": {}, "c": {}} and dict(some) == {"a": {"c": 2}, "c": {"a": 3}}
    others = PairRows(NAMES, {"a": {"b": 1}}, lambda: 0).without(lambda x, y: {x, y} == {"a", "b"})
    assert dict(others) == {"a": {"c": 0}, "b": {"c": 0}, "c": {"a": 0, "b": 0}}


def test_the_kept_copy_of_pair_rows_holds_only_pairs_that_met_and_are_shown() -> None:
    rows = {"a": {"a": 9, "b": 1, "c": 2}, "b": {"a": 3}}
    assert PairRows(NAMES, rows, lambda: 0).sparse() == {"a": {"b": 1, "c": 2}, "b": {"a": 3}, "c": {}}
    some = PairRows(NAMES, rows, lambda: 0, keep={"a", "b"}.__contains__)
    assert some.sparse() == {"a": {"b": 1}, "b": {"a": 3}}
    assert some.without(lambda x, y: True).sparse() == {"a": {}, "b": {}}
    owners = {"a": "o", "b": "p", "c": "o"}
    apart = PairRows(NAMES, rows, lambda: 0).without(lambda x, y: owners[x] == owners[y])
    assert apart.sparse() == {"a": {"b": 1}, "b": {"a": 3}, "c": {}}


def test_a_duplicate_set_compares_each_score_with_the_others_who_held_the_same_seat() -> None:
    dup = DupSet()
    dup.add([("x", 1), ("y", 2), ("z", 5)])  # seat 2 is held once: nobody to compare z with
    assert dup.sums() == {}
    dup.add([("y", 7), ("x", 4)])
    # x: 1 - (1 + 7 - 1) / 1 at seat 0, 4 - (2 + 4 - 4) / 1 at seat 1; y the other way round
    assert dup.sums() == {"x": (-4.0, 2), "y": (4.0, 2)}
    dup.add([("z", 3), ("y", 0)])
    # seat 0 now holds 1, 7, 3 (11) and seat 1 holds 2, 4, 0 (6): each score less the mean of the other two
    assert dup.sums() == {"x": (1 - 10 / 2 + 4 - 2 / 2, 2), "y": (7 - 4 / 2 + (2 - 4 / 2) + (0 - 6 / 2), 3),
                          "z": (3 - 8 / 2, 1)}  # fmt: skip
