"""The `.abluxx` record file: writing it as a game goes, and reading it back (docs/records.md).

A file is the 8-byte format marker ``MAGIC``, then frames: each a ``RecordFrame`` message prefixed by its length
as a protobuf varint. The header frame comes first, then one frame per decision, then the footer. Frames are
numbered from 1 (the header) and located by the byte offset of their length prefix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from google.protobuf.message import DecodeError

from referee.errors import DataLoss
from referee.proto.abluxxen.v1 import record_pb2 as rpb
from referee.records.private import open_private
from referee.wire import WireError, bytes_field, delimited, read_varint

MAGIC = b"ABLUXX1\n"  # the trailing newline catches a file mangled by a text-mode copy
FORMAT_VERSION = 1
# No real frame comes near this (a header is about 300 bytes, a decision rarely 200): a longer length prefix is
# garbage, not a frame cut short.
MAX_FRAME_BYTES = 1 << 20
# The writer's buffer: a whole game's decision frames (about 40 bytes each, a few hundred of them) fit, so they
# reach the file in one write when the game ends, in the thread that fsyncs it, not one write per decision.
WRITE_BUFFER_BYTES = 1 << 16


class RecordError(DataLoss):
    """A file or byte string that is not a readable game record, with the reason."""

    local = True  # it names files, folders or bot addresses


def encode_frame(frame: rpb.RecordFrame) -> bytes:
    """One frame as it is stored: its length as a varint, then the message."""
    return delimited(frame.SerializeToString())


class RecordWriter:
    """Writes a record as the game goes: the header now, a frame per decision, the footer at the end.

    The header is flushed at once; decision frames wait in a WRITE_BUFFER_BYTES buffer and ``finish`` writes them
    with the footer, flushes and fsyncs. A record is trusted only once its game has finished (and a tournament's
    game once it is committed to the store, after the fsync); a referee killed mid-game leaves a readable,
    incomplete record: the header and whatever prefix of the decisions had reached the file (at worst its last
    frame cut short, which readers drop). A game that was not committed is played again from its deal. With
    ``path`` None nothing is written and the writer only keeps the record in memory. ``record`` always holds what
    has been given to the writer so far, as a GameRecord.
    """

    def __init__(self, path: str | os.PathLike[str] | None, header: rpb.RecordHeader) -> None:
        if header.format_version not in (0, FORMAT_VERSION):
            raise RecordError(
                f"header says format version {header.format_version}; this writer writes {FORMAT_VERSION}"
            )
        self.game_id = header.game_id
        head = rpb.RecordFrame(header=header)
        head.header.format_version = FORMAT_VERSION
        # Every frame's body so far. RecordFrame's header, decision and footer are GameRecord's fields 1, 2 and 3,
        # so the bodies joined are the GameRecord: ``record`` is parsed from them only when someone asks.
        self._bodies = [head.SerializeToString()]
        self._record: rpb.GameRecord | None = None
        self._complete = False
        self.path = Path(path) if path is not None else None
        self._file = None
        self._finished = False
        if self.path is not None:
            # owner-only, its folder too: until every game on its deal is over, a record holds a deck still to be
            # played (a file written over keeps its old mode otherwise)
            fd = open_private(self.path, os.O_WRONLY | os.O_TRUNC)
            self._file = os.fdopen(fd, "wb", buffering=WRITE_BUFFER_BYTES)
            self._file.write(MAGIC + delimited(self._bodies[0]))
            self._file.flush()

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def record(self) -> rpb.GameRecord:
        """What has been written so far, as a GameRecord (``complete`` once the footer is written)."""
        if self._record is None:
            self._record = rpb.GameRecord.FromString(b"".join(self._bodies))
            self._record.complete = self._complete
        return self._record

    def decision(self, d: rpb.DecisionRecord | bytes) -> None:
        """Append one decision (a DecisionRecord, or one already serialized) to the buffer."""
        self._check_open()
        # RecordFrame.decision is field 2: a serialized decision goes in as it is.
        self._append(bytes_field(2, d) if isinstance(d, bytes) else rpb.RecordFrame(decision=d).SerializeToString())

    def finish(self, footer: rpb.RecordFooter) -> rpb.GameRecord:
        """Append the footer, flush, fsync and close. Returns the complete record."""
        self._check_open()
        self._append(rpb.RecordFrame(footer=footer).SerializeToString())
        self._complete = self._finished = True
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
        return self.record

    def _append(self, body: bytes) -> None:
        self._bodies.append(body)
        self._record = None
        if self._file is not None:
            self._file.write(delimited(body))

    def close(self) -> None:
        """Stop writing without a footer: the file stays an incomplete record. Harmless after ``finish``."""
        self._finished = True
        if self._file is not None and not self._file.closed:
            self._file.close()

    def _check_open(self) -> None:
        if self._finished:
            raise RecordError(f"record {self.game_id!r} is already finished or closed")

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


@dataclass
class Scan:
    """What reading found: the record, how many whole frames it held, and the bytes of a cut-off last frame."""

    record: rpb.GameRecord
    frames: int
    dropped_bytes: int


def _place_frame(record: rpb.GameRecord, frame: rpb.RecordFrame, which: str | None, have_header: bool, where: str,
                 name: str) -> None:  # fmt: skip
    """Put a frame other than a decision in its place in ``record``, or raise RecordError if it has none."""
    if which is None:
        raise RecordError(f"{where} holds no header, decision or footer: the file is damaged")
    if record.complete:
        raise RecordError(f"{where} is a {which} after the footer: the file is damaged")
    if not have_header:
        if which != "header":
            raise RecordError(f"{where} is a {which}; the first frame must be the header")
        if frame.header.format_version != FORMAT_VERSION:
            raise RecordError(
                f"{name} is format version {frame.header.format_version}; this referee reads version {FORMAT_VERSION}"
            )
        record.header.CopyFrom(frame.header)
    elif which == "header":
        raise RecordError(f"{where} is a second header: the file is damaged")
    else:
        record.footer.CopyFrom(frame.footer)
        record.complete = True


def scan_record(source: str | os.PathLike[str] | bytes | bytearray | memoryview) -> Scan:
    """Read a record from a file path or from its bytes. Raises RecordError when it cannot be read.

    A record cut off anywhere after its header reads as incomplete; a cut-off last frame is dropped.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        name = "record"
    else:
        name = f"record {os.fspath(source)}"
        try:
            with open(source, "rb") as f:
                data = f.read(len(MAGIC))
                if data == MAGIC:  # read no further into a file that is not a record
                    data += f.read()
        except OSError as e:
            raise RecordError(f"cannot read {name}: {e.strerror or e}") from None
    if not data.startswith(MAGIC):
        if MAGIC.startswith(data):
            raise RecordError(f"{name} is too short to hold its header ({len(data)} bytes): it was cut off")
        raise RecordError(
            f"{name} is not an Abluxxen game record: it does not start with the format marker {MAGIC!r} "
            f"(it starts with {data[: len(MAGIC)]!r})"
        )
    record = rpb.GameRecord()
    pos = len(MAGIC)
    frames = 0
    dropped = 0
    have_header = False
    decisions = record.decisions
    while pos < len(data):
        number = frames + 1
        start = pos
        try:
            got = read_varint(data, pos)
        except WireError:
            raise RecordError(
                f"frame {number} at byte offset {start}: its length prefix is garbage (longer than 10 bytes)"
            ) from None
        if got is None:
            dropped = len(data) - start
            break
        length, body = got
        if length > MAX_FRAME_BYTES:
            raise RecordError(
                f"frame {number} at byte offset {start} claims {length} bytes, more than a frame may hold "
                f"({MAX_FRAME_BYTES}): the file is damaged"
            )
        if body + length > len(data):
            dropped = len(data) - start
            break
        frame = rpb.RecordFrame()
        try:
            frame.ParseFromString(data[body : body + length])
        except DecodeError as e:
            raise RecordError(f"frame {number} at byte offset {start} is garbage: {e}") from None
        which = frame.WhichOneof("frame")
        if which == "decision" and have_header and not record.complete:
            decisions.append(frame.decision)
        else:
            _place_frame(record, frame, which, have_header, f"frame {number} at byte offset {start}", name)
            have_header = True
        frames += 1
        pos = body + length
    if not have_header:
        raise RecordError(f"{name} is too short to hold its header ({len(data)} bytes): it was cut off")
    return Scan(record, frames, dropped)


def read_record(source: str | os.PathLike[str] | bytes | bytearray | memoryview) -> rpb.GameRecord:
    """The GameRecord in a file or byte string; ``complete`` is True only when the footer is there."""
    return scan_record(source).record


def record_bytes(record: rpb.GameRecord) -> bytes:
    """A GameRecord in the file format (with its footer only if it has one)."""
    out = [MAGIC, encode_frame(rpb.RecordFrame(header=record.header))]
    out += [encode_frame(rpb.RecordFrame(decision=d)) for d in record.decisions]
    if record.complete:
        out.append(encode_frame(rpb.RecordFrame(footer=record.footer)))
    return b"".join(out)
