"""The ladder's seating (the free entrant nearest each target, owners apart, under the pair cap), checked against a
plain search on the first rule's targets (``BLOCKS``, kept to make old choices again), and the parts of a choice
the pairing tests leave loose: who opens a table, the pair counts, the decks."""

from __future__ import annotations

import random

from referee.tournament.config import LadderSettings
from referee.tournament.ladder import Meetings, Member, _Blocks, _Field, _Seating, choose


def block_table(seating: _Seating, anchor: Member, k: int, offset: int, meetings: Meetings, cap: int):
    """The table ``seating`` builds for ``anchor`` under the blocks rule (``BLOCKS``) cut at ``offset``."""
    targets = _Blocks(seating, k, offset).targets(anchor)
    return seating.table_for(anchor, targets, meetings, cap, False)


class PlainSeating:
    """The rule, by brute force: the entrants in mu order; an anchor's block is the k neighbours in that order cut
    from ``offset`` (wrapping round); each opponent is the free entrant nearest in mu to a block-mate's mu (the
    nearer of two at one distance is the lower; among equal mus the one first met walking out from the target),
    not already at the table, of no owner there, and under the pair cap; when the later ones cannot be found the
    first opponent is sought further away, up to 8 times; the cap is raised by one, then two, then dropped."""

    def __init__(self, members: list[Member], jitter: dict[str, float]) -> None:
        self.members = sorted(members, key=lambda m: (m.mu, jitter[m.name]))
        self.free = set(range(len(self.members)))

    def pick(self, target: float, picked: list[int], meetings: Meetings, cap: int | None, skip: list[int]):
        mus = [m.mu for m in self.members]
        p = sum(1 for mu in mus if mu < target)  # the first position at or above the target

        def order(j: int) -> tuple:
            return (abs(target - mus[j]), 0, -j) if j < p else (abs(target - mus[j]), 1, j)

        owners = {self.members[j].owner for j in picked}
        for j in sorted(self.free, key=order):
            m = self.members[j]
            if j in picked or j in skip or m.owner in owners:
                continue
            mine = meetings.count.get(m.name, {})
            if cap is not None and any(mine.get(self.members[i].name, 0) >= cap for i in picked):
                continue
            return j
        return None

    def table_for(self, anchor: str, k: int, offset: int, meetings: Meetings, cap: int) -> list[str] | None:
        n = len(self.members)
        a = next(i for i, m in enumerate(self.members) if m.name == anchor)
        start = a - (a - offset) % k
        targets = [self.members[(start + j) % n].mu for j in range(k) if (start + j) % n != a]
        for limit in (cap, cap + 1, cap + 2, None) if cap else (None,):
            tried: list[int] = []
            for _ in range(8):
                first = self.pick(targets[0], [a], meetings, limit, tried)
                if first is None:
                    break
                picked = [a, first]
                for target in targets[1:]:
                    i = self.pick(target, picked, meetings, limit, [])
                    if i is None:
                        break
                    picked.append(i)
                if len(picked) == k:
                    self.free -= set(picked)
                    return [self.members[i].name for i in picked]
                tried.append(first)
        return None


def test_the_seating_finds_what_a_plain_search_finds() -> None:
    """Random fields (mus on a coarse grid, so that distances tie; owners shared; pairs that already met, under a
    pair cap or none), anchors in a random order: every table is the one the plain search builds, member for
    member, and nobody is seated twice."""
    checked = 0
    for case in range(300):
        rng = random.Random(case)
        n, k = rng.randrange(2, 30), rng.randrange(2, 6)
        members = [
            Member(f"e{i}", f"o{rng.randrange(max(1, n // 2))}", float(rng.randrange(8)), 1.0, 0) for i in range(n)
        ]
        jitter = {m.name: rng.random() for m in members}
        meetings = Meetings(10)
        for _ in range(rng.randrange(4)):
            meetings.add_round([tuple(rng.sample([m.name for m in members], min(n, k)))])
        cap = rng.choice([0, 1, 1, 2])
        offset = rng.randrange(k)
        fast, plain = _Seating(members, jitter), PlainSeating(members, jitter)
        seated: list[str] = []
        for anchor in rng.sample(members, n):
            if not fast.free(anchor.name):
                assert anchor.name in seated
                continue
            got = block_table(fast, anchor, k, offset, meetings, cap)
            assert got == plain.table_for(anchor.name, k, offset, meetings, cap), (case, anchor.name)
            seated += got or []
            checked += got is not None
        assert len(seated) == len(set(seated))
    assert checked > 500


def test_a_relaxed_pair_cap_rises_one_step_at_a_time() -> None:
    """Anchor a's block-mate is b; every other entrant met a before. Under a cap of 1 no table fits; the cap is
    raised to 2, then 3, before it is dropped, and the nearest entrant allowed at that step is taken."""
    members = [Member(n, n, mu, 1.0, 0) for n, mu in (("a", 0.0), ("b", 1.0), ("c", 2.0), ("d", 3.0))]
    jitter = dict.fromkeys("abcd", 0.0)

    def seat(counts: dict[str, int]) -> list[str] | None:
        meetings = Meetings(10)
        for other, times in counts.items():
            for _ in range(times):
                meetings.add_round([("a", other)])
        return block_table(_Seating(members, jitter), members[0], 2, 0, meetings, 1)

    assert seat({"b": 2, "c": 1, "d": 1}) == ["a", "c"]  # raised to 2: b (met twice) still kept apart
    assert seat({"b": 3, "c": 2, "d": 2}) == ["a", "c"]  # raised to 3
    assert seat({"b": 4, "c": 4, "d": 4}) == ["a", "b"]  # dropped: the nearest


def test_a_first_opponent_that_leaves_no_room_is_replaced_by_the_next_nearest() -> None:
    """Block a, b, c under a cap of 1: b is nearest to b's mu but has met both c and d, so no third fits beside
    it; the next nearest to that mu, c, is tried instead, and d completes the table (no cap is relaxed)."""
    members = [Member(n, n, mu, 1.0, 0) for n, mu in (("a", 0.0), ("b", 1.0), ("c", 2.0), ("d", 3.0))]
    meetings = Meetings(10)
    meetings.add_round([("b", "c"), ("b", "d")])
    table = block_table(_Seating(members, dict.fromkeys("abcd", 0.0)), members[0], 3, 0, meetings, 1)
    assert table == ["a", "c", "d"]


def test_pair_counts_cover_exactly_the_last_window_rounds() -> None:
    meetings = Meetings(2)
    meetings.add_round([("a", "b", "c")])
    assert meetings.count == {"a": {"b": 1, "c": 1}, "b": {"a": 1, "c": 1}, "c": {"a": 1, "b": 1}}
    meetings.add_round([("a", "b")])
    assert meetings.count["a"] == {"b": 2, "c": 1}
    meetings.add_round([("a", "d")])  # the first round leaves the window of two
    assert meetings.count["a"] == {"b": 1, "d": 1} and meetings.count["c"] == {}
    meetings.add_round([])
    meetings.add_round([])
    assert all(not pairs for pairs in meetings.count.values())  # nobody met in the last two rounds


def test_who_opens_the_one_table_new_then_most_uncertain_then_fewest_games() -> None:
    """One table a round: the entrant with the highest priority opens it, whatever the seed. New (fewer than
    new_games scheduled) before anyone, fewest games first, then higher sigma; then the unsettled (sigma at or
    above sigma_target), highest sigma first; then the settled, fewest games first."""
    settings = LadderSettings(tables=1, new_games=10, sigma_target=2.0)

    def opener(first: Member, second: Member) -> set[str]:
        # settled, with many games, around and between the two (so neither is the other's neighbour in mu)
        filler = [Member(f"_{mu}", f"_{mu}", float(mu), 1.0, 90) for mu in (0, 1, 20, 21, 22, 50, 51)]
        first, second = Member(first.name, first.name, 10.0, first.sigma, first.games), second
        firsts = set()
        for seed in range(12):
            (table,) = choose(0, [first, second, *filler], settings, 2, seed, Meetings(10))
            firsts |= {n for n in table if not n.startswith("_")}
        return firsts

    def m(name: str, sigma: float, games: int) -> Member:
        return Member(name, name, 40.0, sigma, games)

    assert opener(m("new", 1.0, 9), m("unsure", 8.0, 40)) == {"new"}
    assert opener(m("new3", 8.0, 3), m("new2", 1.0, 2)) == {"new2"}  # fewest games first among the new
    assert opener(m("hi", 5.0, 2), m("lo", 4.0, 2)) == {"hi"}  # then the higher sigma
    assert opener(m("ten", 1.0, 10), m("unsure", 8.0, 40)) == {"unsure"}  # ten games is not new: settled
    assert opener(m("narrow", 3.0, 40), m("wide", 6.0, 40)) == {"wide"}  # the unsettled: highest sigma first
    assert opener(m("at", 2.0, 40), m("settled", 1.9, 12)) == {"at"}  # sigma at the target is unsettled
    assert opener(m("fewer", 1.0, 30), m("more", 1.5, 31)) == {"fewer"}  # the settled by games, not sigma


def test_the_field_is_cut_into_windows_of_two_tables_a_short_last_part_joining_its_neighbour() -> None:
    def parts(n: int, offset: int) -> list[list[int]]:
        members = [Member(f"e{i:02d}", "o", float(i), 1.0, 0) for i in range(n)]
        return _Field(members, (), 4, offset, {m.name: 0.0 for m in members}, {}, random.Random(0)).parts

    assert parts(16, 0) == [[0, 8], [8, 16]]
    assert parts(16, 4) == [[0, 4], [4, 12], [12, 16]]
    assert parts(18, 0) == [[0, 8], [8, 18]]  # 16-18 is shorter than a table: it joins 8-16
    assert parts(19, 4) == [[0, 4], [4, 12], [12, 19]]
    assert parts(10, 0) == [[0, 10]]
    assert parts(3, 4) == [[0, 3]]


def test_an_anchors_places_are_the_idle_in_its_window_first_then_the_busy_then_the_nearest_outside() -> None:
    """Idle a (mu 1), b (2), c (20) and busy entrants at mu 0 and 3 to 7 and 21 to 27: a's window (the first
    eight places) gives b first (idle, next by priority), then two busy places of that window, never c's."""
    idle = [Member("a", "a", 1.0, 1.0, 0), Member("b", "b", 2.0, 1.0, 0), Member("c", "c", 20.0, 1.0, 0)]
    busy = [0.0, 3.0, 4.0, 5.0, 6.0, 7.0, *(21.0 + i for i in range(7))]
    rank = {"a": 0, "b": 1, "c": 2}
    for seed in range(20):
        field = _Field(idle, busy, 4, 0, dict.fromkeys("abc", 0.0), rank, random.Random(seed))
        targets = field.targets(idle[0])
        assert targets[0] == 2.0 and len(targets) == 3
        assert set(targets[1:]) <= {0.0, 3.0, 4.0, 5.0, 6.0, 7.0}, targets


def test_a_spent_window_takes_the_nearest_free_places_outside_it_the_lower_first_at_one_distance() -> None:
    members = [Member(f"e{i:02d}", "o", float(i), 1.0, 0) for i in range(24)]
    rank = {m.name: i for i, m in enumerate(members)}

    def targets(anchor: int, used: set[int], n: int = 24) -> list[float]:
        field = _Field(members[:n], (), 4, 0, dict.fromkeys(rank, 0.0), rank, random.Random(0))  # 0-8, 8-16, 16-24
        field.used = set(used)
        return field.targets(members[anchor])

    window = {8, 9, 10, 11, 13, 14, 15}  # all of 12's window but 12 is held
    assert targets(12, window) == [16.0, 7.0, 17.0]  # 4 places above, then 5 below and 5 above: the lower first
    assert targets(12, window | {16}) == [7.0, 17.0, 6.0]
    # place 0 as near as place 16 (8 places): the lower first
    assert targets(8, {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15}) == [0.0, 16.0, 17.0]
    # at the bottom: the free places left, down to place 0, and no more (12 places: windows 0-8, 8-12)
    assert targets(9, {1, 2, 3, 4, 5, 6, 7, 8, 10}, n=12) == [11.0, 0.0]


def test_an_idle_entrant_comes_before_a_busy_one_of_the_same_mu() -> None:
    """At one mu the idle entrant takes the lower place: here the last place of the first window, not the first of
    the next."""
    idle = Member("x", "x", 7.0, 1.0, 0)
    busy = [*(float(i) for i in range(8)), *(8.0 + i for i in range(8))]
    field = _Field([idle], busy, 4, 0, {"x": 0.5}, {"x": 0}, random.Random(0))
    assert field.place["x"] == 7 and field.window[7] == 0 and field.mus[8] == 7.0
