"""A ladder's entrants and rounds in a real store (referee/store/ladder.py), called in this process: the service
reaches these functions from its own process in `tests/service/test_ladder.py`, where mutation testing cannot see
them. Versions (docs/service.md, "Ladders"): a submission of the same bot by the same author is a new version that
is seated from the next round on, the old one no longer, with its games kept; a withdrawal seats no version of the
bot from the next round; standings show each bot's latest version unless asked for every version."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from referee.service.ladders import shown
from referee.store import StoreError, open_store
from referee.store import ladder as ladder_store
from referee.store.ladder import LadderEntrant
from referee.tournament.config import load
from referee.tournament.ladder_run import open_ladder, run_ladder
from referee.tournament.runner import standings_of
from referee.tournament.schedule import _slot

from .helpers import config_text, in_process_player

COMMAND = ["python3", "bot.py", "--fast"]


def ladder_config(tmp_path: Path, games: int = 6, others: bool = True):
    """A ladder of three built-in bots (two of one owner) and, with ``others``, one at an address and one at a
    command."""
    text = config_text(["rnd", "greedy", "counter"], name="lad", seed=4, table_size=3, public_deals=True)
    text = text.replace('name = "greedy"\n', 'name = "greedy"\nowner = "ann"\n')
    text = text.replace('name = "counter"\n', 'name = "counter"\nowner = "ann"\n')
    if others:
        text += '[[entrants]]\nname = "far"\naddress = "127.0.0.1:50999"\n'
        text += f'[[entrants]]\nname = "cmd"\ncommand = {COMMAND!r}\n'.replace("'", '"')
    path = tmp_path / "ladder.toml"
    path.write_text(text + f"[ladder]\ngames = {games}\n")
    return load(path)


def test_the_files_entrants_are_stored_with_their_owner_address_policy_and_command(tmp_path: Path) -> None:
    config = ladder_config(tmp_path)
    with open_store(tmp_path / "d") as store:
        open_ladder(store, config, "")
        open_ladder(store, config, "")  # a resume joins them again: those stored are kept, none doubled
        tid = config.tournament_id
        assert ladder_store.entrants(store, tid) == [
            LadderEntrant("rnd", "rnd", "rnd", policy="random"),  # no owner: its own owner
            LadderEntrant("greedy", "ann", "greedy", policy="greedy"),
            LadderEntrant("counter", "ann", "counter", policy="counter"),
            LadderEntrant("far", "far", "far", address="127.0.0.1:50999"),
            LadderEntrant("cmd", "cmd", "cmd", command=tuple(COMMAND)),
        ]


def test_a_new_version_is_seated_from_the_next_choice_and_the_old_one_keeps_its_games(tmp_path: Path) -> None:
    config = ladder_config(tmp_path, games=4, others=False)
    with open_store(tmp_path / "d") as store:
        open_ladder(store, config, "")
        tid = config.tournament_id
        v1 = ladder_store.submit(store, tid, LadderEntrant("ag.v1", "alice", "ag", 1, joined_round=7,
                                                               left_round=3, address="10.0.0.1:1"))  # fmt: skip
        assert v1 == LadderEntrant("ag.v1", "alice", "ag", 1, joined_round=0, address="10.0.0.1:1")
        other = ladder_store.submit(store, tid, LadderEntrant("ar.v1", "alice", "ar", 1, address="10.0.0.2:1"))
        bobs = ladder_store.submit(store, tid, LadderEntrant("ag.v1b", "bob", "ag", 1, address="10.0.0.3:1"))
        # four choices are made and played: 4 games, one table of 3 at a time (concurrency 1) among 6 entrants
        asyncio.run(run_ladder(config, store, in_process_player, concurrency=1, progress=False))
        assert len(ladder_store.rounds(store, tid)) == 4 and ladder_store.next_round(store, tid) == 4
        before = store.games(tid)
        assert any("ag.v1" in g.names for g in before)  # new entrants first: all 6 play in the first two games
        v2 = ladder_store.submit(store, tid, LadderEntrant("ag.v2", "alice", "ag", 2, address="10.0.0.4:1"))
        assert v2 == LadderEntrant("ag.v2", "alice", "ag", 2, joined_round=4, address="10.0.0.4:1")
        every = {e.name: e for e in ladder_store.entrants(store, tid)}
        assert every["ag.v1"] == replace(v1, left_round=4)
        assert [r for r in range(6) if every["ag.v1"].present(r)] == [0, 1, 2, 3]
        assert [r for r in range(6) if every["ag.v2"].present(r)] == [4, 5]
        # the same bot name by another author, and another bot of the same author, stay
        assert every["ag.v1b"] == bobs and every["ar.v1"] == other
        assert list(every)[-1] == "ag.v2"  # in the order they joined
        # the old version keeps its games, in the store and the standings
        assert store.games(tid) == before
        rows = {r.entrant: r for r in standings_of(store, tid).rows}
        assert rows["ag.v1"].games == sum("ag.v1" in g.names for g in before) and rows["ag.v2"].games == 0


def test_a_withdrawal_seats_no_version_of_the_bot_from_the_next_round(tmp_path: Path) -> None:
    config = ladder_config(tmp_path)
    with open_store(tmp_path / "d") as store:
        open_ladder(store, config, "")
        tid = config.tournament_id
        ladder_store.submit(store, tid, LadderEntrant("ag.v1", "alice", "ag", 1, address="a:1"))
        ladder_store.add_round(store, tid, 0, [])
        ladder_store.submit(store, tid, LadderEntrant("ag.v2", "alice", "ag", 2, address="a:2"))
        ladder_store.submit(store, tid, LadderEntrant("ar.v1", "alice", "ar", 1, address="a:3"))
        ladder_store.add_round(store, tid, 1, [])
        assert ladder_store.withdraw(store, tid, "ag", "bob") is None  # not bob's
        assert ladder_store.withdraw(store, tid, "ag", "alice") == 2
        assert ladder_store.withdraw(store, tid, "ag", "alice") is None  # none is present any more
        left = {e.name: (e.joined_round, e.left_round) for e in ladder_store.entrants(store, tid)}
        assert left["ag.v1"] == (0, 1) and left["ag.v2"] == (1, 2) and left["ar.v1"] == (1, None)
        assert left["rnd"] == (0, None)


def test_standings_show_each_bots_latest_version_unless_every_version_is_asked_for(tmp_path: Path) -> None:
    config = ladder_config(tmp_path)
    with open_store(tmp_path / "d") as store:
        open_ladder(store, config, "")
        tid = config.tournament_id
        for name, owner, bot, version in [("ag.v1", "alice", "ag", 1), ("ag.v3", "alice", "ag", 3),
                                          ("ag.v2", "alice", "ag", 2), ("ag.v1b", "bob", "ag", 1),
                                          ("bx.v1", "alice", "bx", 1)]:  # fmt: skip
            ladder_store.submit(store, tid, LadderEntrant(name, owner, bot, version))
        files = {"rnd", "greedy", "counter", "far", "cmd"}
        assert shown(store, tid, all_versions=False) == files | {"ag.v3", "ag.v1b", "bx.v1"}
        assert shown(store, tid, all_versions=True) is None  # everyone
        assert ladder_store.latest_versions([]) == set()
        # a tie in version keeps the first seen
        twins = [LadderEntrant("x.a", "o", "x", 2), LadderEntrant("x.b", "o", "x", 2)]
        assert ladder_store.latest_versions(twins) == {"x.a"}


def test_present_from_the_round_joined_until_the_round_left() -> None:
    e = LadderEntrant("a", "a", "a", joined_round=3, left_round=5)
    assert [r for r in range(8) if e.present(r)] == [3, 4]
    assert [r for r in range(5) if LadderEntrant("b", "b", "b", joined_round=2).present(r)] == [2, 3, 4]


def test_a_choice_is_stored_once_and_only_at_the_schedules_end(tmp_path: Path) -> None:
    config = ladder_config(tmp_path)
    with open_store(tmp_path / "d") as store:
        opened = open_ladder(store, config, "")
        tid = config.tournament_id
        assert ladder_store.rounds(store, tid) == [] and opened.book.choices == 0
        slots = [_slot(tid, 0, 0, 0, 0, 11, ("rnd", "greedy", "far"))]
        ladder_store.add_round(store, tid, 0, slots)
        twice = f"^choice 0 of ladder {tid} is not its next one: refusing to store it twice$"
        with pytest.raises(StoreError, match=twice):
            ladder_store.add_round(store, tid, 0, slots)
        late = [_slot(tid, 3, 0, 1, 0, 12, ("rnd", "greedy", "far")),
                _slot(tid, 4, 0, 1, 1, 12, ("cmd", "counter", "far"))]  # fmt: skip
        with pytest.raises(StoreError, match=f"^choice 1 of ladder {tid} starts at slot 3, not 1$"):
            ladder_store.add_round(store, tid, 1, late)
        [row] = ladder_store.rounds(store, tid)
        assert (row.round, row.first_slot, row.games) == (0, 0, 1)
