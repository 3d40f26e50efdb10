"""The service's registry (referee/service/registry.py) on a real SQLite store, called in this process: the server
reaches it from its own process in the other tests here, where mutation testing cannot see it (scripts/mutation.py).
What a user sees through it: a bot's versions and which one is current, the caps' counts (active bots of an author,
open tournaments of an organiser), a tournament's lifecycle, where a game is, and the bots' server-wide ratings."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace

import pytest

from referee.engine import EndReason
from referee.match.spec import GameResult, SeatStats
from referee.records.paths import record_in
from referee.service import registry as registry_module
from referee.service.registry import (
    ACTIVE,
    CANCELLED,
    CREATED,
    FINISHED,
    PAUSED,
    RETIRED,
    RUNNING,
    SUPERSEDED,
    Registry,
    bot_links,
    bot_ratings,
    health_address,
)
from referee.store import SqliteStore, open_store
from referee.store import ladder as ladder_store
from referee.store.ladder import LadderEntrant
from referee.tournament import schedule
from referee.tournament.config import parse
from referee.tournament.ladder_run import open_ladder
from tests.tournament.test_ladder_entrants import ladder_config


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The registry's clock, one second a reading, so submission order is its time order."""
    ticks = itertools.count(1000)
    now = [0.0]

    def time() -> float:
        now[0] = float(next(ticks))
        return now[0]

    monkeypatch.setattr(registry_module, "time", SimpleNamespace(time=time))
    return now


@pytest.fixture
def store(tmp_path: Path):
    with open_store(tmp_path / "d") as s:
        yield s


def _tournament(store: SqliteStore, name: str, entrants: tuple[str, ...] = ("a", "b")) -> str:
    cfg = parse({"name": name, "entrants": [{"name": n, "address": "127.0.0.1:1"} for n in entrants],
                 "table_size": 2, "deals": 1, "seed": 3, "seat_orders": "rotations", "public_deals": True},
                "t.toml")  # fmt: skip
    store.create_tournament(cfg, schedule.build(cfg, None), "t.toml", None)
    return cfg.tournament_id


def _play(store: SqliteStore, tid: str, slot: int, scores: tuple[int, int], places: tuple[int, int]) -> str:
    s = store.slots(tid)[slot]
    store.mark_started(tid, slot)
    record = record_in(store.records, s.game_id)
    record.write_bytes(b"a game")
    result = GameResult(s.game_id, scores, places, EndReason.EMPTY_HAND, [SeatStats(), SeatStats()], 10, "", record)
    store.save_game(tid, s, result)
    return s.game_id


def test_a_resubmitted_bot_is_its_next_version_and_supersedes_the_active_one(store: SqliteStore, clock) -> None:
    reg = Registry(store)
    v1 = reg.add_bot("ag", "127.0.0.1:7001", "alice", "1.0", "Al", "g1")
    assert (v1.name, v1.version, v1.state, v1.address, v1.owner) == ("ag", 1, ACTIVE, "127.0.0.1:7001", "alice")
    assert (v1.bot_version, v1.bot_author, v1.validation_game, v1.games_at_once) == ("1.0", "Al", "g1", 0)
    assert v1.entrant_id == "ag.v1" and v1.submitted_at == clock[0]
    v2 = reg.add_bot("ag", "127.0.0.1:7002", "alice", "2.0", "Al", "g2", games_at_once=3)
    assert (v2.version, v2.state, v2.games_at_once, v2.entrant_id) == (2, ACTIVE, 3, "ag.v2")
    assert [(b.version, b.state) for b in reg.versions("ag")] == [(2, ACTIVE), (1, SUPERSEDED)]
    assert reg.bot("ag") == v2 and reg.bot("ag", 1) == reg.versions("ag")[1] and reg.bot("ag", 3) is None
    assert reg.bot("nobody") is None and reg.versions("nobody") == []
    other = reg.add_bot("zed", "127.0.0.1:7003", "bob", "1", "Bo", "g3")
    assert other.version == 1 and reg.bot("ag") == v2  # another name is numbered apart and supersedes nothing


def test_retiring_keeps_the_version_and_a_later_submission_does_not_revive_it(store: SqliteStore, clock) -> None:
    reg = Registry(store)
    reg.add_bot("ag", "a:1", "alice", "1", "", "g1")
    reg.retire_bot("ag", 1)
    assert [b.state for b in reg.versions("ag")] == [RETIRED]
    assert reg.active_bots_of("alice") == 0
    reg.add_bot("ag", "a:2", "alice", "2", "", "g2")
    assert [(b.version, b.state) for b in reg.versions("ag")] == [(2, ACTIVE), (1, RETIRED)]
    assert reg.active_bots_of("alice") == 1


def test_active_bots_of_counts_an_authors_bots_not_their_versions(store: SqliteStore, clock) -> None:
    reg = Registry(store)
    for name, owner in [("a", "alice"), ("a", "alice"), ("b", "alice"), ("c", "bob"), ("d", "alice")]:
        reg.add_bot(name, "x:1", owner, "", "", "")
    reg.retire_bot("d", 1)
    assert reg.active_bots_of("alice") == 2 and reg.active_bots_of("bob") == 1 and reg.active_bots_of("eve") == 0


def test_bot_lists_are_newest_first_and_pages_follow_on(store: SqliteStore, clock) -> None:
    reg = Registry(store)
    for name in ["a", "b", "a", "c", "b"]:
        reg.add_bot(name, "x:1", "o", "", "", "")
    reg.retire_bot("c", 1)
    ids = [b.entrant_id for b in reg.bots()]
    assert ids == ["b.v2", "c.v1", "a.v2", "b.v1", "a.v1"]
    assert [b.entrant_id for b in reg.bots(active_only=True)] == ["b.v2", "a.v2"]
    page = reg.bots_page(active_only=False, before=None, limit=2)
    assert [b.entrant_id for _, b in page] == ["b.v2", "c.v1"]
    rest = reg.bots_page(active_only=False, before=page[-1][0], limit=10)
    assert [b.entrant_id for _, b in rest] == ["a.v2", "b.v1", "a.v1"]
    assert [b.entrant_id for _, b in reg.bots_page(True, None, 10)] == ["b.v2", "a.v2"]
    assert [b.entrant_id for _, b in reg.bots_page(False, None, 10, every=False)] == ["b.v2", "c.v1", "a.v2"]
    assert [b.entrant_id for _, b in reg.bots_page(True, page[0][0], 10)] == ["a.v2"]


def test_open_tournaments_count_created_running_and_paused_of_their_organiser_only(store: SqliteStore, clock) -> None:
    reg = Registry(store)
    states = {"t1": CREATED, "t2": RUNNING, "t3": PAUSED, "t4": FINISHED, "t5": CANCELLED}
    for tid, state in states.items():
        reg.add_tournament(tid, "org", {})
        reg.set_state(tid, state)
    reg.add_tournament("u1", "other", {})
    assert reg.open_tournaments_of("org") == 3
    assert reg.open_tournaments_of("other") == 1 and reg.open_tournaments_of("nobody") == 0


def test_a_tournaments_state_is_its_rows_or_else_what_the_store_says(store: SqliteStore, clock) -> None:
    reg = Registry(store)
    tid = _tournament(store, "cli-made")
    assert reg.state(tid) == (CREATED, "cli")  # made by `abluxx tournament run`: the service may start it
    store.finish(tid, {}, 0)
    assert reg.state(tid) == (FINISHED, "cli")
    assert reg.state(tid, store.tournament(tid)) == (FINISHED, "cli")
    assert reg.state("unknown") == (CREATED, "cli")
    reg.add_tournament("s1", "org", {"e": ("ag", 1)})
    assert reg.state("s1") == (CREATED, "org")
    reg.set_state("s1", RUNNING)
    assert reg.state("s1") == (RUNNING, "org")  # the creator stays
    reg.set_state(tid, RUNNING)
    assert reg.state(tid) == (RUNNING, "cli")


def test_running_lists_the_running_tournaments_in_the_order_they_started(store: SqliteStore, clock) -> None:
    reg = Registry(store)
    for tid in ["x", "y", "z", "w"]:
        reg.add_tournament(tid, "org", {})
    reg.set_state("z", RUNNING)
    reg.set_state("x", RUNNING)
    reg.set_state("w", RUNNING)
    reg.set_state("w", FINISHED)
    assert reg.running() == ["z", "x"]


def test_a_failed_transaction_leaves_nothing_behind(store: SqliteStore, clock) -> None:
    reg = Registry(store)
    store.db.execute(
        "INSERT INTO service_tournament_bots VALUES ('t', 'z', 'zz', 1)"
    )  # in the way of the second insert
    with pytest.raises(Exception, match="UNIQUE"):
        reg.add_tournament("t", "org", {"y": ("yy", 1), "z": ("zz", 1)})
    assert reg.state("t") == (CREATED, "cli")  # its row was rolled back with the links
    assert reg.linked("t") == {"z": ("zz", 1)}
    reg.add_tournament("t2", "org", {})  # the registry is usable after the rollback
    assert reg.state("t2") == (CREATED, "org")


def test_tournament_ids_page_through_the_stored_tournaments_oldest_first(store: SqliteStore) -> None:
    tids = [_tournament(store, f"n{i}") for i in range(4)]
    reg = Registry(store)
    assert reg.tournament_ids(0, 10) == tids
    assert reg.tournament_ids(1, 2) == tids[1:3] and reg.tournament_ids(4, 2) == []


def test_a_games_location_and_its_slot(store: SqliteStore) -> None:
    reg = Registry(store)
    tid = _tournament(store, "where")
    slots = store.slots(tid)
    played = _play(store, tid, 0, (3, 1), (1, 2))
    assert reg.game_location(played) == (tid, f"records/{played}.abluxx")
    assert reg.game_location(slots[1].game_id) is None and reg.game_location("nope") is None
    assert reg.scheduled_game(played) == (tid, 0, slots[0].deck_seed, 1)
    assert reg.scheduled_game(slots[1].game_id) == (tid, 1, slots[1].deck_seed, 0)
    assert reg.scheduled_game("nope") is None


def test_links_name_the_bot_versions_a_tournament_plays(store: SqliteStore, clock) -> None:
    reg = Registry(store)
    reg.add_tournament("t1", "org", {"alpha": ("ag", 1), "beta": ("bg", 2)})
    reg.add_tournament("t2", "org", {"a2": ("ag", 2)})
    assert reg.linked("t1") == {"alpha": ("ag", 1), "beta": ("bg", 2)} and reg.linked("t9") == {}
    assert reg.entries("ag") == [("t1", "alpha", 1), ("t2", "a2", 2)] and reg.entries("zz") == []
    assert bot_links(store) == {("t1", "alpha"): ("ag", 1), ("t1", "beta"): ("bg", 2), ("t2", "a2"): ("ag", 2)}
    assert bot_links(store, "t2") == {("t2", "a2"): ("ag", 2)}


def test_bots_that_joined_a_ladder_are_linked_and_dialled_at_their_address(tmp_path: Path, store, clock) -> None:
    reg = Registry(store)
    config = ladder_config(tmp_path)
    tid = config.tournament_id
    open_ladder(store, config, "")
    v = reg.add_bot("ag", "127.0.0.1:7100", "alice", "", "", "")
    ladder_store.submit(store, tid, LadderEntrant("ag.v1", "alice", "ag", 1, address=v.address))
    ladder_store.submit(store, tid, LadderEntrant("stray", "alice", "ag", 1, address="x:1"))  # not named bot.vN
    ladder_store.submit(store, tid, LadderEntrant("ghost.v1", "bob", "ghost", 1, address="x:2"))  # no such bot
    assert bot_links(store) == {(tid, "ag.v1"): ("ag", 1)} == bot_links(store, tid)
    assert bot_links(store, "other") == {}
    assert reg.linked(tid) == {"ag.v1": ("ag", 1)} and reg.entries("ag") == [(tid, "ag.v1", 1)]
    assert health_address(store, reg, "ag.v1") == "127.0.0.1:7100"
    assert health_address(store, reg, "far") == "127.0.0.1:50999"  # the ladder file's entrant at an address
    assert health_address(store, reg, "stray") == "x:1"
    assert health_address(store, reg, "cmd") is None and health_address(store, reg, "rnd") is None
    assert health_address(store, reg, "ag.v7") is None and health_address(store, reg, "nobody") is None
    dotted = reg.add_bot("x.v2", "127.0.0.1:7200", "bob", "", "", "")  # a name may hold ".v": the last one counts
    assert health_address(store, reg, dotted.entrant_id) == "127.0.0.1:7200" and dotted.entrant_id == "x.v2.v1"


def test_links_survive_a_store_with_no_ladder_table(tmp_path: Path, store, clock) -> None:
    reg = Registry(store)
    reg.add_tournament("t1", "org", {"e": ("ag", 1)})
    store.db.execute("DROP TABLE ladder_entrants")
    assert bot_links(store) == {("t1", "e"): ("ag", 1)}


def test_ratings_follow_each_bot_version_across_tournaments(store: SqliteStore, clock) -> None:
    reg = Registry(store)
    assert bot_ratings(store) == {}
    t1 = _tournament(store, "r1", ("x", "y"))
    t2 = _tournament(store, "r2", ("p", "q"))
    _tournament(store, "r3", ("m", "n"))  # no submitted bot: left out
    reg.add_tournament(t1, "org", {"x": ("ag", 1), "y": ("bg", 1)})
    reg.add_tournament(t2, "org", {"p": ("ag", 1)})  # q is a file entrant of its own
    for slot in range(2):
        _play(store, t1, slot, (5, 0), (1, 2) if store.slots(t1)[slot].seats[0] == "x" else (2, 1))
        _play(store, t2, slot, (5, 0), (1, 2) if store.slots(t2)[slot].seats[0] == "p" else (2, 1))
    ratings = bot_ratings(store)
    assert set(ratings) == {("ag", 1), ("bg", 1)}
    ag, bg = ratings[("ag", 1)], ratings[("bg", 1)]
    assert ag[2] == 4 and bg[2] == 2  # games each version played on this server
    assert ag[0] > bg[0] and ag[1] < bg[1]  # ag won all four: rated above, and surer with more games
    reg.add_tournament("empty", "org", {"z": ("zz", 1)})  # linked, never played: no rating
    assert ("zz", 1) not in bot_ratings(store)


def test_a_tournaments_file_entrants_are_players_of_their_own(store: SqliteStore, clock) -> None:
    """Two file entrants of one tournament that meet are two players (not one "unlinked" player, who could not hold
    two seats of a game); a tournament no submitted bot plays is left out, whichever comes first."""
    reg = Registry(store)
    early = _tournament(store, "early", ("m", "n"))
    for slot in range(len(store.slots(early))):
        _play(store, early, slot, (5, 0), (1, 2))
    tid = _tournament(store, "three", ("x", "q", "r"))
    reg.add_tournament(tid, "org", {"x": ("ag", 1)})
    played = 0
    for s in store.slots(tid):
        won = 0 if s.seats[0] in ("x", "q") and s.seats[1] != "x" else 1
        _play(store, tid, s.slot, (5, 0) if won == 0 else (0, 5), (1, 2) if won == 0 else (2, 1))
        played += "x" in s.seats
    assert any("x" not in s.seats for s in store.slots(tid))  # q and r meet
    ratings = bot_ratings(store)
    assert list(ratings) == [("ag", 1)] and ratings[("ag", 1)][2] == played > 0
    assert ratings[("ag", 1)][0] > 25  # it won every game
