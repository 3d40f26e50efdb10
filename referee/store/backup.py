"""A consistent copy of a data folder while it is in use (``abluxx backup``), its check, and its restore.

Each SQLite file (``abluxx.db``, ``duels.db``) is copied through SQLite's online backup API from a read-only
connection of this process: the copy is the database as of one commit, whatever the server writes meanwhile
(WAL mode: the reader blocks no writer). That copy decides which records belong: every file under the folder is
copied but the records of games the copy does not hold as done (games in flight at that moment, or finished
after it, a ladder's games chosen after it among them, which have no row in the copy at all), which a resume of the
restored folder plays again with a fresh deal. A finished game's record is
complete and synced before its row commits, so every record the copy counts is whole.

The destination gets ``BACKUP-INCOMPLETE`` first and ``MANIFEST.json`` (each file's size and SHA-256) last; the
marker goes only once the manifest is written and synced, so a backup killed at any point is plainly incomplete,
and the source is only ever read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from referee.records.paths import RECORDS, SUFFIX
from referee.records.private import private_folder, tighten

from .migrations import version
from .sqlite import DATABASE, StoreError

MANIFEST = "MANIFEST.json"
INCOMPLETE = "BACKUP-INCOMPLETE"
FORMAT = 1  # the manifest's format
_SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's own: a database's copy holds what they held
_CHUNK = 1 << 20


class BackupError(StoreError):
    """A backup that cannot be made, does not check out, or cannot be restored; the message says which file."""


@dataclass
class Manifest:
    source: str
    schema_version: int
    files: dict[str, dict[str, object]] = field(default_factory=dict)  # path -> {"bytes", "sha256"}
    left_out: list[str] = field(default_factory=list)  # records of games in flight at the copy's moment
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None

    def to_json(self) -> dict[str, object]:
        return {"format": FORMAT, "source": self.source, "schema_version": self.schema_version,
                "started_at": self.started_at, "finished_at": self.finished_at, "files": self.files,
                "left_out": self.left_out}  # fmt: skip


def backup(data: Path, dest: Path, say: Callable[[str], None] = lambda _: None) -> Manifest:
    """Copy data folder ``data`` into ``dest`` (missing or empty), consistently while it is in use."""
    data, dest = Path(data), Path(dest)
    if not (data / DATABASE).is_file():
        raise BackupError(f"{data}: no {DATABASE} here: not an abluxx data folder")
    _fresh_destination(dest, data)
    (dest / INCOMPLETE).write_text(f"abluxx backup of {data.resolve()} began at {time.ctime()} and did not finish\n")
    databases = sorted(p for p in _files(data) if p.suffix == ".db")
    for db in databases:
        _copy_database(db, dest / db.relative_to(data))
    manifest = Manifest(str(data.resolve()), _schema_version(dest / DATABASE))
    say(f"databases copied ({len(databases)}); copying the other files")
    in_flight = _in_flight(dest / DATABASE)
    for path in _files(data):
        rel = path.relative_to(data).as_posix()
        if path.suffix == ".db" or path.name.endswith(_SIDE_FILES):
            continue
        if in_flight(rel):
            manifest.left_out.append(rel)
            continue
        _copy_file(path, dest / rel)
    for path in sorted(_files(dest)):
        if path.name != INCOMPLETE:
            manifest.files[path.relative_to(dest).as_posix()] = _describe(path)
    manifest.finished_at = time.time()
    _write_synced(dest / MANIFEST, json.dumps(manifest.to_json(), indent=1, sort_keys=True) + "\n")
    (dest / INCOMPLETE).unlink()
    return manifest


def check(dest: Path) -> list[str]:
    """What is wrong with backup ``dest`` (nothing: an empty list): incomplete, files missing, changed or added,
    or a database copy that fails SQLite's integrity check."""
    dest = Path(dest)
    if (dest / INCOMPLETE).exists() or not (dest / MANIFEST).is_file():
        return [f"{dest}: incomplete backup (no {MANIFEST}, or {INCOMPLETE} is there): it did not finish"]
    try:
        files = json.loads((dest / MANIFEST).read_text())["files"]
    except (ValueError, KeyError, UnicodeDecodeError) as e:
        return [f"{dest / MANIFEST}: not a backup manifest ({e})"]
    problems = []
    for rel, want in files.items():
        path = dest / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
        elif _describe(path) != want:
            problems.append(f"{rel}: changed since the backup (size or SHA-256 differs)")
        elif path.suffix == ".db" and (why := _integrity(path)):
            problems.append(f"{rel}: SQLite integrity check: {why}")
    extra = {p.relative_to(dest).as_posix() for p in _files(dest)} - set(files) - {MANIFEST}
    problems += [f"{rel}: not in the manifest" for rel in sorted(extra)]
    return problems


def restore(dest: Path, data: Path) -> int:
    """Copy backup ``dest``, once checked, into data folder ``data`` (missing or empty); the number of files."""
    dest, data = Path(dest), Path(data)
    problems = check(dest)
    if problems:
        raise BackupError(f"{dest}: will not restore a backup that does not check out: " + "; ".join(problems))
    _fresh_destination(data, dest)
    files = json.loads((dest / MANIFEST).read_text())["files"]
    for rel in files:
        _copy_file(dest / rel, data / rel)
    return len(files)


def _fresh_destination(dest: Path, other: Path) -> None:
    """``dest`` made an empty private folder; refused if it holds anything or lies inside ``other``."""
    if dest.resolve().is_relative_to(other.resolve()):
        raise BackupError(f"{dest}: inside {other}: the copy would copy itself")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BackupError(f"{dest}: exists and is not an empty folder: nothing is overwritten")
    private_folder(dest)


def _files(folder: Path) -> Iterator[Path]:
    """Every regular file under ``folder`` (no links, no sockets), in a stable order."""
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            if path.is_file() and not path.is_symlink():
                yield path


def _copy_database(source: Path, copy: Path) -> None:
    """SQLite's online backup of ``source`` into ``copy``, made one self-contained file (no -wal)."""
    private_folder(copy.parent)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    try:
        dst = sqlite3.connect(copy)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")
        finally:
            dst.close()
    except sqlite3.Error as e:
        raise BackupError(f"{source}: cannot be copied: {e}") from None
    finally:
        src.close()
    tighten(copy)


def _schema_version(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as c:
        return version(c)


# a tournament's game id (tournament/schedule.py's game_id): the tournament's id, then its table, deal, order, attempt
_TOURNAMENT_GAME = re.compile(r"(?P<tid>.+)-t\d+-d\d+-o\d+(?:-a\d+)?")


def _in_flight(db: Path) -> Callable[[str], bool]:
    """Whether a file (its path relative to the data folder) is the record of a game the copy ``db`` does not hold
    as done: scheduled and not done in it, or of one of its tournaments and not among its games at all (a ladder
    chooses its games as it goes, so one chosen after the copy's moment has no row in it). Other records (a duel's)
    are not a tournament's. Each file is judged as it is copied, so a record begun after this was made is judged
    too (a list of the folder's records taken here would miss it)."""
    with contextlib.closing(sqlite3.connect(db)) as c:
        pending = {r[0] for r in c.execute("SELECT game_id FROM schedule WHERE done = 0")}
        tournaments = {r[0] for r in c.execute("SELECT id FROM tournaments")}
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        held = {r[0] for t in ("games", "void_games") if t in tables for r in c.execute(f"SELECT game_id FROM {t}")}

    def left_out(rel: str) -> bool:
        folder, _, name = rel.rpartition("/")
        if folder != RECORDS or not name.endswith(SUFFIX):
            return False
        game_id = name.removesuffix(SUFFIX)
        m = _TOURNAMENT_GAME.fullmatch(game_id)
        return game_id in pending or bool(m and m["tid"] in tournaments and game_id not in held)

    return left_out


def _copy_file(source: Path, copy: Path) -> None:
    private_folder(copy.parent)
    with source.open("rb") as f, copy.open("wb") as g:
        while chunk := f.read(_CHUNK):
            g.write(chunk)
        g.flush()
        os.fsync(g.fileno())
    tighten(copy)


def _describe(path: Path) -> dict[str, object]:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return {"bytes": path.stat().st_size, "sha256": h.hexdigest()}


def _integrity(db: Path) -> str:
    """'' when ``db`` passes SQLite's integrity check, else what it found."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as c:
        found = [r[0] for r in c.execute("PRAGMA integrity_check")]
    return "" if found == ["ok"] else "; ".join(found[:5])


def _write_synced(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    tighten(tmp)
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
