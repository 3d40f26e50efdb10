"""A deal seen is a deal spent (issue 20 item 2): a game interrupted mid-play (the referee SIGKILLed, a worker
SIGKILLed) is void, and its duplicate set is dealt again with a fresh deck, so no bot is ever shown a hand and
market it has already seen in that tournament. A spy bot, a real process that outlives the referee, writes down
the first hand and market of each game it sits in."""

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

from .test_real import ABLUXX, abluxx, committed, write_config
from .test_workers import _worker_pids

SPY = Path(__file__).resolve().parents[1] / "fixtures" / "spy_bot.py"


def _spy(log: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(SPY), "--log", str(log), "--port", "0", "--delay-ms", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("listening on "), line
    return proc, line.split()[-1]


def _lines(log: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in log.read_text().splitlines() if line.endswith("}")]
    except FileNotFoundError:
        return []


def _mid_game(log: Path) -> bool:
    """The spy holds cards in a game that is not over."""
    lines = _lines(log)
    over = {(x["game"], x["seat"]) for x in lines if x["what"] == "over"}
    return any(x["what"] == "hand" and (x["game"], x["seat"]) not in over for x in lines)


def _first_sights(log: Path) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The hand and market the spy was first shown in each game it sat down to (a game played again counts again)."""
    waiting: set[tuple[str, int]] = set()
    sights = []
    for x in _lines(log):
        at = (x["game"], x["seat"])
        if x["what"] == "start":
            waiting.add(at)
        elif x["what"] == "hand" and at in waiting:
            waiting.discard(at)
            sights.append((tuple(x["hand"]), tuple(x["market"])))
    return sights


def _wait(check, what: str, within_s: float = 180) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


@pytest.mark.parametrize("where", ["inline", "workers"])
def test_after_a_kill_mid_game_no_bot_is_shown_a_hand_and_market_it_has_seen(tmp_path: Path, where: str) -> None:
    log = tmp_path / "spy.jsonl"
    spy, address = _spy(log)
    text = ('name = "void"\nseed = 3\ntable_size = 3\ndeals = 4\nseat_orders = "rotations"\n'
            f'[[entrants]]\nname = "spy"\naddress = "{address}"\n'
            '[[entrants]]\nname = "g"\npolicy = "greedy"\n[[entrants]]\nname = "r"\npolicy = "random"\n')  # fmt: skip
    cfg = write_config(tmp_path, text)
    data = tmp_path / "data"
    extra = ["--workers", "2"] if where == "workers" else []
    err = ""
    run = [*ABLUXX, "tournament", "run", str(cfg), "--data", str(data), "-c", "2", "--no-progress", *extra]
    try:
        proc = subprocess.Popen(run, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            # a whole game of a set is stored, and the spy holds cards in a game in flight: kill
            _wait(lambda: committed(data / "abluxx.db") >= 1 and _mid_game(log), "a game in flight after one stored")
            if where == "inline":
                proc.send_signal(signal.SIGKILL)  # the referee itself
                proc.wait(60)
                again = abluxx("tournament", "run", cfg, "--data", data, "-c", "2", "--no-progress", cwd=tmp_path)
                assert again.returncode == 0, again.stderr
            else:
                pids = _worker_pids(proc.pid)
                assert len(pids) == 2
                for pid in pids:  # the games in flight, all with the spy, are on one or both
                    os.kill(pid, signal.SIGKILL)
                _, err = proc.communicate(timeout=600)
                assert proc.returncode == 0, err
        finally:
            if proc.poll() is None:
                proc.kill()
    finally:
        spy.kill()
        spy.wait(30)
    sights = _first_sights(log)
    assert len(sights) > 12  # 12 games in the schedule, and those the kill interrupted
    repeated = [s for s in set(sights) if sights.count(s) > 1]
    assert not repeated, f"the spy was shown {len(repeated)} hands and markets it had already seen"
    assert where == "inline" or "its deal is void" in err
    with sqlite3.connect(data / "abluxx.db") as c:
        stored = {r[0] for r in c.execute("SELECT game_id FROM games")}
        void = {r[0]: r[1] for r in c.execute("SELECT game_id, finished FROM void_games")}
        pending = c.execute("SELECT COUNT(*) FROM schedule WHERE done = 0").fetchone()[0]
    assert len(stored) == 12 and pending == 0 and void and not set(void) & stored
    for path in (data / "records").glob("*.abluxx"):  # every record of a stored or void finished game verifies
        assert path.stem in stored or void.get(path.stem) == 1
        verify_record(read_record(path))
    shown = abluxx("games", "--data", data, cwd=tmp_path)
    assert f"{len(void)} void games" in shown.stdout
