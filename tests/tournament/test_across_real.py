"""Never the same deal twice (issue 10), end to end: `abluxx tournament run` as a real process, the example bots and
a spy bot (tests/fixtures/deck_spy.py) as real processes over real gRPC, and the records the referee wrote."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from referee.records import read_record

from .test_real import FOUR, abluxx, standings_json, write_config

SPY = Path(__file__).resolve().parents[1] / "fixtures" / "deck_spy.py"


def spy(name: str, log: Path, owner: str | None = None) -> str:
    argv = [sys.executable, str(SPY), "--log", str(log), "--port", "0"]
    text = f"[[entrants]]\nname = {json.dumps(name)}\ncommand = {json.dumps(argv)}\n"
    return text + (f"owner = {json.dumps(owner)}\n" if owner else "")


def spied(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def deck_of(data: Path, game_id: str) -> tuple[int, ...]:
    return tuple(read_record(data / "records" / f"{game_id}.abluxx").header.deck)


def run(tmp_path: Path, name: str, text: str) -> Path:
    data = tmp_path / name
    out = abluxx("tournament", "run", write_config(tmp_path, text, f"{name}.toml"), "--data", data, "-c", "4",
                 cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    s = standings_json(tmp_path, data)
    assert s["games"] == s["scheduled"]
    return data


def test_across_tables_an_owner_with_two_spies_never_receives_a_deck_twice(tmp_path: Path) -> None:
    # mallory enters two spies beside the four example bots: 6 entrants at 2 players, every deal at several tables
    log = tmp_path / "mallory.jsonl"
    field = spy("spy-a", log, "mallory") + spy("spy-b", log, "mallory") + FOUR
    data = run(tmp_path, "across", 'name = "across"\nseed = 3\ntable_size = 2\ndeals = 3\n' + field)
    seen = spied(log)
    assert len(seen) == 2 * 4 * 3  # each spy: 4 tables (never the other spy's) x 3 deals
    games = {x["game_id"] for x in seen}
    assert len(games) == len(seen), "mallory's spies sat at one table, where she sees both hands"
    decks = Counter(deck_of(data, g) for g in games)
    assert max(decks.values()) == 1, "mallory received one deck in two games"
    # nothing a spy was told at the end of a game is the deck of another game mallory played
    for x in seen:
        assert tuple(x["told_deck"]) not in {deck_of(data, g) for g in games - {x["game_id"]}}
    # the deals are compared across tables as far as owners allow: of mallory's 8 tables a deal, each needs one of
    # the 6 tables without her for a partner, so 6 of them share their deal each time
    every = Counter(
        deck_of(data, g["game_id"])
        for g in map(json.loads, abluxx("games", "--json", "--data", data, cwd=tmp_path).stdout.splitlines())
    )
    assert len(decks) == 8 * 3 and sum(every[deck] >= 2 for deck in decks) == 6 * 3

    # the same field with seat rotations: mallory's spies hold one deck again and again (why it is not the default)
    log.unlink()
    data = run(tmp_path, "rotations", 'name = "rot"\nseed = 3\ntable_size = 2\ndeals = 3\nseat_orders = "rotations"\n'
               + field)  # fmt: skip
    again = Counter(deck_of(data, g) for g in {x["game_id"] for x in spied(log)})
    assert max(again.values()) >= 2


def test_fresh_process_restarts_a_command_bot_for_every_game_of_a_deal(tmp_path: Path) -> None:
    log = tmp_path / "spy.jsonl"
    head_to_head = 'seed = 2\ntable_size = 2\ndeals = 2\nseat_orders = "rotations"\n' + spy("spy", log)
    head_to_head += FOUR.split('[[entrants]]\nname = "greedy"')[0]  # the spy against the random bot
    run(tmp_path, "kept", 'name = "kept"\n' + head_to_head)
    assert len({x["pid"] for x in spied(log)}) == 1  # one process plays all 4 games: it could remember the deal

    log.unlink()
    run(tmp_path, "fresh", 'name = "fresh"\nfresh_process = true\n' + head_to_head)
    seen = spied(log)
    assert len(seen) == 4 and len({x["pid"] for x in seen}) == 4  # a new process for every game
