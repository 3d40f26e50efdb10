"""Where records live: ``<data>/records/<game_id>.abluxx`` for games of tournaments and ``match``, and
``<data>/validation/<game_id>.abluxx`` for the validation games of bots submitted to the service."""

from __future__ import annotations

import os
from pathlib import Path

from .recordfile import RecordError

DEFAULT_DATA_DIR = Path("abluxx-data")  # the data folder: the store (abluxx.db), the records, standings and logs
SUFFIX = ".abluxx"
RECORDS = "records"  # the folder of the records of tournaments' and `abluxx match`'s games, in the data folder
VALIDATION = "validation"  # the folder of the service's validation games, beside "records"


def _check_game_id(game_id: str) -> str:
    if not game_id or game_id in (".", "..") or any(c in game_id for c in "/\\\0"):
        raise RecordError(f"game id {game_id!r} cannot name a record file: it must be one file name, no slashes")
    return game_id


def record_path(data_dir: str | os.PathLike[str], game_id: str) -> Path:
    """The file a game's record is written to."""
    return record_in(Path(data_dir) / RECORDS, game_id)


def record_in(folder: str | os.PathLike[str], game_id: str) -> Path:
    """The record file of ``game_id`` in a folder of records (RECORDS or VALIDATION in a data folder)."""
    return Path(folder) / f"{_check_game_id(game_id)}{SUFFIX}"


def resolve_record(arg: str, data_dir: str | os.PathLike[str] = DEFAULT_DATA_DIR) -> Path:
    """``arg`` as a record file: an existing file path, or a game id looked up in ``data_dir``."""
    path = Path(arg)
    if path.is_file():
        return path
    if path.is_dir():
        raise RecordError(f"{arg} is a folder, not a record")
    if any(c in arg for c in "/\\") or arg.endswith(SUFFIX):
        raise RecordError(f"no record file {arg}")
    candidate = record_path(data_dir, arg)
    validation = record_in(Path(data_dir) / VALIDATION, arg)
    for path in (candidate, validation):
        if path.is_file():
            return path
    raise RecordError(f"no record {arg!r}: it is not a file, and there is no {candidate} or {validation}")
