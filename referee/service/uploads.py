"""An uploaded bot's files (SubmitBot's ``upload``, docs/sandbox.md): a tar (plain, gzip, bzip2 or xz) or zip
archive, checked and unpacked into its version's folder under the data folder's ``uploads/``.

Refused, with the reason naming the member: an archive over ``max_mb``; absolute paths and ``..``; links
(symbolic or hard) whose target is outside the upload; device files, FIFOs and anything else not a file, folder
or link; more than ``max_files`` members; more than ``unpacked_mb`` unpacked, counted as the bytes are written
(so a zip bomb stops at the cap, whatever its headers claim).
"""

from __future__ import annotations

import io
import os
import posixpath
import shutil
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from referee.errors import BadInput
from referee.records.private import private_folder

MB = 1024 * 1024
UPLOADS = "uploads"  # under the data folder: uploads/<bot>/<version>/


@dataclass(frozen=True)
class UploadSettings:
    """The ``[uploads]`` table (docs/security.md lists each)."""

    max_mb: int = 32  # the archive as sent
    unpacked_mb: int = 128  # every file unpacked, together
    max_files: int = 2000  # members (files, folders, links)
    output_kb: int = 64  # the bot's own output kept for each game (its author sees it)


@dataclass(frozen=True)
class Member:
    name: str  # relative, normalized
    kind: str  # "file", "dir" or "link"
    mode: int
    target: str = ""  # a link's target, as given
    open: object = None  # a file's reader: () -> IO[bytes]


def _name(raw: str) -> str:
    """The member's path, normalized; BadInput for an absolute one or one with ``..``."""
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise BadInput(f"upload: {raw!r} is an absolute path; an upload holds relative paths only")
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BadInput(f"upload: {raw!r} has '..' in its path")
    return "/".join(parts)


def _link_inside(name: str, target: str) -> None:
    """BadInput unless the link ``name`` -> ``target`` stays inside the upload."""
    if target.startswith("/") or posixpath.normpath(posixpath.join(posixpath.dirname(name), target)).startswith(".."):
        raise BadInput(f"upload: the link {name!r} points outside the upload (to {target!r})")


def _inside(dest: Path, path: Path, name: str) -> None:
    """BadInput unless ``path``, every link on its way followed, is inside ``dest``."""
    if not path.resolve().is_relative_to(dest.resolve()):
        raise BadInput(f"upload: the link {name!r} points outside the upload")


def _tar_members(tar: tarfile.TarFile) -> Iterator[Member]:
    for m in tar:
        name = _name(m.name)
        if m.isdir():
            yield Member(name, "dir", m.mode)
        elif m.isfile():
            yield Member(name, "file", m.mode, open=lambda m=m: tar.extractfile(m))
        elif m.issym():
            yield Member(name, "link", m.mode, m.linkname)
        elif m.islnk():  # a hard link names another member: the same rule, from the upload's top
            yield Member(name, "link", m.mode, posixpath.relpath(_name(m.linkname), posixpath.dirname(name) or "."))
        else:
            raise BadInput(f"upload: {m.name!r} is a device file, FIFO or other special file")


def _zip_members(z: zipfile.ZipFile) -> Iterator[Member]:
    for info in z.infolist():
        mode = info.external_attr >> 16
        name = _name(info.filename)
        kind = (mode >> 12) & 0o17
        if info.is_dir() or kind == 0o04:
            yield Member(name, "dir", mode & 0o777 or 0o755)
        elif kind == 0o12:  # a symbolic link: its target is the member's content
            with z.open(info) as f:  # at most a path's worth: a "link" of gigabytes is not unpacked
                yield Member(name, "link", 0o777, f.read(4096).decode(errors="replace"))
        elif kind in (0, 0o10):
            yield Member(name, "file", mode & 0o777 or 0o644, open=lambda info=info: z.open(info))
        else:
            raise BadInput(f"upload: {info.filename!r} is a device file, FIFO or other special file")


def _members(data: bytes) -> tuple[Iterator[Member], object]:
    if zipfile.is_zipfile(io.BytesIO(data)):
        z = zipfile.ZipFile(io.BytesIO(data))
        return _zip_members(z), z
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")  # noqa: SIM115 (_unpack closes it)
    except (tarfile.TarError, EOFError, OSError):
        raise BadInput("upload: not a tar or zip archive (tar, tar.gz, tar.bz2, tar.xz or zip)") from None
    return _tar_members(tar), tar


def unpack(data: bytes, dest: Path, caps: UploadSettings) -> None:
    """Check ``data`` and unpack it into the new folder ``dest`` (BadInput names the first problem; nothing is
    left behind then). Files keep their owner's execute bit and are readable by the sandbox's own uid, which
    reaches them only through its bind: ``uploads/`` above them is owner-only."""
    if len(data) > caps.max_mb * MB:
        raise BadInput(f"upload: {len(data) / MB:.1f} MiB is more than the {caps.max_mb} MiB an upload may be")
    private_folder(dest.parent.parent)  # uploads/ (and the bot's folder) owner-only
    private_folder(dest.parent)
    dest.mkdir(mode=0o755)
    os.chmod(dest, 0o755)
    try:
        _unpack(data, dest, caps)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _unpack(data: bytes, dest: Path, caps: UploadSettings) -> None:
    members, archive = _members(data)
    budget = [caps.unpacked_mb * MB]
    try:
        for count, m in enumerate(members, 1):
            if count > caps.max_files:
                raise BadInput(f"upload: more than {caps.max_files} files")
            if not m.name:
                continue
            path = dest / m.name
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            _inside(dest, path.parent, m.name)  # not through a link that leads out
            if m.kind == "dir":
                path.mkdir(exist_ok=True, mode=0o755)
            elif m.kind == "link":
                _link_inside(m.name, m.target)
                os.symlink(m.target, path)
                _inside(dest, path, m.name)  # nor through a chain of links
            else:
                assert callable(m.open)
                _write(m.open(), path, 0o755 if m.mode & 0o100 else 0o644, budget, caps)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib_errors()) as e:
        raise BadInput(f"upload: the archive is damaged ({e})") from None
    finally:
        archive.close()  # type: ignore[attr-defined]


def zlib_errors() -> type[Exception]:
    import zlib

    return zlib.error


def _write(src: IO[bytes], path: Path, mode: int, budget: list[int], caps: UploadSettings) -> None:
    if path.is_symlink() or path.exists():
        raise BadInput(f"upload: {path.name!r} is in the archive twice")
    with src, open(path, "xb") as out:
        while chunk := src.read(MB):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise BadInput(f"upload: more than {caps.unpacked_mb} MiB unpacked")
            out.write(chunk)
    os.chmod(path, mode)
