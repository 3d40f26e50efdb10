"""The sandboxes' folders on the host (referee/fleet/sandbox.py, ``session_folder`` and ``sweep``): each referee
process keeps its sandboxes' folders in one folder of its own, whose lock it holds while it lives. A referee killed
by SIGKILL cannot remove them; the next one to start a sandbox does, and never one of a process that still lives.
Real processes, a real SIGKILL; no bwrap is needed to make or sweep the folders."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from referee.fleet import sandbox
from referee.fleet.sandbox import SESSION_PREFIX, Sandbox, sweep

# a referee process: its session folder made in the temporary folder given, said, and kept until stdin closes
HOLDER = (
    "import sys, tempfile\n"
    "tempfile.tempdir = sys.argv[1]\n"
    "from referee.fleet import sandbox\n"
    "print(sandbox.session_folder(), flush=True)\n"
    "sys.stdin.read()\n"
)


def _holder(base: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(base)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def test_the_folders_of_a_referee_killed_by_sigkill_are_swept_and_a_live_ones_kept(tmp_path: Path) -> None:
    live, live_dir = _holder(tmp_path)
    dead, dead_dir = _holder(tmp_path)
    try:
        assert live_dir.parent == dead_dir.parent == tmp_path and live_dir != dead_dir
        (dead_dir / "sb-x").mkdir()  # a sandbox's folders, left behind
        (dead_dir / "rt-y" / "0").mkdir(parents=True)
        assert sweep(str(tmp_path)) == []  # both alive: nothing goes
        dead.send_signal(signal.SIGKILL)
        dead.wait(30)
        assert sweep(str(tmp_path)) == [str(dead_dir)]
        assert not dead_dir.exists() and live_dir.is_dir()
    finally:
        for p in (live, dead):
            if p.poll() is None:
                p.kill()
            p.wait(30)
    assert sweep(str(tmp_path)) == [str(live_dir)]  # killed too now: its lock is free


def test_a_referee_that_exits_normally_removes_its_folder(tmp_path: Path) -> None:
    proc, folder = _holder(tmp_path)
    assert folder.is_dir()
    proc.communicate("", timeout=30)  # stdin closed: it exits
    assert proc.returncode == 0 and not folder.exists()


def test_a_sweep_leaves_a_folder_being_made_a_link_and_anothers_folder(tmp_path: Path) -> None:
    """A folder without its lock file yet (being made), a link named like a session folder (to a folder whose lock
    nobody holds: it must not be followed), and a file so named are all left."""
    (tmp_path / f"{SESSION_PREFIX}making").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "lock").write_text("")
    (tmp_path / f"{SESSION_PREFIX}link").symlink_to(elsewhere)
    (tmp_path / f"{SESSION_PREFIX}file").write_text("")
    assert sweep(str(tmp_path)) == []
    assert (tmp_path / f"{SESSION_PREFIX}making").is_dir() and (elsewhere / "lock").exists()


def test_a_sandboxs_folders_are_made_in_this_processs_session_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(sandbox, "_session", None)
    dead, dead_dir = _holder(tmp_path)
    dead.send_signal(signal.SIGKILL)
    dead.wait(30)
    started = sandbox.start(("bot",), Sandbox(), None)
    try:
        session = Path(sandbox.session_folder())
        assert Path(started.socket_dir).parent == session == Path(started.stage_dir).parent
        assert session.parent == tmp_path and oct(session.stat().st_mode & 0o777) == oct(0o711)
        assert not dead_dir.exists()  # the first sandbox of this process swept the dead one's folder
    finally:
        started.remove()
    assert not Path(started.socket_dir).exists() and session.is_dir()
    if sandbox._session is not None:
        os.close(sandbox._session[1])
    monkeypatch.setattr(sandbox, "_session", None)


@pytest.mark.parametrize("name", ["abluxx-sb-old", "abluxx-rt-old"])
def test_folders_named_as_before_are_not_swept(tmp_path: Path, name: str) -> None:
    """Folders of the sandboxes of an earlier version (no lock to tell whether their referee lives) are left."""
    (tmp_path / name).mkdir()
    assert sweep(str(tmp_path)) == [] and (tmp_path / name).is_dir()
