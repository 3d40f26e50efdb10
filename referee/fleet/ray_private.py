"""Ray made as private as Ray 2.60 allows (docs/security.md, docs/scale.md "Ray"). No Ray import here: these run
before ``ray.init``, and the processes Ray starts inherit what they set.

- Usage stats off (``RAY_USAGE_STATS_ENABLED=0``): Ray reports nothing about the cluster anywhere.
- A local Ray's temp root (``_temp_dir``) is a folder inside a fresh private one (0700), and Ray starts under umask
  077: Ray makes its temp root and session folders 0777 whatever the umask (it chmods them, so that other users can
  share one), but no other user can pass the 0700 folder above them, and the files Ray writes there are 0600.
- Token authentication with a token of our own: 256 random bits in a 0600 file in that root
  (``RAY_AUTH_TOKEN_PATH``), so Ray does not write ``~/.ray/auth_token`` (0644) for a local Ray; an existing
  ``~/.ray/auth_token`` of ours that others can read is made 0600 (a cluster's token, for ``--ray-address``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

USAGE_STATS = "RAY_USAGE_STATS_ENABLED"
AUTH_TOKEN = "RAY_AUTH_TOKEN"
AUTH_TOKEN_PATH = "RAY_AUTH_TOKEN_PATH"


def default_token() -> Path:
    return Path.home() / ".ray" / "auth_token"


def tighten_default_token() -> None:
    """``~/.ray/auth_token``, when it is ours and others may read it, made owner-only."""
    path = default_token()
    with contextlib.suppress(OSError):
        st = path.stat()
        if st.st_uid == os.getuid() and st.st_mode & 0o077:
            os.chmod(path, 0o600)


def quiet() -> None:
    """Usage stats off for this driver and every process Ray starts from it."""
    os.environ[USAGE_STATS] = "0"


_token: str | None = None


def process_token() -> str:
    """This process's token: one for every local Ray it starts, since Ray keeps the first token it read for the
    life of the process, and a second local Ray (a service whose Ray was stopped when its last tournament ended,
    then started again) with a new token would refuse its own driver."""
    global _token
    if _token is None:
        _token = secrets.token_hex(32)
    return _token


class PrivateRoot:
    """A private folder (``path``, 0700) holding a local Ray's temp root (``temp_dir``) and the token file;
    ``close`` removes them and puts the environment back."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="abluxx-ray-"))  # 0700
        self.temp_dir = self.path / "ray"  # Ray makes it 0777; the folder above keeps others out
        self._saved = os.environ.get(AUTH_TOKEN_PATH)
        self._set = False
        if AUTH_TOKEN not in os.environ and AUTH_TOKEN_PATH not in os.environ:  # a token the user chose wins
            token = self.path / "auth_token"
            fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(process_token())
            os.environ[AUTH_TOKEN_PATH] = str(token)
            self._set = True

    @contextlib.contextmanager
    def starting(self) -> Iterator[None]:
        """Around ``ray.init``: umask 077, so the files and folders Ray makes are owner-only where it allows."""
        old = os.umask(0o077)
        try:
            yield
        finally:
            os.umask(old)

    def kill_processes(self, wait_s: float = 10.0) -> None:
        """SIGKILL this user's processes whose command line names this root (the ones a local Ray started in it:
        its GCS server, raylet, monitors), after a start that failed half-way, and wait up to ``wait_s`` until none
        is left (a killed process takes a moment to end on a loaded machine)."""
        deadline = time.monotonic() + wait_s
        while (found := self._processes()) and time.monotonic() <= deadline:
            for pid in found:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)

    def _processes(self) -> list[int]:
        """This user's processes, but this one, whose command line names this root (an ended one has none)."""
        needle = str(self.path).encode()
        found = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or entry.name == str(os.getpid()):
                continue
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == os.getuid() and needle in Path(entry.path, "cmdline").read_bytes():
                    found.append(int(entry.name))
        return found

    def close(self) -> None:
        if self._set:
            if self._saved is None:
                os.environ.pop(AUTH_TOKEN_PATH, None)
            else:
                os.environ[AUTH_TOKEN_PATH] = self._saved
        shutil.rmtree(self.path, ignore_errors=True)
