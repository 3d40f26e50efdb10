"""Every file and folder the referee writes in a data folder is owner-only (0700 folders, 0600 files), whatever the
umask and whatever an older referee left there (issue 20 item 4: `match` made its folder 0777 under umask 000,
duels.db was 0644, an old 0755 records folder and an old 0644 record stayed so). Real commands as real processes
under umask 000; then the data folder is walked.

A command runs under umask 000 through ``subprocess``'s ``umask=``, never a ``preexec_fn``: this pytest process runs
gRPC (its worker ran other test files), and a ``preexec_fn`` makes ``subprocess`` fork instead of vfork, so gRPC's
fork handlers start its poller again in the child, which then closes every descriptor before its exec, the poller's
too. About 1 child in 100 died of it (SIGABRT, "Epoll1Poller ... epoll_wait error: Bad file descriptor") before the
command ran: the duel of a clean-clone CI run."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from concurrent import futures
from pathlib import Path

import grpc

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from tests.service.helpers import ABLUXX, ALICE, ORGANISER, auth, config, start_bot, stub, submit, write_settings
from tests.service.helpers import start_server as _start_server


def _umask0(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, umask=0)


def _abluxx(cwd: Path, *args: str, codes: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    out = _umask0([*ABLUXX, *args], cwd)
    assert out.returncode in codes, out.stderr
    return out


def _open_to_others(data: Path) -> list[str]:
    bad = []
    for p in [data, *data.rglob("*")]:
        mode = p.lstat().st_mode
        if stat.S_ISLNK(mode):
            continue
        if mode & 0o077:
            bad.append(f"{p.relative_to(data.parent)} {stat.filemode(mode)}")
    return bad


def _old_folder(data: Path) -> Path:
    """A data folder as an older referee (or a loose umask) left it: 0755 folders, a 0644 record."""
    (data / "records").mkdir(parents=True)
    old = data / "records" / "old.abluxx"
    old.write_bytes(b"old")
    for p, mode in ((data, 0o755), (data / "records", 0o755), (old, 0o644)):
        p.chmod(mode)
    return old


def test_match_duel_gauntlet_and_tournament_under_umask_000_leave_nothing_open(tmp_path: Path) -> None:
    old = _old_folder(tmp_path / "old")
    _abluxx(tmp_path, "match", "greedy", "counter", "--data", "old")
    _abluxx(tmp_path, "match", "greedy", "counter", "--data", "new/deeper")
    _abluxx(tmp_path, "duel", "random", "greedy", "--max-games", "4", "--data", "old", codes=(0, 1, 3))
    field = ("--field", "random", "counter", "--max-games", "4")
    _abluxx(tmp_path, "gauntlet", "greedy", *field, "--data", "g", codes=(0, 1, 3))
    cfg = tmp_path / "t.toml"
    cfg.write_text('name = "perm"\ntable_size = 2\ndeals = 1\n[[entrants]]\nname = "a"\npolicy = "greedy"\n'
                   '[[entrants]]\nname = "b"\npolicy = "random"\n')  # fmt: skip
    _abluxx(tmp_path, "tournament", "run", str(cfg), "--data", "t", "--no-progress")
    _abluxx(tmp_path, "tournament", "run", str(cfg), "--data", "w", "--no-progress", "--workers", "1")
    assert old.stat().st_mode & 0o777 == 0o600
    for data in ("old", "new", "g", "t", "w"):
        assert not _open_to_others(tmp_path / data), _open_to_others(tmp_path / data)
    assert (tmp_path / "g" / "duels.db").exists() and (tmp_path / "t" / "standings").is_dir()


def test_match_alone_tightens_a_data_folder_an_older_referee_left_open(tmp_path: Path) -> None:
    """Its records/ became 0700 while the folder itself stayed 0755 (issue 47 item 4)."""
    _old_folder(tmp_path / "old")
    _abluxx(tmp_path, "match", "greedy", "counter", "--data", "old")
    assert not _open_to_others(tmp_path / "old"), _open_to_others(tmp_path / "old")


def test_serve_under_umask_000_leaves_nothing_open(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old = os.umask(0)
    try:
        srv = _start_server(data, write_settings(tmp_path))
    finally:
        os.umask(old)
    bot = start_bot("greedy")
    try:
        s = stub(srv.address)
        assert submit(s, "g", bot.address, ALICE).HasField("entrant")
        two = [{"name": "p", "policy": "random"}, {"name": "q", "policy": "greedy"}]
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=config("perm", two, deals=1)),
                               metadata=auth(ORGANISER), timeout=60)  # fmt: skip
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))
        list(s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=t.tournament_id), timeout=300))
    finally:
        bot.stop()
        srv.stop()
    assert (data / "validation").is_dir() and list((data / "records").glob("*.abluxx"))
    assert not _open_to_others(data), _open_to_others(data)


def test_commands_under_umask_000_start_whole_beside_this_process_s_grpc(tmp_path: Path) -> None:
    """The regression test of the SIGABRT above: with gRPC serving and a channel ready in this process, 200 small
    commands started the way ``_abluxx`` starts them all run to their end under umask 000. With a ``preexec_fn``,
    5 to 8 of 300 died (SIGABRT, once SIGSEGV) on this machine."""
    server = grpc.server(futures.ThreadPoolExecutor(2))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        grpc.channel_ready_future(channel).result(timeout=30)
        probe = [sys.executable, "-S", "-c", "import os; print(os.umask(0))"]
        ends = [_umask0(probe, tmp_path) for _ in range(200)]
    finally:
        channel.close()
        server.stop(None)
    assert [(e.returncode, e.stdout.strip()) for e in ends if (e.returncode, e.stdout.strip()) != (0, "0")] == []
