"""Worker processes under the tournament runner (docs/scale.md), end to end: the `abluxx` command as a real
process, its workers as real processes, example bots as real processes over real gRPC, a real SQLite file.

The same tournament (same secret deal key) played inline and on 2 worker processes stores the same games, places,
scores, standings and ratings; a worker killed by SIGKILL mid-game loses only its games in flight, which are
played again from their deal and counted once; a killed coordinator takes its workers and their bots with it,
and a rerun resumes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.records import read_record, verify_record
from referee.store import open_store
from referee.tournament import schedule
from referee.tournament.config import load
from referee.tournament.runner import MAX_REDEALS

from .test_real import (  # noqa: F401 - _no_stray_bots: every bot a test starts is gone when it ends
    ABLUXX,
    FOUR,
    MARK,
    _bot_pids,
    _no_stray_bots,
    abluxx,
    committed,
    comparable,
    schedule_of,
    standings_json,
    write_config,
)

PAIRS = [("r", "random"), ("g", "greedy"), ("c", "counter"), ("g2", "greedy"), ("r2", "random")]
POLICIES = "".join(f'[[entrants]]\nname = "{n}"\npolicy = "{p}"\n' for n, p in PAIRS)
BOTS = FOUR  # four example bots as command entrants
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def games_json(tmp_path: Path, data: Path) -> list[dict]:
    """Every stored game as `abluxx games --json` lists it, less where its record file is (and less void games)."""
    out = abluxx("games", "--json", "--data", data, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    return [{k: v for k, v in row.items() if k != "record"} for row in rows if not row.get("void")]


def same_key(cfg: Path, data: Path, key: bytes, like: Path | None = None) -> None:
    """Store the tournament in ``data`` with ``key``, so a run there deals the decks another run dealt (with the
    schedule stored in ``like``, whose interrupted sets were dealt again, when given)."""
    config = load(cfg)
    with open_store(data) as store:
        if like is None:
            slots = schedule.build(config, key)
        else:
            with open_store(like) as other:
                slots = other.slots(config.tournament_id)
        store.create_tournament(config, slots, str(cfg), key)


def digests(data: Path) -> dict[str, str]:
    """Each stored game's id and final digest, after checking its record is complete and verifies by replay (and
    that every void game's finished record verifies too)."""
    out = {}
    with sqlite3.connect(data / "abluxx.db") as c:
        stored = {r[0] for r in c.execute("SELECT game_id FROM games")}
    for path in sorted((data / "records").glob("*.abluxx")):
        rec = read_record(path)
        assert rec.complete, path
        verify_record(rec)
        if rec.header.game_id in stored:
            out[rec.header.game_id] = rec.footer.final_digest
    return out


def inline_first(tmp_path: Path, cfg: Path, data: Path) -> None:
    """Run ``cfg`` in one process into ``tmp_path/inline``, and store it in ``data`` with the same deal key."""
    inline = abluxx("tournament", "run", cfg, "--data", tmp_path / "inline", "-c", "4", cwd=tmp_path)
    assert inline.returncode == 0, inline.stderr
    key, _ = schedule_of(tmp_path / "inline" / "abluxx.db")
    same_key(cfg, data, key)


def same_as_inline(tmp_path: Path, cfg: Path, data: Path, games: int) -> None:
    """``data`` holds what an uninterrupted run in one process on the same deal key stores."""
    key, _ = schedule_of(data / "abluxx.db")
    same_key(cfg, tmp_path / "inline", key, like=data)
    inline = abluxx("tournament", "run", cfg, "--data", tmp_path / "inline", "-c", "4", cwd=tmp_path)
    assert inline.returncode == 0, inline.stderr
    assert_same_tournament(tmp_path, tmp_path / "inline", data, games)


def assert_same_tournament(tmp_path: Path, a: Path, b: Path, games: int) -> None:
    got_a, got_b = standings_json(tmp_path, a), standings_json(tmp_path, b)
    assert got_a["games"] == got_b["games"] == got_a["scheduled"] == games
    assert comparable(got_a) == comparable(got_b)  # ratings (mu, sigma), scores, places, head to head
    assert games_json(tmp_path, a) == games_json(tmp_path, b)  # every game's seats, places, scores, faults
    assert digests(a) == digests(b) and len(digests(a)) == games


def test_two_worker_processes_store_what_one_process_stores_with_built_in_policies(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, 'name = "pol"\nseed = 5\ntable_size = 3\ndeals = 3\n' + POLICIES)
    inline_first(tmp_path, cfg, tmp_path / "w2")
    w2 = abluxx("tournament", "run", cfg, "--data", tmp_path / "w2", "-c", "8", "--workers", "2", cwd=tmp_path)
    assert w2.returncode == 0, w2.stderr
    assert '"workers": 2' in w2.stderr or "workers=2" in w2.stderr  # the log says the games went to workers
    assert_same_tournament(tmp_path, tmp_path / "inline", tmp_path / "w2", 30)  # 10 tables x 3 deals


def test_each_worker_starts_its_own_command_bots_and_the_results_match_one_process(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, 'name = "cmd"\nseed = 7\ntable_size = 2\ndeals = 2\n' + BOTS)
    inline_first(tmp_path, cfg, tmp_path / "w2")
    # [workers] in the file, as an organiser would write it
    text = cfg.read_text() + "[workers]\ncount = 2\n"
    cfg2 = write_config(tmp_path, text, "workers.toml")
    w2 = abluxx("tournament", "run", cfg2, "--data", tmp_path / "w2", "-c", "4", cwd=tmp_path)
    assert w2.returncode == 0, w2.stderr
    assert_same_tournament(tmp_path, tmp_path / "inline", tmp_path / "w2", 12)
    tid = load(cfg).tournament_id
    for w in ("w0", "w1"):  # each worker started the four bots itself, each logging to its own file
        for name in ("random", "greedy", "counter", "greedy-2"):
            assert (tmp_path / "w2" / "logs" / f"{tid}-{w}-{name}.log").is_file()


def _worker_pids(coordinator: int) -> list[int]:
    """The worker processes the coordinator started (children running referee.fleet.worker)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
                if (
                    int(stat.rsplit(") ", 1)[1].split()[1]) == coordinator
                    and b"referee.fleet.worker" in (d / "cmdline").read_bytes()
                ):
                    found.append(int(d.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _wait_for(check, what: str, within_s: float = 120) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def test_a_worker_killed_mid_game_loses_only_its_games_in_flight(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, 'name = "wk"\nseed = 11\ntable_size = 2\ndeals = 6\n' + BOTS)
    data = tmp_path / "killed"
    proc = subprocess.Popen([*ABLUXX, "tournament", "run", str(cfg), "--data", str(data), "-c", "4", "--workers",
                             "2", "--no-progress", "--log-format", "json"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        _wait_for(lambda: committed(data / "abluxx.db") >= 4 and len(_worker_pids(proc.pid)) == 2, "4 games")
        victim = _worker_pids(proc.pid)[0]
        os.kill(victim, signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    lost = [json.loads(line) for line in err.splitlines() if '"worker lost' in line]
    assert len(lost) == 1 and lost[0]["games_in_flight"] >= 1, err  # it died mid-game, with games in flight
    # its games in flight are void, their sets dealt again with fresh decks (new game ids) on the other workers
    void = [json.loads(line)["game_id"] for line in err.splitlines() if "game lost; its deal is void" in line]
    assert len(void) == lost[0]["games_in_flight"]
    with sqlite3.connect(data / "abluxx.db") as c:
        ids = [r[0] for r in c.execute("SELECT game_id FROM games")]
        results = c.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        voided = {r[0] for r in c.execute("SELECT game_id FROM void_games WHERE finished = 0")}
    assert len(ids) == len(set(ids)) == 36 and results == 72  # none lost, none twice
    assert set(void) == voided and not voided & set(ids)
    assert all(f"{g}-a1" in ids for g in void)  # dealt again, once
    same_as_inline(tmp_path, cfg, data, 36)


def _slow_thinker(name: str) -> str:
    """A command entrant that takes 2 s to start (a shell sleeps, then runs the bot: a worker starting it is alive,
    and not yet ready, for at least that long), and 20 ms over every decision (tests/fixtures/bad_bots.py, mode
    slow): a run of its games lasts seconds whatever the machine's load, so a worker killed after the first games
    is killed mid-run. (With the instant example bot the 24 games took about 2 s after the bot started; a worker
    killed once they had all ended would never be replaced, which is one reading of a failure under load.)"""
    argv = [sys.executable, str(FIXTURES / "bad_bots.py"), "--mode", "slow", "--delay-ms", "20", "--port", "0",
            "--tag", MARK]  # fmt: skip
    command = ["sh", "-c", 'sleep 2; exec "$0" "$@"', *argv]
    return f'[[entrants]]\nname = "{name}"\ncommand = {json.dumps(command)}\n'


def test_a_worker_that_dies_while_its_replacement_starts_is_started_again(tmp_path: Path) -> None:
    """Issue 20 item 7: the one worker is killed mid-game, then its replacement is killed while it starts (it is
    waiting for its slow bot). The pool starts it again, and the run plays every game once, exit 0."""
    cfg = write_config(tmp_path, 'name = "rs"\nseed = 17\ntable_size = 2\ndeals = 12\n'
                       + _slow_thinker("slow") + '[[entrants]]\nname = "r"\npolicy = "random"\n')  # fmt: skip
    data = tmp_path / "d"
    proc = subprocess.Popen([*ABLUXX, "tournament", "run", str(cfg), "--data", str(data), "-c", "2", "--workers",
                             "1", "--no-progress", "--log-format", "json"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        _wait_for(lambda: committed(data / "abluxx.db") >= 2 and len(_worker_pids(proc.pid)) == 1, "2 games")
        first = _worker_pids(proc.pid)[0]
        assert committed(data / "abluxx.db") < 24, "the run ended before its worker could be killed mid-run"
        os.kill(first, signal.SIGKILL)
        # its replacement: killed as soon as it is seen, seconds before its slow bot lets it be ready
        try:
            _wait_for(lambda: [p for p in _worker_pids(proc.pid) if p != first], "the replacement worker")
        except AssertionError as e:  # say what the coordinator was doing: its exit, the games, its log
            running = proc.poll() is None
            proc.kill()
            _, err = proc.communicate(timeout=60)
            games = committed(data / "abluxx.db")
            raise AssertionError(f"{e}; coordinator {'running' if running else f'exited {proc.returncode}'}, "
                                 f"{games} games committed; its log:\n{err[-4000:]}") from None  # fmt: skip
        second = next(p for p in _worker_pids(proc.pid) if p != first)
        os.kill(second, signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    restarted = [json.loads(line) for line in err.splitlines() if "worker died while starting" in line]
    assert len(restarted) == 1 and restarted[0]["attempt"] == 1, err
    with sqlite3.connect(data / "abluxx.db") as c:
        ids = [r[0] for r in c.execute("SELECT game_id FROM games")]
    assert len(ids) == len(set(ids)) == 24  # every game, none twice


def test_a_killed_coordinator_takes_its_workers_and_bots_with_it_and_a_rerun_resumes(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, 'name = "ck"\nseed = 13\ntable_size = 2\ndeals = 6\n' + BOTS)
    data = tmp_path / "killed"
    proc = subprocess.Popen([*ABLUXX, "tournament", "run", str(cfg), "--data", str(data), "-c", "4", "--workers",
                             "2"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        _wait_for(lambda: committed(data / "abluxx.db") >= 6, "6 games")
        workers = _worker_pids(proc.pid)
        assert len(workers) == 2
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    at_kill = committed(data / "abluxx.db")
    assert 6 <= at_kill < 36
    _wait_for(lambda: not any(Path(f"/proc/{p}").exists() and _alive(p) for p in workers), "workers to die", 10)
    _wait_for(lambda: not _bot_pids(), "the workers' bots to die", 15)
    again = abluxx("tournament", "resume", load(cfg).tournament_id, "--data", data, "--workers", "2", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    with sqlite3.connect(data / "abluxx.db") as c:
        ids = [r[0] for r in c.execute("SELECT game_id FROM games")]
        pending = c.execute("SELECT COUNT(*) FROM schedule WHERE done = 0").fetchone()[0]
    assert len(ids) == len(set(ids)) == 36 and pending == 0
    same_as_inline(tmp_path, cfg, data, 36)


def test_a_worker_that_cannot_start_an_entrant_says_so_once_and_nothing_runs(tmp_path: Path) -> None:
    broken = '[[entrants]]\nname = "broken"\ncommand = ["false"]\n'
    cfg = write_config(tmp_path, 'name = "br"\ntable_size = 2\n' + broken + POLICIES)
    out = abluxx("tournament", "run", cfg, "--data", tmp_path / "d", "--workers", "2", cwd=tmp_path)
    assert out.returncode == 1
    assert out.stderr.count("exited with code 1 before printing") == 1, out.stderr
    assert "did not start" in out.stderr
    with sqlite3.connect(tmp_path / "d" / "abluxx.db") as c:
        assert c.execute("SELECT COUNT(*) FROM tournaments").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--workers", "0"], "--workers must be 1 to 256, got 0"),
        (["--workers", "-3"], "--workers must be 1 to 256, got -3"),
        (["--backend", "processes", "--ray-address", "1.2.3.4:5"], "--ray-address is for --backend ray, not processes"),
    ],
)
def test_bad_worker_flags_exit_2_naming_the_flag(tmp_path: Path, args: list[str], says: str) -> None:
    cfg = write_config(tmp_path, POLICIES)
    out = abluxx("tournament", "run", cfg, "--data", tmp_path / "d", *args, cwd=tmp_path)
    assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_without_ray_the_ray_backend_says_how_to_install_it(tmp_path: Path) -> None:
    # a `ray` package that cannot be imported stands in for a machine without Ray
    (tmp_path / "noray" / "ray").mkdir(parents=True)
    (tmp_path / "noray" / "ray" / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    cfg = write_config(tmp_path, POLICIES)
    for args in (["--backend", "ray"], ["tournament-serve"]):
        cmd = (["serve", "--port", "0", "--backend", "ray"] if args == ["tournament-serve"]
               else ["tournament", "run", str(cfg), "--data", str(tmp_path / "d"), *args])  # fmt: skip
        env = {**os.environ, "PYTHONPATH": f"{tmp_path / 'noray'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        out = subprocess.run([*ABLUXX, *cmd], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
        assert out.returncode == 2, out.stderr
        assert 'pip install -e ".[ray]"' in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_an_unreachable_ray_address_exits_2(tmp_path: Path) -> None:
    if os.environ.get("CI") != "true":
        pytest.importorskip("ray")
    cfg = write_config(tmp_path, POLICIES)
    out = abluxx("tournament", "run", cfg, "--data", tmp_path / "d", "--ray-address", "127.0.0.1:1", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert "cannot reach the Ray cluster at 127.0.0.1:1" in out.stderr and "Traceback" not in out.stderr


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def test_games_whose_worker_dies_every_time_are_dealt_again_in_one_plus_max_redeals_rounds(tmp_path: Path) -> None:
    # issue 22 item 7: each lost game voids its set, dealt again in the next round (on a fresh worker); after
    # 1 + MAX_REDEALS rounds that lose games the run stops
    kills = tmp_path / "kills.txt"
    killer = [sys.executable, str(FIXTURES / "worker_killer.py"), "--log", str(kills), "--port", "0"]
    entrants = f'[[entrants]]\nname = "killer"\ncommand = {json.dumps(killer)}\n' + POLICIES
    cfg = write_config(tmp_path, 'name = "kill"\nseed = 5\ntable_size = 2\ndeals = 1\n' + entrants)
    out = abluxx("tournament", "run", cfg, "--data", tmp_path / "d", "-c", "1", "--workers", "1", "--no-progress",
                 cwd=tmp_path)  # fmt: skip
    assert out.returncode == 1, out.stderr  # a TournamentError: the run stops (a rerun resumes it)
    pids = kills.read_text().split()
    assert len(pids) == len(set(pids)) >= 1 + MAX_REDEALS, pids  # a fresh worker each time
    assert f"lost their worker in {1 + MAX_REDEALS} rounds; the run stopped" in out.stderr, out.stderr
