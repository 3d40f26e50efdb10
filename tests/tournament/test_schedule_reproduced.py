"""A research run with public deals is reproduced from its file (docs/tournaments.md, "The schedule"; docs/security.md,
"Public deals"): the same file gives the same games, seats and decks on any machine and Python version. These are
the games of three such files, as this referee schedules them: a sampled round robin in rotations, duplicate across
tables, and across tables with owners and a sample. A change that alters them breaks every published research run;
make it knowingly, and say so in the changelog. (In this process, so mutation testing sees the calls.)"""

from __future__ import annotations

import hashlib
import json

import pytest

from referee.tournament import schedule
from referee.tournament.config import parse


def _config(n: int, k: int, deals: int, tables: int, seat_orders: str | None, owners: list[int] | None = None,
            seed: int = 11):  # fmt: skip
    entrants = [{"name": f"bot{i}", "policy": "random"} for i in range(n)]
    for e, o in zip(entrants, owners or [], strict=False):
        e["owner"] = f"o{o}"
    data = {"name": "research", "entrants": entrants, "table_size": k, "deals": deals, "tables": tables, "seed": seed,
            "public_deals": True}  # fmt: skip
    if seat_orders:
        data["seat_orders"] = seat_orders
    return parse(data, "r.toml")


CASES = {
    "sampled rotations": (
        _config(6, 3, 2, 4, "rotations"),
        24,
        [("t0-d0-o0", ("bot0", "bot3", "bot2"), 861248165055167095),
         ("t0-d0-o1", ("bot3", "bot2", "bot0"), 861248165055167095),
         ("t0-d0-o2", ("bot2", "bot0", "bot3"), 861248165055167095),
         ("t1-d0-o0", ("bot4", "bot1", "bot5"), 8320868484737307221)],
        "647a765b777045ed449c19ba804ebd240a011bb1e636b24b1572874723e1a029",
    ),
    # every seat order plays every neighbour already: its schedule is the one from before the circles changed
    "all seat orders": (
        _config(4, 3, 2, 0, "all"),
        48,
        [("t0-d0-o0", ("bot0", "bot2", "bot3"), 861248165055167095),
         ("t0-d0-o1", ("bot0", "bot3", "bot2"), 861248165055167095)],
        "4724c38b8a3cff07fe06cef5a778c9fee5b6a87db15c5887ff18e242173b79a7",
    ),
    "across": (
        _config(8, 2, 3, 0, None),
        84,
        [("t0-d0-o0", ("bot6", "bot0"), 861248165055167095),
         ("t0-d0-o1", ("bot7", "bot1"), 861248165055167095),
         ("t0-d0-o2", ("bot4", "bot2"), 861248165055167095),
         ("t0-d0-o3", ("bot3", "bot5"), 861248165055167095),
         ("t1-d0-o0", ("bot3", "bot4"), 8320868484737307221)],
        "f5ac16f6830d467abccab111bd5d0cf05db7e2c8f23d9841a134a530bb5750d4",
    ),
    "across, owners, sampled": (
        _config(9, 3, 2, 5, None, [0, 0, 1, 1, 2, 2, 3, 3, 4]),
        12,
        [("t0-d0-o0", ("bot8", "bot7", "bot2"), 861248165055167095),
         ("t1-d0-o0", ("bot0", "bot7", "bot3"), 8320868484737307221),
         ("t2-d0-o0", ("bot4", "bot1", "bot2"), 5370429617501565272)],
        "741dfab6ff23f7210352ca8ad2c41b9b8cdf4bd84ea8729f40c033c1ad622ef7",
    ),
    # two samples whose draws take the sample's finer rules (the tie between tables that met least; a table drawn
    # from entrants sharing no owner with the one before while enough of them are left)
    "sample ties": (
        _config(10, 4, 1, 19, None, seed=852),
        20,
        [("t0-d0-o0", ("bot1", "bot5", "bot9", "bot3"), 5302086035414458796)],
        "9134208b07282185bc1d858450b2ddcc192b50e34014f661d9bbc8354ad81adc",
    ),
    "sample of owners": (
        _config(11, 4, 1, 3, None, [6, 8, 10, 3, 4, 4, 9, 7, 8, 6, 9], seed=491),
        11,
        [("t0-d0-o0", ("bot8", "bot0", "bot7", "bot2"), 3899514317696399393)],
        "a5091f07f447af480ff6cf158cbe97e7acce6fee385e5c2d866d9a8c91deee11",
    ),
    # two across files whose sections take the grouping's retries: the first order of the tables leaves one alone
    # and a later try (the fixed shuffle seeded 1..7) pairs them all; and one where all eight tries leave a table
    # alone (a ninth would pair them all), so the first try's grouping is kept
    "sections retried": (
        _config(9, 2, 2, 5, None, [8, 1, 5, 3, 7, 6, 3, 7, 1], seed=198),
        18,
        [("t0-d0-o0", ("bot5", "bot0"), 5223694276055175030),
         ("t0-d0-o1", ("bot2", "bot4"), 5223694276055175030),
         ("t0-d0-o2", ("bot6", "bot1"), 5223694276055175030)],
        "e056d2a38bdfe76199c447de7566986f7626066801963a9e0675a8d2dba122fa",
    ),
    "sections after eight tries": (
        _config(9, 2, 2, 5, None, [1, 4, 2, 6, 0, 4, 1, 3, 0], seed=72),
        18,
        [("t0-d0-o0", ("bot0", "bot4"), 6490335909285076673),
         ("t0-d0-o1", ("bot7", "bot3"), 6490335909285076673),
         ("t1-d0-o0", ("bot8", "bot2"), 4920313433494643507)],
        "374153f3157889317332351f9a9cbfecfadaa4b389bfd40ac71314522ef3dccd",
    ),
    # more whose draws take rules no case above reaches: the sample's preference for a table not drawn yet,
    # the squared count of earlier meetings it minimises, and the tables of a section a lone table joins (an owner
    # with four entrants at tables of two), no table drawn twice while a new one is left, and a lone table's search
    # for a partner, which looks at every table of each step before the next
    "sample avoids a table twice": (
        _config(9, 3, 2, 12, None, [4, 5, 5, 5, 0, 3, 6, 6, 6], seed=408),
        24,
        [("t0-d0-o0", ("bot5", "bot4", "bot6"), 4412403627601342626)],
        "fd618d28284d87ccdca3583ac5502ada896ddc12e46028831f76076766235170",
    ),
    "sample meets least, squared": (
        _config(10, 5, 3, 9, "rotations", [1, 1, 1, 0, 1, 4, 3, 1, 4, 4], seed=561),
        150,
        [("t0-d0-o0", ("bot2", "bot9", "bot0", "bot5", "bot8"), 8794049723022745951)],
        "52c71944e711e2b852f828b7ad71f74ed37618671adbf15d689d4399fe2f534a",
    ),
    "sections join a lone table to a pair": (
        _config(11, 2, 1, 0, None, [0, 6, 3, 0, 5, 0, 0, 9, 3, 7, 4], seed=930),
        48,
        [("t0-d0-o0", ("bot8", "bot6"), 3481410287248189576)],
        "6a0e84d27f3392c8cbfc811996a7af8eb3a5878503053f1ebf9246791cb1aad0",
    ),
    "sample draws no table twice while a new one is left": (
        _config(9, 5, 1, 7, None, [0, 5, 5, 0, 6, 1, 1, 3, 3], seed=943),
        9,
        [("t0-d0-o0", ("bot3", "bot8", "bot4", "bot6", "bot2"), 7948871704629562064)],
        "67f595c89e3d00d254b842e78c9fed501e532c83b27f2ec1cdb991746334252a",
    ),
    "sections search every table of each step": (
        _config(10, 4, 1, 0, None, None, seed=751),
        210,
        [("t0-d0-o0", ("bot0", "bot6", "bot5", "bot8"), 3734500069721378708)],
        "ff7755176b64543a7bc9da7d1ee19582da438c2b8fcb0ccc07309f63d53332b0",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_a_public_research_file_gives_these_games_on_every_machine(case: str) -> None:
    cfg, count, first, digest = CASES[case]
    slots = schedule.build(cfg, None)
    rows = [(s.game_id.removeprefix(f"{cfg.tournament_id}-"), s.seats, s.deck_seed) for s in slots]
    assert len(rows) == count and rows[: len(first)] == first
    assert hashlib.sha256(json.dumps(rows).encode()).hexdigest() == digest
    assert [s.slot for s in slots] == list(range(count))


def test_a_seed_is_derived_by_sha256_of_its_parts() -> None:
    """The derivation the docs promise is stable across Python versions and platforms: the first 8 bytes of
    SHA-256 of "seed/part/part...", big-endian, top bit cleared."""
    for parts, text in (((5, "tables"), b"5/tables"), ((11, "members", 3), b"11/members/3"), ((0,), b"0")):
        want = int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1
        assert schedule._derive(*parts) == want  # type: ignore[arg-type]


def test_a_sampled_schedule_is_the_same_twice_and_another_seed_samples_other_tables() -> None:
    a = schedule.build(_config(7, 3, 1, 7, "rotations"), None)
    assert a == schedule.build(_config(7, 3, 1, 7, "rotations"), None)
    other = parse({**json.loads(json.dumps(_config(7, 3, 1, 7, "rotations").to_json())), "seed": 12}, "r.toml")
    assert {frozenset(s.seats) for s in schedule.build(other, None)} != {frozenset(s.seats) for s in a}


def test_a_game_dealt_again_is_named_with_its_attempt_and_a_schedule_needs_its_key() -> None:
    """A void deal's games are dealt again under new ids (their records would otherwise overwrite the void ones);
    a schedule of secret deals is not built without the tournament's key."""
    assert schedule.game_id("t", 1, 2, 0) == "t-t1-d2-o0"
    assert schedule.game_id("t", 1, 2, 0, 3) == "t-t1-d2-o0-a3"
    secret = parse({**json.loads(json.dumps(_config(4, 2, 1, 0, None).to_json())), "public_deals": False}, "r.toml")
    with pytest.raises(ValueError, match=f"tournament {secret.tournament_id} needs its deal key"):
        schedule.build(secret, None)
