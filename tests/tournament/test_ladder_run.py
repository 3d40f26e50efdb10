"""Running a ladder: every stored choice recomputed from the store at any concurrency, inline or on worker
processes, no deck to an entrant or owner twice, and a SIGKILL mid-ladder then a resume that loses and doubles
nothing (real `abluxx` processes where it says so)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from referee.cli import main
from referee.match import GameResult, GameSpec
from referee.store import open_store
from referee.tournament.config import TournamentConfig, load
from referee.tournament.ladder_run import replay, run_ladder

from .helpers import config_text, in_process_player

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
NAMES = ["rnd", "greedy", "counter", "greedy2", "rnd2", "c2", "c3"]


def write(tmp_path: Path, games: int, **top: object) -> Path:
    path = tmp_path / "ladder.toml"
    text = config_text(NAMES, name="lad", seed=4, table_size=3, public_deals=True, **top)
    path.write_text(text + f"[ladder]\ngames = {games}\n")
    return path


def stored(data: Path) -> list[tuple]:
    """Every scheduled game with its deck and seats, and its places when played, in schedule order."""
    db = sqlite3.connect(data / "abluxx.db")
    try:
        rows = db.execute(
            "SELECT s.slot, s.game_id, s.deck_seed, s.seats, (SELECT group_concat(r.place) FROM results r"
            " WHERE r.game_id = s.game_id) FROM schedule s ORDER BY s.slot"
        ).fetchall()
    finally:
        db.close()
    return rows


def run_inprocess(tmp_path: Path, data: str, concurrency: int, jitter: int | None) -> Path:
    config = load(write(tmp_path, 40))
    player = functools.partial(in_process_player, jitter_seed=jitter)
    with open_store(tmp_path / data) as store:
        out = asyncio.run(run_ladder(config, store, player, concurrency=concurrency, progress=False))
        assert out.standings.games == 40
    return tmp_path / data


def assert_history_checks_out(data: Path, config: TournamentConfig) -> int:
    """Every stored choice recomputes to the same tables from the store alone; no entrant or owner got one deck
    twice. Returns how many choices were recomputed."""
    with open_store(data) as store:
        again = replay(store, config)
        slots = store.slots(config.tournament_id)
    assert again and all(stored_tables == recomputed for _, stored_tables, recomputed in again)
    decks: dict[int, set[str]] = {}
    for s in slots:
        held = decks.setdefault(s.deck_seed, set())
        assert held.isdisjoint(s.seats), f"{s.game_id}: an entrant holds deck {s.deck_seed} twice"
        held.update(s.seats)
    return len(again)


def test_every_choice_recomputes_from_the_store_at_concurrency_1_and_8(tmp_path: Path) -> None:
    config = load(write(tmp_path, 40))
    one = run_inprocess(tmp_path, "d1", 1, None)
    eight = run_inprocess(tmp_path, "d8", 8, 1)  # games finish out of order at 8
    assert len(stored(one)) == 40 and len(stored(eight)) == 40
    assert assert_history_checks_out(one, config) >= 40 // 2
    assert assert_history_checks_out(eight, config) >= 40 // 2 // 2
    # at concurrency 8, two tables of 3 among 7 entrants play at once: tables share deals across the ladder
    with open_store(eight) as store:
        seeds = [s.deck_seed for s in store.slots(config.tournament_id)]
    assert len(set(seeds)) < len(seeds)


def test_results_altered_in_the_store_no_longer_check_out(tmp_path: Path) -> None:
    """The check can fail: with every logged result's places turned upside down, the ratings the choices were made
    from are not those the store now gives, and some choice recomputes to other tables."""
    config = load(write(tmp_path, 40))
    data = run_inprocess(tmp_path, "d", 4, 2)
    db = sqlite3.connect(data / "abluxx.db")
    try:
        for seq, places in db.execute("SELECT seq, places FROM ladder_results").fetchall():
            flipped = [4 - p for p in json.loads(places)]
            db.execute("UPDATE ladder_results SET places = ? WHERE seq = ?", (json.dumps(flipped), seq))
        db.commit()
    finally:
        db.close()
    with open_store(data) as store:
        again = replay(store, config)
    assert any(stored_tables != recomputed for _, stored_tables, recomputed in again)


def abluxx(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*ABLUXX, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_a_ladder_on_two_worker_processes_plays_its_budget_and_checks_out(tmp_path: Path) -> None:
    config = write(tmp_path, 24)
    workers = abluxx("tournament", "run", config, "--data", tmp_path / "w2", "--workers", "2", "--no-progress",
                     cwd=tmp_path)  # fmt: skip
    assert workers.returncode == 0, workers.stderr
    assert len(stored(tmp_path / "w2")) == 24 and all(row[4] is not None for row in stored(tmp_path / "w2"))
    assert_history_checks_out(tmp_path / "w2", load(config))


def committed(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        c = sqlite3.connect(db, timeout=5)
        try:
            return c.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            c.close()
    except sqlite3.OperationalError:
        return 0


def test_a_ladder_killed_mid_game_resumes_and_plays_every_stored_choice_as_chosen(tmp_path: Path) -> None:
    games = 150
    config = write(tmp_path, games, concurrency=4)
    data = tmp_path / "killed"
    cmd = [*ABLUXX, "tournament", "run", str(config), "--data", str(data), "--no-progress"]
    referee = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while committed(data / "abluxx.db") < 20 and referee.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert referee.poll() is None, "the ladder ended before the test could kill it"
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait()
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
    before = stored(data)
    assert any(row[4] is None for row in before), "the kill left no game unfinished"
    again = abluxx("tournament", "run", config, "--data", data, "--no-progress", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    after = stored(data)
    assert len(after) == games and all(row[4] is not None for row in after)  # nothing lost, nothing doubled
    # every stored round played as chosen: the same tables at the same slots (a game in flight at the kill may be
    # dealt again, so its deck and result are not compared)
    assert [(row[0], row[3]) for row in after[: len(before)]] == [(row[0], row[3]) for row in before]
    db = sqlite3.connect(data / "abluxx.db")
    try:
        rounds = db.execute("SELECT round, first_slot, games FROM ladder_rounds ORDER BY round").fetchall()
        void = dict(db.execute("SELECT game_id, finished FROM void_games").fetchall())
    finally:
        db.close()
    # the games played before the kill kept their results, but for those whose duplicate set a game in flight at
    # the kill made void (docs/tournaments.md): each of those is kept among the void games, finished, and its
    # slot was dealt again under a new game id
    played = [row for row in before if row[4] is not None]
    assert [row for row in played if row[1] not in void] == [after[row[0]] for row in played if row[1] not in void]
    assert all(void[row[1]] and after[row[0]][1] != row[1] for row in played if row[1] in void)
    assert len([row for row in played if row[1] not in void]) >= 10
    assert [r[0] for r in rounds] == list(range(len(rounds)))  # no choice made twice, none skipped
    assert sum(r[2] for r in rounds) == games and all(a[1] + a[2] == b[1] for a, b in itertools.pairwise(rounds))
    assert_history_checks_out(data, load(config))


def test_a_ladder_stopped_in_process_resumes_with_its_choices_as_made(tmp_path: Path) -> None:
    """The resume path (the stored choices and results read back, Book.load) in this process, where the SIGKILL
    test above runs it in a child: a ladder stopped with four games in flight, run again on the same store, keeps
    its choices as they were made and the games played, deals the in-flight games' duplicate sets again, plays the
    budget to its end, and every choice, before and after the stop, recomputes from the store."""
    config = load(write(tmp_path, 40))
    data = tmp_path / "cut"
    started: list[str] = []

    @contextlib.asynccontextmanager
    async def stalling_player(records: Path) -> AsyncIterator:
        async with in_process_player(records) as play:

            async def gated(spec: GameSpec) -> GameResult:
                started.append(spec.game_id)
                if len(started) > 12:
                    await asyncio.Event().wait()  # the games after the twelfth never finish
                return await play(spec)

            yield gated

    async def cut() -> None:
        with open_store(data) as store:
            task = asyncio.create_task(run_ladder(config, store, stalling_player, concurrency=4, progress=False))
            deadline = time.monotonic() + 300
            while len(started) < 14 and not task.done() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)  # room for a third game, if one could start (none can: its entrants are busy)
            assert not task.done() and len(started) == 14  # twelve played, two in flight
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(cut())
    partial = stored(data)
    assert sum(row[4] is not None for row in partial) == 12 and len(partial) > 12
    with open_store(data) as store:
        out = asyncio.run(run_ladder(config, store, in_process_player, concurrency=4, progress=False))
        assert out.standings.games == 40
    after = stored(data)
    assert len(after) == 40 and all(row[4] is not None for row in after)  # nothing lost, nothing doubled
    assert [(row[0], row[3]) for row in after[: len(partial)]] == [(row[0], row[3]) for row in partial]
    db = sqlite3.connect(data / "abluxx.db")
    try:
        void = {row[0] for row in db.execute("SELECT game_id FROM void_games")}
    finally:
        db.close()
    assert void  # the duplicate sets of the games in flight were dealt again
    played = [row for row in partial if row[4] is not None and row[1] not in void]
    assert played and played == [after[row[0]] for row in played]  # the games played before the stop are kept
    assert_history_checks_out(data, config)


def test_the_cli_runs_a_ladder_in_this_process_prints_its_standings_and_a_second_run_adds_nothing(
    tmp_path: Path, capsys
) -> None:
    """`abluxx tournament run` on a ladder, in the test's process (so that mutation testing sees run_ladder as a
    user runs it: the command's player, its progress lines and the standings at the end)."""
    config = write(tmp_path, 12)
    data = tmp_path / "cli"
    assert main(["tournament", "run", str(config), "--data", str(data), "--no-progress"]) == 0
    out = capsys.readouterr().out
    first = stored(data)
    assert len(first) == 12 and all(row[4] is not None for row in first)
    assert all(name in out for name in NAMES)  # the standings name every entrant
    assert main(["tournament", "run", str(config), "--data", str(data), "--no-progress"]) == 0
    assert stored(data) == first  # the budget is spent: nothing is played twice
