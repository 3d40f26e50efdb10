"""The server never loses a game it reported committed (issue 20 item 1).

Closing any descriptor on a SQLite file drops every POSIX lock the process holds on it. The server once opened and
closed ``abluxx.db`` outside SQLite when its reader thread started (for a GetStandings or a watcher); the next
process that opened the data folder, such as ``abluxx standings``, then saw no other user, removed the server's
``-wal`` and ``-shm``, and the server went on committing into a deleted WAL that a SIGKILL lost."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

from .helpers import ABLUXX, ORGANISER, auth, config, start_server, stub, write_settings

POLICIES = [{"name": f"p{i}", "policy": p} for i, p in enumerate(["random", "greedy", "counter", "random"])]


def _done(s, tid: str) -> int:
    return s.GetTournament(ref_pb.GetTournamentRequest(tournament_id=tid), timeout=60).finished


def _wait_more(s, tid: str, above: int, total: int) -> int:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = _done(s, tid)
        if done > above or done == total:
            return done
        time.sleep(0.05)
    raise AssertionError(f"no game finished in 120 s after {above}")


def test_games_reported_committed_survive_reads_a_standings_process_and_a_sigkill(tmp_path: Path) -> None:
    data = tmp_path / "data"
    srv = start_server(data, write_settings(tmp_path))
    try:
        s = stub(srv.address)
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=config("locks", POLICIES, deals=400,
                               concurrency=2)), metadata=auth(ORGANISER), timeout=60)  # fmt: skip
        tid = t.tournament_id
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER), timeout=60)
        reported = _wait_more(s, tid, 0, t.games)
        # anonymous reads that the server answers off its event loop, on its reader thread
        s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid), timeout=120)
        watch = s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=tid), timeout=120)
        next(watch)
        watch.cancel()
        for _ in range(3):  # another process reads the data folder while the server writes (the docs say it may)
            out = subprocess.run([*ABLUXX, "standings", "--data", str(data)], capture_output=True, text=True,
                                 timeout=120)  # fmt: skip
            assert out.returncode == 0, out.stderr
            assert "locks" in out.stdout
            reported = _wait_more(s, tid, reported + 2, t.games)
        assert reported < t.games, "the tournament ended before the kill: give it more deals"
        reported = _done(s, tid)
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(30)
    finally:
        srv.stop()
    db = sqlite3.connect(data / "abluxx.db")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        kept = db.execute("SELECT COUNT(*) FROM games WHERE tournament_id = ?", (tid,)).fetchone()[0]
    finally:
        db.close()
    assert kept >= reported, f"the server reported {reported} games committed; {kept} survived its SIGKILL"
    srv = start_server(data, write_settings(tmp_path))
    try:  # it resumes: the interrupted sets are dealt again, and their finished games become void, not lost
        _wait_more(stub(srv.address), tid, 0, t.games)
        db = sqlite3.connect(data / "abluxx.db", timeout=30)
        try:
            kept = db.execute("SELECT COUNT(*) FROM games WHERE tournament_id = ?", (tid,)).fetchone()[0]
            kept += db.execute("SELECT COUNT(*) FROM void_games WHERE finished = 1").fetchone()[0]
        finally:
            db.close()
        assert kept >= reported
    finally:
        srv.stop()
