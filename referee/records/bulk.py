"""Records as a command names them, one or many: a file (``.abluxx``, or the ``.json`` that ``abluxx export``
writes), a game id in a data folder, or a folder of records; and many of them verified at once on worker
processes (``abluxx verify``)."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format

from referee.proto.abluxxen.v1 import record_pb2

from .paths import SUFFIX, resolve_record
from .recordfile import RecordError, read_record
from .verify import DealNotRevealed, VerifyError, verify_record

JSON_SUFFIX = ".json"
MAX_JOBS = 64  # worker processes for a bulk verify, at most (docs/security.md)


def load_record(path: Path) -> record_pb2.GameRecord:
    """The record in ``path``: the ``.abluxx`` format, or ``.json`` in protobuf's JSON mapping (``export``'s);
    RecordError when it cannot be read."""
    if path.suffix != JSON_SUFFIX:
        return read_record(path)
    try:
        return json_format.Parse(path.read_text(encoding="utf-8"), record_pb2.GameRecord())
    except (OSError, UnicodeDecodeError) as e:
        raise RecordError(f"{path}: cannot be read ({getattr(e, 'strerror', None) or e})") from None
    except json_format.ParseError as e:
        raise RecordError(f"{path}: not a GameRecord in JSON ({e})") from None


def record_files(args: Iterable[str], data_dir: str | os.PathLike[str]) -> list[Path]:
    """The record files ``args`` name, in order: each a file, a game id in ``data_dir``, or a folder (its
    ``.abluxx`` and ``.json`` files, sorted, in subfolders too); RecordError for one that names nothing."""
    out: list[Path] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in (SUFFIX, JSON_SUFFIX) and p.is_file())
            if not found:
                raise RecordError(f"{arg}: a folder with no {SUFFIX} or {JSON_SUFFIX} records in it")
            out.extend(found)
        else:
            out.append(resolve_record(arg, data_dir))
    return out


@dataclass(frozen=True)
class Verdict:
    """What verifying one record found: ``ok``, ``mismatch``, ``not yet`` (its deal is withheld) or
    ``unreadable``, and the line that says it."""

    path: str
    status: str
    line: str


def verify_file(path: str) -> Verdict:
    """Read and verify one record (in a worker process, or here)."""
    try:
        record = load_record(Path(path))
    except RecordError as e:
        return Verdict(path, "unreadable", f"unreadable: {e}")
    game = record.header.game_id or Path(path).stem
    try:
        verify_record(record)
    except DealNotRevealed as e:
        return Verdict(path, "not yet", f"not yet: {game}: {e}")
    except VerifyError as e:
        return Verdict(path, "mismatch", f"mismatch: {game}: {e}")
    except Exception as e:  # a record that parses yet breaks the replay in a way nobody foresaw
        return Verdict(path, "mismatch", f"mismatch: {game}: the replay failed ({type(e).__name__}: {e})")
    return Verdict(path, "ok", f"ok: {game} {len(record.decisions)} decisions, digest {record.footer.final_digest}")


def verify_files(paths: list[Path], jobs: int) -> Iterator[Verdict]:
    """Each record's verdict, in the order of ``paths``, verified on up to ``jobs`` worker processes (one record:
    here, no process started)."""
    jobs = max(1, min(jobs, MAX_JOBS, len(paths)))
    if jobs == 1:
        yield from (verify_file(str(p)) for p in paths)
        return
    # spawn: a forked copy of a process that has loaded gRPC is not safe to use
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield from pool.map(verify_file, [str(p) for p in paths], chunksize=max(1, len(paths) // (jobs * 8)))
