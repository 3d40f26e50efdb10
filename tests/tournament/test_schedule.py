import itertools
import math
from collections import Counter

import pytest

from referee.engine import deck_from_seed, new_game
from referee.tournament import schedule
from referee.tournament.config import parse
from referee.tournament.deals import PublicDeals, deck_seed

KEY = bytes(range(32))


def config(n: int, k: int, deals: int = 2, tables: int = 0, seat_orders: str = "rotations", seed: int = 5):
    entrants = [{"name": f"bot{i}", "address": f"127.0.0.1:{50000 + i}"} for i in range(n)]
    data = {"entrants": entrants, "table_size": k, "deals": deals, "tables": tables, "seat_orders": seat_orders,
            "seed": seed}  # fmt: skip
    return parse(data, "test.toml")


@pytest.mark.parametrize("n,k", [(2, 2), (4, 2), (4, 3), (5, 4), (6, 5), (5, 3)])
def test_round_robin_plays_every_set_and_every_entrant_holds_every_seat(n: int, k: int) -> None:
    cfg = config(n, k, deals=2)
    slots = schedule.build(cfg, KEY)
    sets = {frozenset(s.seats) for s in slots}
    assert sets == {frozenset(c) for c in itertools.combinations([f"bot{i}" for i in range(n)], k)}
    assert len(slots) == len(sets) * 2 * k
    for _key, group in itertools.groupby(sorted(slots, key=lambda s: s.duplicate_set), key=lambda s: s.duplicate_set):
        group = list(group)
        assert len(group) == k
        # the same deal for the whole duplicate set
        assert len({s.deck_seed for s in group}) == 1
        # every member holds every seat's cards once
        for seat in range(k):
            assert sorted(s.seats[seat] for s in group) == sorted(group[0].seats)
    # distinct deals get distinct decks, and game ids are unique
    assert len({s.deck_seed for s in slots}) == len(sets) * 2
    assert len({s.game_id for s in slots}) == len(slots)


def test_duplicate_set_really_repeats_the_deck_across_rotations() -> None:
    slots = schedule.build(config(4, 3, deals=1), KEY)
    first = [s for s in slots if s.duplicate_set == slots[0].duplicate_set]
    hands = []
    for s in first:
        state = new_game(deck_from_seed(s.deck_seed), 3, start_seat=s.start_seat)
        # which entrant got which hand
        hands.append({s.seats[seat]: state.hands[seat] for seat in range(3)})
    # the hands dealt are the same three hands each time, held by a different entrant
    assert all(sorted(h.values()) == sorted(hands[0].values()) for h in hands)
    for name in first[0].seats:
        assert len({h[name] for h in hands}) == 3


@pytest.mark.parametrize("seat_orders", ["rotations", "across"])
def test_each_game_plays_the_deck_of_its_own_table_and_deal(seat_orders: str) -> None:
    # issue 22 lucky catch: a deck seed with table and deal swapped was caught only by the public-derivation test.
    # Every slot's seed is deck_seed(key, tournament, table, deal) (for across, the table is the section), for
    # tables and deals that differ, so a swap shows
    cfg = config(12, 3, deals=3, tables=12, seat_orders=seat_orders)
    slots = schedule.build(cfg, KEY)
    assert {(s.table, s.deal) for s in slots} >= {(0, 1), (1, 0), (1, 2), (2, 1)}
    for s in slots:
        assert s.deck_seed == deck_seed(KEY, cfg.tournament_id, s.table, s.deal), s.game_id
    public = schedule.build(config(12, 3, deals=3, tables=12, seat_orders=seat_orders), PublicDeals(5))
    for s in public:
        assert s.deck_seed == deck_seed(PublicDeals(5), "", s.table, s.deal), s.game_id


def test_three_player_tables_can_ask_for_all_six_seat_orders() -> None:
    slots = schedule.build(config(3, 3, deals=1, seat_orders="all"), KEY)
    assert len(slots) == 6
    assert len({s.seats for s in slots}) == 6


def test_schedule_is_a_pure_function_of_config_and_key() -> None:
    assert schedule.build(config(6, 4, deals=3), KEY) == schedule.build(config(6, 4, deals=3), KEY)
    other = schedule.build(config(6, 4, deals=3, seed=6), KEY)
    assert [s.seats for s in other] != [s.seats for s in schedule.build(config(6, 4, deals=3), KEY)]


@pytest.mark.parametrize("n,k,tables", [(10, 4, 30), (12, 3, 40), (9, 5, 18), (20, 4, 50), (16, 5, 48), (8, 2, 12)])
def test_balanced_sample_when_there_are_too_many_sets(n: int, k: int, tables: int) -> None:
    slots = schedule.build(config(n, k, deals=1, tables=tables), KEY)
    table_sets = [frozenset(s.seats) for s in slots if s.order == 0]
    assert len(table_sets) == tables
    plays = Counter(name for t in table_sets for name in t)
    assert len(plays) == n and len(set(plays.values())) == 1, plays  # every entrant plays equally often
    met = Counter(frozenset(p) for t in table_sets for p in itertools.combinations(sorted(t), 2))
    counts = [met[frozenset(p)] for p in itertools.combinations([f"bot{i}" for i in range(n)], 2)]
    mean = sum(counts) / len(counts)
    assert max(counts) - min(counts) <= 3 and max(counts) <= mean + 2, counts  # every pair about equally often


def test_sample_size_is_rounded_up_so_everyone_plays_equally() -> None:
    assert schedule.table_count(10, 4, 31) == 35  # 35 * 4 is a multiple of 10
    assert schedule.table_count(5, 2, 100) == 10  # never more than every set


CIRCLES = [("across", 4, 3), ("across", 5, 4), ("rotations", 4, 3), ("rotations", 5, 4), ("rotations", 3, 3)]


@pytest.mark.parametrize("seat_orders,n,k", CIRCLES)  # across needs more entrants than seats
def test_each_member_of_a_table_sits_after_each_other_as_often_as_before_it(seat_orders: str, n: int, k: int) -> None:
    """Who sits after whom changes over the deals (docs/tournaments.md, "The schedule"): a table that kept one
    circle of seats for the whole tournament kept its members' neighbours, and two identical bots then differed by
    their seats, which the ratings' uncertainty does not count. Over k * (k - 1)! deals every circle is played."""
    deals = k * math.factorial(k - 1)
    after: Counter[tuple[frozenset[str], str, str]] = Counter()
    for s in schedule.build(config(n, k, deals=deals, seat_orders=seat_orders), KEY):
        for i, a in enumerate(s.seats):
            after[(frozenset(s.seats), a, s.seats[(i + 1) % k])] += 1
    assert after
    for (table, a, b), count in after.items():
        assert after[(table, b, a)] == count, (sorted(table), a, b)
