"""Write the old-schema stores of tests/fixtures/stores/ with the project's own earlier releases (issue 50 item 3).

    python3 scripts/make_old_stores.py [--out tests/fixtures/stores] [--only NAME]

For each schema the store had (before its migrations were numbered, then each numbered schema main had), this checks
out a commit of this repository that wrote it (``git worktree add`` into a temporary folder) and runs that commit's
own ``abluxx``, on this Python (``PYTHONPATH`` pointing at the old tree), into a fresh data folder:

1. ``done``: a round robin of three built-in policies played to its end;
2. ``open``: a round robin of four, SIGKILLed once three of its games are stored, so it is unfinished, with a
   game in flight at the kill; and ``lad``, a ladder of the same four killed the same way, where the release had
   ladders;
3. the old code's ``abluxx standings --json`` of each, saved as ``expected/<name>.json`` beside the store, and the
   old commit's hash in ``COMMIT``;
4. where the release's service keeps what it reads (``KEEPS``: rating fits, kept standings), its own ``abluxx
   serve`` reads every tournament's standings over gRPC until it has kept them, and is stopped by SIGTERM.

Then the worktree is removed. Logs and locks are left out of the fixture; the store and every record are kept
(the WAL the old code left is folded into the store's file by SQLite's own checkpoint, then VACUUM drops its free
pages into 1 kB pages: the same schema and rows in fewer bytes). Run it once; the stores are committed, and
tests/store/test_upgrades.py opens each with today's code.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# name -> the commit whose code writes the store; each is the last commit with that schema
RELEASES = {
    "1-first-tables": "7f8d078^",  # tournaments, schedule, games, results (the service's tables appear when served)
    "2-deal-keys": "bf1b48a^",  # + deal_keys and the schedule_by_deck index
    "3-ladders": "bbf6d08^",  # + the ladder tables (made when a ladder runs) and the schedule_done index
    "4-void-deals": "1eb2c43",  # + schedule.started and .attempt, void_games
    "5-ladder-choices": "f432626",  # + ladder_deals in every store: the last before numbered migrations
    # numbered schemas (user_version), each the last commit of main with that schema
    "6-bot-health": "c4ed8f9",  # 9: bot health (8) and the games a service bot asks to play at once (9)
    "7-rating-fits": "34eb7b1",  # 10: kept rating fits
    "8-uploads": "59e79bc",  # 11: uploaded bots' commands
    "9-site-sessions": "e47060e",  # 12: the site's sessions
    "10-kept-standings": "8d9e920",  # 13: kept standings
    "11-pairing-rules": "05faaf4",  # 14: ladder pairing rules (and the draw probability 0.05)
}
LADDERS = set(RELEASES) - {"1-first-tables", "2-deal-keys"}  # the releases that ran ladders
# the releases whose service keeps what it read in the store: their own `abluxx serve` reads every leaderboard once
# and stops, leaving its kept rating fits (schema 10 on) and kept standings (schema 13 on) in the fixture
KEEPS = {"7-rating-fits": ("rating_fit_marks",), "8-uploads": ("rating_fit_marks",),
         "9-site-sessions": ("rating_fit_marks",), "10-kept-standings": ("rating_fit_marks", "kept_standings"),
         "11-pairing-rules": ("rating_fit_marks", "kept_standings")}  # fmt: skip
ORGANISER = "organiser-secret"
ENTRANTS = [("ann", "random"), ("bob", "greedy"), ("cat", "counter"), ("dan", "random")]
KILL_AFTER = 3  # games stored before an unfinished tournament is killed
LADDER_GAMES = 30  # the unfinished ladder's budget


def config(name: str, entrants: int, deals: int) -> str:
    lines = [f'name = "{name}"', "seed = 11", "table_size = 3", f"deals = {deals}", "concurrency = 1"]
    for who, policy in ENTRANTS[:entrants]:
        lines += ["[[entrants]]", f'name = "{who}"', f'policy = "{policy}"']
    return "\n".join(lines) + "\n"


def ladder(entrants: int) -> str:
    return config("lad", entrants, 1).replace("deals = 1\n", "") + f"[ladder]\ngames = {LADDER_GAMES}\n"


def old_abluxx(tree: Path) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'clients' / 'python'}"}
    return [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"], env


def stored(db: Path, name: str) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            q = "SELECT COUNT(*) FROM games g JOIN tournaments t ON t.id = g.tournament_id WHERE t.name = ?"
            return c.execute(q, (name,)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def run_killed(cmd: list[str], env: dict[str, str], cwd: Path, db: Path, name: str) -> None:
    """Run ``cmd`` and SIGKILL it once KILL_AFTER games of the tournament ``name`` are stored."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while stored(db, name) < KILL_AFTER and proc.poll() is None:
            time.sleep(0.005)
        if proc.poll() is not None:
            raise SystemExit(f"{cmd}: ended before it could be killed (exit {proc.returncode})")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()


def write_store(name: str, commit: str, out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix=f"old-{name}-") as tmp_name:
        tmp = Path(tmp_name)
        tree = tmp / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), commit], check=True,
                       capture_output=True)  # fmt: skip
        try:
            _play(name, tree, tmp, out)
            full = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], check=True, capture_output=True,
                                  text=True).stdout.strip()  # fmt: skip
            (out / name / "COMMIT").write_text(f"{full}\n")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)


def _play(name: str, tree: Path, tmp: Path, out: Path) -> None:
    abluxx, env = old_abluxx(tree)
    data = tmp / "data"
    (tmp / "done.toml").write_text(config("done", 3, 2))
    (tmp / "open.toml").write_text(config("open", 4, 3))
    run = [*abluxx, "tournament", "run"]
    subprocess.run([*run, "done.toml", "--data", str(data), "--no-progress"], env=env, cwd=tmp, check=True,
                   capture_output=True)  # fmt: skip
    unfinished = ["open", "lad"] if name in LADDERS else ["open"]
    (tmp / "lad.toml").write_text(ladder(4))
    for tournament in unfinished:
        run_killed([*run, f"{tournament}.toml", "--data", str(data), "--no-progress"], env, tmp, data / "abluxx.db",
                   tournament)  # fmt: skip
    expected = out / name / "expected"
    expected.mkdir(parents=True)
    with sqlite3.connect(f"file:{data / 'abluxx.db'}?mode=ro", uri=True) as db:
        ids = dict(db.execute("SELECT name, id FROM tournaments"))
    if name in KEEPS:
        _serve(abluxx, env, tmp, data, list(ids.values()), KEEPS[name])
    for tournament in ("done", *unfinished):
        shown = subprocess.run([*abluxx, "standings", ids[tournament], "--json", "--data", str(data)], env=env,
                               cwd=tmp, check=True, capture_output=True, text=True).stdout  # fmt: skip
        (expected / f"{tournament}.json").write_text(shown)
    shutil.copytree(data / "records", out / name / "records")
    for kept in ("abluxx.db", "abluxx.db-wal"):
        if (data / kept).exists():
            shutil.copy2(data / kept, out / name / kept)
    # SQLite's own checkpoint folds the WAL the old code left into the file (the rows are the old code's, as it
    # committed them), so that the fixture is one file
    with contextlib.closing(sqlite3.connect(out / name / "abluxx.db")) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        # then VACUUM drops its free pages, into 1 kB pages (a table takes a page at least): the same schema and rows
        # in a third of the bytes; WAL mode, as the old code left it
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("PRAGMA page_size=1024")
        db.execute("VACUUM")
        db.execute("PRAGMA journal_mode=WAL")
    if (out / name / "abluxx.db-wal").exists():
        raise SystemExit(f"{name}: the WAL is still there after a checkpoint")


def _kept(db: Path, tables: tuple[str, ...]) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as c:
        return min(c.execute(f"SELECT COUNT(DISTINCT tournament_id) FROM {t}").fetchone()[0] for t in tables)


def _serve(abluxx: list[str], env: dict[str, str], tmp: Path, data: Path, tids: list[str],
           tables: tuple[str, ...]) -> None:  # fmt: skip
    """The old service reads every tournament's standings over gRPC, keeps what it keeps (``tables``) for each, and
    is stopped by SIGTERM, as an operator stops it; the store's games are as they were."""
    import grpc  # the current tree's stubs: the proto's GetStandings is the same at every release

    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
    from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc

    settings = tmp / "serve.toml"
    settings.write_text(f'[auth]\norganiser_tokens = ["{ORGANISER}"]\n')
    db = data / "abluxx.db"
    before = stored(db, "open"), stored(db, "lad")
    cmd = [*abluxx, "serve", "--data", str(data), "--port", "0", "--config", str(settings)]
    proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        while not (line := proc.stdout.readline()).startswith("listening on") and line:
            pass
        if not line:
            raise SystemExit(f"{cmd}: exited before listening (exit {proc.wait()})")
        referee = ref_grpc.RefereeStub(grpc.insecure_channel(line.split()[2]))
        deadline = time.monotonic() + 120
        while _kept(db, tables) < len(tids):
            if time.monotonic() > deadline:
                raise SystemExit(f"{cmd}: kept no {tables} for every tournament in 120 s")
            for tid in tids:
                with contextlib.suppress(grpc.RpcError):  # UNAVAILABLE while the first build runs
                    referee.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid), timeout=30,
                                         metadata=[("authorization", f"Bearer {ORGANISER}")])  # fmt: skip
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        if proc.wait(60) != 0:
            raise SystemExit(f"{cmd}: exit {proc.returncode} on SIGTERM")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if (stored(db, "open"), stored(db, "lad")) != before:
        raise SystemExit(f"{cmd}: the service played games of the CLI's tournaments")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "stores")
    p.add_argument("--only", choices=sorted(RELEASES), action="append", help="only this store (repeatable)")
    args = p.parse_args()
    for name in args.only or sorted(RELEASES):
        if (args.out / name).exists():
            shutil.rmtree(args.out / name)
        write_store(name, RELEASES[name], args.out)
        print(f"{name}: {RELEASES[name]} -> {args.out / name}", flush=True)


if __name__ == "__main__":
    main()
