"""Owner-only files and folders (docs/security.md): every folder the referee writes in is 0700 and every file it
writes 0600, whatever the umask and whatever was there before (a folder or record left 0755/0644 by an older
referee is tightened, when it is ours). Records, the store and the logs hold decks still to be played and the deal
keys, so nobody else on the machine may read them."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def tighten(path: Path) -> bool:
    """Take away the group's and others' access to ``path`` if it has any and it is ours (by path: never through a
    descriptor, whose close would drop the process's SQLite locks if ``path`` is a database). Whether it had any."""
    st = path.lstat()
    if st.st_mode & 0o077 and st.st_uid == os.getuid() and not stat.S_ISLNK(st.st_mode):
        path.chmod(st.st_mode & 0o700)
        return True
    return False


def private_folder(path: str | os.PathLike[str]) -> Path:
    """``path`` as a folder only its owner can enter (0700): created so with any folders missing above it, or
    tightened if it exists."""
    path = Path(path)
    made = []
    p = path
    while not p.exists() and p != p.parent:
        made.append(p)
        p = p.parent
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    for folder in made:
        tighten(folder)
    if not made and tighten(path):  # an open folder an older referee left: what it holds was open too
        for inside in path.rglob("*"):
            tighten(inside)
    return path


def open_private(path: Path, flags: int) -> int:
    """A descriptor on ``path`` opened with ``flags`` (plus O_CREAT), the file owner-only (0600) even if it existed
    with another mode; its folder is made private first."""
    private_folder(path.parent)
    fd = os.open(path, flags | os.O_CREAT, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except OSError:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, text: str) -> None:
    """``text`` as the whole of the owner-only file ``path`` (UTF-8)."""
    with os.fdopen(open_private(path, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as f:
        f.write(text)
