"""Duplicate across tables (the default scheme): property tests of the schedule over every table size 2-5 and
entrant count up to 12, with and without owners (issue 10: never the same deal twice for one entrant)."""

import itertools
from collections import Counter, defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.tournament import schedule
from referee.tournament.config import ConfigError, parse

KEY = b"across-test-key!"  # the deal key: it decides the decks, never the tables


def config(n: int, k: int, *, deals: int = 1, tables: int = 0, seed: int = 5, owners: list[int] | None = None,
           seat_orders: str | None = None):  # fmt: skip
    entrants = [{"name": f"bot{i}", "address": f"127.0.0.1:{50000 + i}"} for i in range(n)]
    for e, owner in zip(entrants, owners or [], strict=False):
        e["owner"] = f"owner{owner}"
    data = {"entrants": entrants, "table_size": k, "deals": deals, "tables": tables, "seed": seed}
    if seat_orders:
        data["seat_orders"] = seat_orders
    return parse(data, "test.toml")


def owner_of(cfg) -> dict[str, str]:
    return {e.name: e.owner or e.name for e in cfg.entrants}


def by_deck(slots: list[schedule.Slot]) -> dict[int, list[schedule.Slot]]:
    out: dict[int, list[schedule.Slot]] = defaultdict(list)
    for s in slots:
        out[s.deck_seed].append(s)
    return out


def no_deck_twice(cfg, slots: list[schedule.Slot]) -> None:
    """No entrant, and no owner, receives one deck in two games."""
    owner = owner_of(cfg)
    for games in by_deck(slots).values():
        entrants = [name for s in games for name in s.seats]
        assert len(entrants) == len(set(entrants)), games
        owners = [{owner[name] for name in s.seats} for s in games]
        for a, b in itertools.combinations(owners, 2):
            assert a.isdisjoint(b), games


def lone_decks(slots: list[schedule.Slot]) -> int:
    """Deals played at one table only: nobody else holds those cards."""
    return sum(len(games) == 1 for games in by_deck(slots).values())


CASES = st.integers(2, 5).flatmap(lambda k: st.tuples(st.just(k), st.integers(k + 1, 12)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=CASES, deals=st.integers(1, 3), tables=st.sampled_from([0, 1, 5, 12, 30]), seed=st.integers(0, 2**32))
def test_no_entrant_gets_a_deck_twice_and_every_seat_is_held_by_two_where_the_count_allows(
    case: tuple[int, int], deals: int, tables: int, seed: int
) -> None:
    k, n = case
    cfg = config(n, k, deals=deals, tables=tables, seed=seed)
    assert cfg.seat_orders == "across"  # the default with more entrants than seats
    slots = schedule.build(cfg, KEY)
    assert len(slots) == schedule.size(n, k, tables, deals, "across")
    assert len({s.game_id for s in slots}) == len(slots)
    no_deck_twice(cfg, slots)
    # every seat's cards of a deal are held by one entrant per table of its section (tables share nobody)
    table_count = len(slots) // deals
    if n >= 2 * k:
        # every deal goes to two tables or more; only when the tables cannot all be paired (an odd count, and too
        # few entrants for three tables side by side) is one table's deal left alone
        allowed = 1 if table_count % 2 and n < 3 * k else 0
        assert lone_decks(slots) <= allowed * deals
    else:
        assert lone_decks(slots) == len(slots)  # two tables side by side need 2 x table_size entrants


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=CASES, data=st.data(), tables=st.sampled_from([0, 5, 12]), seed=st.integers(0, 2**32))
def test_no_owner_gets_a_deck_twice(case: tuple[int, int], data: st.DataObject, tables: int, seed: int) -> None:
    k, n = case
    owners = data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n))
    if len(set(owners)) < k:  # no table of k different owners: refused up front, naming the way out
        with pytest.raises(ConfigError, match=r"different owners.*rotations"):
            config(n, k, deals=2, tables=tables, seed=seed, owners=owners)
        return
    cfg = config(n, k, deals=2, tables=tables, seed=seed, owners=owners)
    slots = schedule.build(cfg, KEY)
    no_deck_twice(cfg, slots)
    # no table seats two entrants of one owner: their author would see both hands of one game
    owner = owner_of(cfg)
    assert all(len({owner[name] for name in s.seats}) == k for s in slots)
    assert len(slots) == schedule.size(n, k, tables, 2, "across", [owner[e.name] for e in cfg.entrants])


@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("n", range(6, 13))
def test_the_round_robin_plays_every_set_and_seats_every_entrant_evenly(n: int, k: int) -> None:
    if n <= k:
        return
    cfg = config(n, k, deals=k)
    slots = schedule.build(cfg, KEY)
    names = [f"bot{i}" for i in range(n)]
    # every set of k entrants is a table once, and plays each of the k deals once
    assert Counter(frozenset(s.seats) for s in slots) == {frozenset(c): k for c in itertools.combinations(names, k)}
    # over k deals each member of a table holds every seat once: every entrant holds every seat equally often
    seats = Counter((name, seat) for s in slots for seat, name in enumerate(s.seats))
    assert len({seats[(name, seat)] for name in names for seat in range(k)}) == 1
    no_deck_twice(cfg, slots)


def test_the_owners_of_the_service_keep_two_entrants_of_one_author_apart() -> None:
    # six entrants of three authors, two each, at 2 players: without owners, an author's pair would get one deck
    # at two tables
    cfg = config(6, 2, deals=3, owners=[0, 0, 1, 1, 2, 2])
    slots = schedule.build(cfg, KEY)
    no_deck_twice(cfg, slots)
    plain = config(6, 2, deals=3)
    assert any(
        {owner_of(cfg)[n] for n in a.seats} & {owner_of(cfg)[n] for n in b.seats}
        for games in by_deck(schedule.build(plain, KEY)).values()
        for a, b in itertools.combinations(games, 2)
    )


def test_the_schedule_is_a_pure_function_of_the_config_and_key() -> None:
    a = schedule.build(config(9, 3, deals=2, seed=8), KEY)
    assert a == schedule.build(config(9, 3, deals=2, seed=8), KEY)
    assert [s.seats for s in a] != [s.seats for s in schedule.build(config(9, 3, deals=2, seed=9), KEY)]
    # another key deals other decks to the very same tables and seats
    other = schedule.build(config(9, 3, deals=2, seed=8), b"another-deal-key")
    assert [s.seats for s in other] == [s.seats for s in a]
    assert {s.deck_seed for s in other}.isdisjoint({s.deck_seed for s in a})


def test_a_section_plays_one_deck_at_each_of_its_tables() -> None:
    slots = schedule.build(config(8, 2, deals=2), KEY)
    for games in by_deck(slots).values():
        assert len({(s.table, s.deal) for s in games}) == 1  # one duplicate set: standings compare within it
        assert [s.order for s in games] == list(range(len(games)))
        assert len(games) >= 2


def test_head_to_head_has_only_rotations_and_across_is_refused_there() -> None:
    assert config(3, 3).seat_orders == "rotations"
    with pytest.raises(ConfigError, match="needs more entrants than the 3 seats"):
        config(3, 3, seat_orders="across")
    assert config(4, 3, seat_orders="rotations").seat_orders == "rotations"


def test_each_deal_groups_the_tables_afresh_so_a_table_meets_other_tables() -> None:
    # a fixed grouping would compare a table's players with the same other tables all tournament long: if those
    # had weak opponents, the bias would never average out
    slots = schedule.build(config(8, 2, deals=4), KEY)
    partners: dict[frozenset, set[frozenset]] = defaultdict(set)  # table -> the tables it shared a deal with
    for games in by_deck(slots).values():
        for a in games:
            partners[frozenset(a.seats)] |= {frozenset(b.seats) for b in games if b is not a}
    most = (8 // 2) - 1  # the most tables one grouping puts beside a table
    assert all(len(p) > most for p in partners.values())
