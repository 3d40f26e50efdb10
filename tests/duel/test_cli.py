"""`abluxx duel` as a user runs it: real `abluxx` processes, real bot processes over real gRPC, a real SQLite file."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.cli import main
from tests.bots.driver import ServedBot

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
BOT = " ".join([sys.executable, "-c", "'import sys; from referee.cli import main; sys.exit(main())'", "bot"])


def abluxx(*args: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*ABLUXX, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def bots() -> Iterator[dict[str, str]]:
    """An address for each example bot, each served by its own `abluxx bot` process, and a second random bot."""
    served = {name: ServedBot.example(name).wait_ready() for name in ("random", "greedy", "counter")}
    served["random2"] = ServedBot.example("random", seed=8).wait_ready()  # another seed: it plays other moves
    yield {name: b.address for name, b in served.items()}
    for b in served.values():
        b.stop()


def pairs(data: Path) -> list[tuple]:
    if not (data / "duels.db").exists():
        return []
    with sqlite3.connect(data / "duels.db") as db:
        try:
            return db.execute("SELECT duel_id, pair, diff, games FROM pairs ORDER BY duel_id, pair").fetchall()
        except sqlite3.OperationalError:  # the duel process is still creating the tables
            return []


def test_counter_against_random_over_grpc_ends_h1_with_exit_0_and_the_json_keys(
    tmp_path: Path, bots: dict[str, str]
) -> None:
    out = abluxx("duel", f"cand={bots['counter']}", f"base={bots['random']}", "--json", "--data", "d", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert {"verdict", "games", "pairs", "mean_diff", "ci95", "llr", "bounds"} <= result.keys()
    assert result["verdict"] == "H1" and result["games"] == 2 * result["pairs"] >= 20
    assert result["llr"] >= result["bounds"][1] and result["ci95"][0] > 0
    stored = pairs(tmp_path / "d")
    assert len(stored) >= result["pairs"]
    for _, _, diff, games in stored:  # every game's record is on disk and the pair's difference is its scores'
        first, second = json.loads(games)
        assert Path(tmp_path / first["record"]).is_file() and Path(tmp_path / second["record"]).is_file()
        assert first["game_id"] == second["game_id"]  # one deal, one id: bots seeded by it play alike
        c, b = first["roles"].index("candidate"), first["roles"].index("baseline")
        assert diff == ((first["scores"][c] - second["scores"][c]) + (second["scores"][b] - first["scores"][b])) / 2
    replay = abluxx("verify", first["record"], "--data", "d", cwd=tmp_path)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    # issue 22 item 9: the place difference is the baseline's place minus the candidate's (positive: the candidate
    # placed better), pair by pair and on average; counter places better than random
    with sqlite3.connect(tmp_path / "d" / "duels.db") as db:
        rows = db.execute("SELECT games, place_diff FROM pairs ORDER BY pair").fetchall()
    for games, place_diff in rows:
        first, second = json.loads(games)
        c, b = first["roles"].index("candidate"), first["roles"].index("baseline")
        cand, base = second["places"][c] - first["places"][c], first["places"][b] - second["places"][b]
        assert place_diff == (cand + base) / 2
    counted = [d for _, d in rows[: result["pairs"]]]
    assert result["place_diff"] == pytest.approx(sum(counted) / len(counted)) and result["place_diff"] > 0


def test_a_weaker_candidate_ends_h0_with_exit_1(tmp_path: Path, bots: dict[str, str]) -> None:
    out = abluxx("duel", bots["random"], bots["greedy"], "--data", "d", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert "verdict: H0 (not better by 1)" in out.stdout


def test_the_budget_spent_is_inconclusive_with_exit_3(tmp_path: Path) -> None:
    out = abluxx("duel", "random", "random", "--max-games", "8", "--data", "d", cwd=tmp_path)
    assert out.returncode == 3, out.stderr
    assert "inconclusive after 8 games" in out.stdout
    assert "this is an A/A test" in out.stderr


def test_three_players_pair_the_same_seat_and_field(tmp_path: Path, bots: dict[str, str]) -> None:
    out = abluxx("duel", "counter", "random", "--table-size", "3", "--field", bots["greedy"], "greedy", "--json",
                 "--max-games", "200", "--data", "d", cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    for _, pair, diff, games in pairs(tmp_path / "d"):
        first, second = json.loads(games)
        seat = pair % 3  # the candidate's seat rotates over the pairs, the baseline takes it in the second game
        assert first["roles"][seat] == "candidate" and second["roles"][seat] == "baseline"
        assert (
            [r for r in first["roles"] if r.startswith("field")]
            == ["field0", "field1"]
            == [r for r in second["roles"] if r.startswith("field")]
        )
        # the default measure at 3 players: the score relative to the table (docs/duel.md, "What is measured")
        rel = [g["scores"][seat] - (sum(g["scores"]) - g["scores"][seat]) / 2 for g in (first, second)]
        assert diff == pytest.approx(rel[0] - rel[1])


def test_command_bots_start_afresh_for_every_game(tmp_path: Path) -> None:
    out = abluxx("duel", f"new={BOT} counter --port 0", f"old={BOT} greedy --port 0", "--max-games", "2",
                 "--data", "d", cwd=tmp_path)  # fmt: skip
    assert out.returncode == 3, out.stderr  # 1 pair: too few for a verdict
    logs = {p.name.split("-", 3)[-1]: p.read_text() for p in (tmp_path / "d" / "logs").iterdir()}
    # each start of a bot prints one 'listening on' line: the check before the first game (Hello), then both games
    # of the pair, one start each
    assert [logs[n].count("listening on") for n in ("new.log", "old.log")] == [3, 3], logs


def test_a_command_bot_given_no_name_is_named_by_its_hello(tmp_path: Path) -> None:
    """It was named after its whole command line (tmp_nc_gopath_src_gobot_gobot_--port_0)."""
    out = abluxx("duel", f"{BOT} counter --port 0", f"{BOT} greedy --port 0", "--max-games", "2", "--json",
                 "--data", "d", cwd=tmp_path)  # fmt: skip
    assert out.returncode == 3, out.stderr
    played = {p.name.split("-", 3)[-1] for p in (tmp_path / "d" / "logs").iterdir() if not p.name.startswith("hello")}
    assert played == {"counter.log", "greedy.log"}, played  # each game's bot, started under its Hello name
    with sqlite3.connect(tmp_path / "d" / "duels.db") as db:
        (settings,) = db.execute("SELECT settings FROM duels").fetchone()
    assert '"name": "counter"' in settings and '"name": "greedy"' in settings, settings


def test_a_bot_at_an_address_is_named_by_its_hello_as_match_names_it(tmp_path: Path, bots: dict[str, str]) -> None:
    """It was shown and recorded as its address, where `abluxx match` shows its Hello name. Two bots that give one
    name are told apart by their order (#i)."""
    out = abluxx("duel", bots["random"], bots["random2"], "--max-games", "2", "--data", "d", cwd=tmp_path)
    assert out.returncode == 3, out.stderr
    assert "random#0 (candidate) vs random#1 (baseline)" in out.stdout, out.stdout
    assert bots["random"] not in out.stdout
    with sqlite3.connect(tmp_path / "d" / "duels.db") as db:
        (settings,) = db.execute("SELECT settings FROM duels").fetchone()
    assert '"name": "random#0"' in settings and '"name": "random#1"' in settings, settings
    assert f'"address": "{bots["random"]}"' in settings


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--alpha", "0"], "--alpha must be between 0 and 0.5"),
        (["--alpha", "0.5"], "--alpha must be between 0 and 0.5"),
        (["--beta", "0.7"], "--beta must be between 0 and 0.5"),
        (["--margin", "0"], "--margin must be above 0"),
        (["--margin", "-1"], "--margin must be above 0"),
        (["--margin", "nan"], "--margin must be above 0"),
        (
            ["--measure", "place", "--margin", "1"],
            "--margin must be above 0 and below 1 places a game for --measure place at --table-size 2",
        ),
        (["--measure", "place", "--table-size", "4", "--margin", "3"], "below 3 places a game"),
        (["--margin", "218"], "below 218 points a game for --measure score"),
        (["--table-size", "6"], "--table-size must be 2 to 5, got 6"),
        (["--table-size", "1"], "--table-size must be 2 to 5, got 1"),
        (["--table-size", "4", "--field", "greedy"], "--table-size 4 needs a --field of 3 bot(s)"),
        (["--field", "greedy"], "--table-size 2 needs a --field of 0 bot(s)"),
        (["--max-games", "1"], "--max-games must be at least 2"),
        (["--concurrency", "0"], "--concurrency must be 1 to 1024"),
    ],
)
def test_bad_input_exits_2_with_a_message(
    tmp_path: Path, args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["duel", "counter", "greedy", *args, "--data", str(tmp_path / "d")]) == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "d").exists()  # nothing was played or stored


@pytest.mark.parametrize(
    ("bots_args", "says"),
    [
        (["counter", "nosuch"], "baseline: 'nosuch' is neither HOST:PORT nor a built-in policy"),
        (["localhost:99999", "greedy"], 'candidate: bad address "localhost:99999": port must be 1 to 65535'),
        (["counter"], "give CANDIDATE and BASELINE, or --resume ID"),
        (["counter", "greedy", "--resume", "duel-x"], "give no CANDIDATE or BASELINE with it"),
    ],
)
def test_bad_bots_exit_2(tmp_path: Path, bots_args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["duel", *bots_args, "--data", str(tmp_path / "d")]) == 2
    assert says in capsys.readouterr().err


def test_bad_input_in_the_real_command_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    out = abluxx("duel", "counter", "greedy", "--alpha", "0.7", cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr == "abluxx duel: --alpha must be between 0 and 0.5 (both excluded), got 0.7\n"


def test_resuming_an_unknown_duel_names_it(tmp_path: Path) -> None:
    abluxx("duel", "random", "greedy", "--max-games", "2", "--data", "d", cwd=tmp_path)
    out = abluxx("duel", "--resume", "duel-nope", "--data", "d", cwd=tmp_path)
    assert out.returncode == 1 and "no duel 'duel-nope'" in out.stderr


def test_ctrl_c_stores_the_duel_and_resume_loses_no_game(tmp_path: Path, bots: dict[str, str]) -> None:
    """An A/A duel with a margin too small to decide soon: SIGINT once some pairs are stored; the state is printed,
    the duel is stored unfinished, and the resume (with a small new budget) keeps every stored pair and plays on."""
    data = tmp_path / "d"
    proc = subprocess.Popen([*ABLUXX, "duel", bots["random"], bots["random2"], "--margin", "0.01", "--data", str(data)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and len(pairs(data)) < 3:
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    os.kill(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted:" in stderr and "pairs  diff" in stderr and "abluxx duel --resume duel-" in stderr
    duel_id = stderr.split("abluxx duel --resume ")[1].split()[0]
    before = pairs(data)
    with sqlite3.connect(data / "duels.db") as db:
        assert db.execute("SELECT finished_at FROM duels WHERE id = ?", (duel_id,)).fetchone() == (None,)
    budget = 2 * (len(before) + 5)
    out = abluxx("duel", "--resume", duel_id, "--max-games", str(budget), "--json", "--data", data, cwd=tmp_path)
    assert out.returncode == 3, out.stderr  # the new budget spent: inconclusive
    result = json.loads(out.stdout)
    after = pairs(data)
    assert set(before) <= set(after)  # no stored pair was lost or played again
    assert [p[1] for p in after] == list(range(len(after))) and result["pairs"] == len(after) == budget // 2
    assert result["duel_id"] == duel_id and result["games"] == budget


@pytest.mark.parametrize("command", ["duel", "gauntlet"])
def test_resuming_with_a_mistyped_data_folder_creates_nothing(tmp_path: Path, command: str) -> None:
    out = abluxx(command, "--resume", "nosuch", cwd=tmp_path)
    assert out.returncode == 1 and "no duel or gauntlet 'nosuch'" in out.stderr, out.stderr
    assert list(tmp_path.iterdir()) == []  # no ./abluxx-data, no duels.db
