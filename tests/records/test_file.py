"""The record file: round trips, a referee killed mid-game, truncation at every byte, and damaged files."""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.engine import Options, apply, deck_from_seed, new_game
from referee.proto.abluxxen.v1 import record_pb2 as rpb
from referee.records import (
    MAGIC,
    RecordError,
    RecordWriter,
    VerifyError,
    commitment,
    decision_record,
    encode_frame,
    header,
    new_salt,
    read_record,
    record_bytes,
    record_selfplay,
    scan_record,
    verify_record,
)
from referee.wire import read_varint, varint

from .helpers import faulty_record, frame_offsets


@pytest.fixture(scope="module")
def real_file(tmp_path_factory) -> tuple[bytes, rpb.GameRecord]:
    path = tmp_path_factory.mktemp("rec") / "deep" / "records" / "faulty.abluxx"
    record = faulty_record(seed=2, names=("ann", "bob"), path=path)  # the writer makes the parent folders
    return path.read_bytes(), record


def test_round_trip_through_a_file(tmp_path) -> None:
    path = tmp_path / "g.abluxx"
    written = record_selfplay(11, 4, Options(draw_one=True), path=path)
    data = path.read_bytes()
    assert data.startswith(MAGIC)
    back = read_record(path)
    assert back.complete and back.HasField("footer")
    assert back == written
    assert read_record(data) == written  # from bytes as well as from a path
    assert record_bytes(back) == data
    verify_record(back)


def test_the_writer_keeps_the_record_in_memory_without_a_file() -> None:
    record = record_selfplay(5, 2)
    assert record.complete and len(record.decisions) > 0
    assert read_record(record_bytes(record)) == record


def test_a_writer_closed_without_its_footer_leaves_an_incomplete_record(tmp_path) -> None:
    deck = deck_from_seed(1)
    path = tmp_path / "g.abluxx"
    state = new_game(deck, 2)
    with pytest.raises(RuntimeError), RecordWriter(path, header("g", deck, ["a", "b"], salt=new_salt())) as w:
        for seq in range(1, 4):
            action = state.legal[0]
            after, events = apply(state, action)
            w.decision(decision_record(state, action, events, seq=seq))
            state = after
        raise RuntimeError("the referee fell over")
    record = read_record(path)
    assert not record.complete and not record.HasField("footer")
    assert [d.seq for d in record.decisions] == [1, 2, 3]
    with pytest.raises(VerifyError, match="incomplete record: 3 decisions"):
        verify_record(record)
    with pytest.raises(RecordError, match="already finished or closed"):
        w.decision(rpb.DecisionRecord())


def _killed_writer(path: Path, frames: int) -> None:
    """A process that writes ``frames`` decisions of a real game (the game's first decisions, then its first one
    over and over with growing seq) and is killed by SIGKILL before the footer."""
    script = textwrap.dedent(
        f"""
        import os, signal
        from referee.engine import apply, deck_from_seed, new_game
        from referee.records import RecordWriter, decision_record, header, new_salt
        deck = deck_from_seed(9)
        state = new_game(deck, 3)
        w = RecordWriter({str(path)!r}, header("killed", deck, ["a", "b", "c"], salt=new_salt()))
        first = None
        for seq in range(1, {frames} + 1):
            if seq <= 30:
                action = state.legal[-1]
                after, events = apply(state, action)
                first = first or (state, action, events)
                w.decision(decision_record(state, action, events, seq=seq))
                state = after
            else:
                w.decision(decision_record(*first, seq=seq))
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert proc.returncode == -9, proc.stderr.decode()


def test_a_referee_killed_mid_game_leaves_a_readable_incomplete_record(tmp_path) -> None:
    path = tmp_path / "killed.abluxx"
    _killed_writer(path, 30)
    record = read_record(path)
    assert not record.complete
    # Decision frames wait in the writer's buffer until the game ends: the file holds the header and a prefix of
    # the decisions (none of these 30 had reached it), never a footer.
    assert [d.seq for d in record.decisions] == list(range(1, len(record.decisions) + 1))
    with pytest.raises(VerifyError, match=f"incomplete record: {len(record.decisions)} decisions"):
        verify_record(record)


def test_a_referee_killed_after_its_buffer_filled_leaves_a_prefix_of_the_decisions(tmp_path) -> None:
    """More frames than the writer's buffer holds: some reached the file, cut anywhere (even inside a frame), and
    the record reads as incomplete with the decisions that did, in order."""
    path = tmp_path / "killed.abluxx"
    _killed_writer(path, 8000)  # about 40 bytes each: several buffers' worth
    scan = scan_record(path)
    assert not scan.record.complete
    seqs = [d.seq for d in scan.record.decisions]
    assert 0 < len(seqs) < 8000 and seqs == list(range(1, len(seqs) + 1))


def test_truncation_at_every_byte_reads_as_incomplete_or_is_refused(real_file) -> None:
    data, full = real_file
    frames = frame_offsets(data)
    header_end = frames[0][1] + frames[0][2]
    ends = [body + n for _, body, n in frames]  # where each frame ends
    for cut in range(len(data) + 1):
        try:
            scan = scan_record(data[:cut])
        except RecordError as e:
            assert cut < header_end, f"cut at {cut}: refused although the header is whole: {e}"
            assert "too short" in str(e)
            continue
        assert cut >= header_end
        record = scan.record
        whole = sum(1 for end in ends if end <= cut)  # frames wholly inside the cut
        assert scan.frames == whole
        assert scan.dropped_bytes == cut - max(end for end in ends if end <= cut)
        # What was read is exactly the whole frames before the cut.
        assert record_bytes(record) == data[: cut - scan.dropped_bytes]
        assert record.complete == (cut == len(data))
        assert len(record.decisions) == min(whole - 1, len(full.decisions))
    # An incomplete record never verifies, whatever its length.
    for cut in range(header_end, len(data), 97):
        with pytest.raises(VerifyError, match="incomplete record"):
            verify_record(read_record(data[:cut]))


def _damage(data: bytes, frame: int, body: bytes) -> bytes:
    _, start, n = frame_offsets(data)[frame - 1]
    assert len(body) == n
    return data[:start] + body + data[start + n :]


def test_garbage_inside_a_frame_names_the_frame_and_its_offset(real_file) -> None:
    data, _ = real_file
    offset, _, n = frame_offsets(data)[5]  # frame 6: the 5th decision
    with pytest.raises(RecordError, match=rf"frame 6 at byte offset {offset} is garbage"):
        read_record(_damage(data, 6, b"\xff" * n))


def test_a_length_prefix_longer_than_any_varint_is_garbage_not_a_cut_frame(real_file) -> None:
    data, _ = real_file
    offset = frame_offsets(data)[1][0]  # frame 2, the first decision
    with pytest.raises(RecordError, match=rf"frame 2 at byte offset {offset}: its length prefix is garbage"):
        read_record(data[:offset] + b"\xff" * 10)  # ten bytes, each saying another follows
    assert read_record(data[:offset] + b"\xff" * 9).complete is False  # it may yet end: read as cut off


@pytest.mark.parametrize("n", [0, 1, 127, 128, 300, 16_383, 16_384, (1 << 32) - 1, (1 << 64) - 1])
def test_varints_read_back_as_written(n: int) -> None:
    """The one varint codec (referee.wire) writes record frames' length prefixes and reads them back."""
    encoded = varint(n)
    assert read_varint(b"x" + encoded + b"y", 1) == (n, 1 + len(encoded))
    assert read_varint(encoded[:-1], 0) is None  # cut off inside it


def test_frames_in_the_wrong_place_are_refused(real_file) -> None:
    data, full = real_file
    empty = MAGIC + encode_frame(rpb.RecordFrame(header=full.header)) + b"\x00"
    with pytest.raises(RecordError, match=r"frame 2 at byte offset \d+ holds no header, decision or footer"):
        read_record(empty)
    after_footer = data + encode_frame(rpb.RecordFrame(decision=full.decisions[0]))
    with pytest.raises(RecordError, match=rf"frame {len(full.decisions) + 3} at byte offset {len(data)} is a decision "
                       "after the footer"):  # fmt: skip
        read_record(after_footer)
    no_header = MAGIC + encode_frame(rpb.RecordFrame(decision=full.decisions[0]))
    with pytest.raises(RecordError, match="frame 1 at byte offset 8 is a decision; the first frame must be the header"):
        read_record(no_header)
    two_headers = data[: frame_offsets(data)[1][0]] + encode_frame(rpb.RecordFrame(header=full.header))
    with pytest.raises(RecordError, match=r"frame 2 at byte offset \d+ is a second header"):
        read_record(two_headers)
    huge = MAGIC + encode_frame(rpb.RecordFrame(header=full.header)) + b"\xff\xff\xff\xff\x0f"
    with pytest.raises(RecordError, match="claims 4294967295 bytes"):
        read_record(huge)
    newer = rpb.RecordHeader()
    newer.CopyFrom(full.header)
    newer.format_version = 2
    with pytest.raises(RecordError, match="format version 2; this referee reads version 1"):
        read_record(MAGIC + encode_frame(rpb.RecordFrame(header=newer)))


def test_files_that_are_not_records_are_refused_clearly(tmp_path) -> None:
    with pytest.raises(RecordError, match="too short to hold its header"):
        read_record(b"")
    with pytest.raises(RecordError, match="not an Abluxxen game record"):
        read_record(b"# a README, not a record\n")
    text = tmp_path / "notes.abluxx"
    text.write_text("hello")
    with pytest.raises(RecordError, match=r"record .*notes.abluxx is not an Abluxxen game record"):
        read_record(text)
    with pytest.raises(RecordError, match=r"cannot read record .*missing\.abluxx"):
        read_record(tmp_path / "missing.abluxx")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_bytes_are_read_or_refused_never_a_crash(real_file, data) -> None:
    raw, _ = real_file
    damaged = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        damaged[at] = data.draw(st.integers(0, 255))
    try:
        record = read_record(bytes(damaged))
    except RecordError:
        return
    with contextlib.suppress(VerifyError):  # it may not verify, but it must not crash
        verify_record(record)


def test_commitment_is_sha256_of_salt_and_deck() -> None:
    deck = deck_from_seed(4)
    salt = new_salt()
    assert len(salt) == 16 and new_salt() != salt
    assert commitment(salt, deck) == hashlib.sha256(salt + bytes(deck)).digest()
    assert commitment(salt, deck) != commitment(new_salt(), deck)


def test_every_fault_kind_has_one_name_and_one_wording() -> None:
    # the one table (records.build.FAULTS) that the runner's counts, ListGames' filter, the text replay and the
    # viewer all read: a kind added to record.proto without a row would be counted and shown as nothing
    from referee.records.build import FAULT_NAME, FAULT_PB, FAULT_WORDS, FAULTS

    kinds = [k for k in rpb.FaultKind.values() if k != rpb.FAULT_KIND_UNSPECIFIED]
    assert sorted(FAULTS) == sorted(kinds)
    for k in kinds:
        assert FAULT_NAME[k] == rpb.FaultKind.Name(k).removeprefix("FAULT_KIND_").lower()
        assert FAULT_PB[FAULT_NAME[k]] == k and FAULT_WORDS[k]


def test_a_cut_off_last_frame_is_counted_and_a_byte_string_is_named_record(tmp_path: Path) -> None:
    from referee.records import scan_record

    rec = record_selfplay(3, 2)
    full = record_bytes(rec)
    last = encode_frame(rpb.RecordFrame(footer=rec.footer))
    scan = scan_record(full[:-3])
    assert (scan.frames, scan.dropped_bytes, scan.record.complete) == (1 + len(rec.decisions), len(last) - 3, False)
    assert scan_record(full).dropped_bytes == 0 and scan_record(full).frames == 2 + len(rec.decisions)
    with pytest.raises(RecordError) as e:
        scan_record(b"not a record at all")
    assert str(e.value).startswith("record is not an Abluxxen game record: it does not start with the format marker")
    # decisions handed over as their bytes (the match runner's way) make the same file as messages
    as_bytes, as_messages = tmp_path / "b.abluxx", tmp_path / "m.abluxx"
    for path, bytes_too in ((as_bytes, True), (as_messages, False)):
        with RecordWriter(path, rec.header) as w:
            for d in rec.decisions:
                w.decision(d.SerializeToString() if bytes_too else d)
            w.finish(rec.footer)
    assert as_bytes.read_bytes() == as_messages.read_bytes() == full


def test_a_writer_takes_version_0_or_its_own_and_says_when_it_is_finished(tmp_path: Path) -> None:
    rec = record_selfplay(3, 2)
    wrong = rpb.RecordHeader()
    wrong.CopyFrom(rec.header)
    wrong.format_version = 2
    with pytest.raises(RecordError) as e:
        RecordWriter(None, wrong)
    assert str(e.value) == "header says format version 2; this writer writes 1"
    unset = rpb.RecordHeader()
    unset.CopyFrom(rec.header)
    unset.format_version = 0  # unset: the writer writes its own
    w = RecordWriter(tmp_path / "r.abluxx", unset)
    assert w.record.header.format_version == 1 and w.record.header.game_id == rec.header.game_id
    assert w.finished is False and w.record.complete is False
    w.finish(rec.footer)
    assert w.finished is True and w.record.complete is True
    with pytest.raises(RecordError) as e:
        w.decision(rec.decisions[0])
    assert str(e.value) == f"record {rec.header.game_id!r} is already finished or closed"
    assert read_record(tmp_path / "r.abluxx").header.format_version == 1


def test_a_record_of_another_version_or_a_missing_file_is_named(tmp_path: Path) -> None:
    from referee.records import scan_record

    rec = record_selfplay(3, 2)
    other = rpb.GameRecord()
    other.CopyFrom(rec)
    other.header.format_version = 2
    with pytest.raises(RecordError) as e:
        scan_record(record_bytes(other))
    assert str(e.value) == "record is format version 2; this referee reads version 1"
    missing = tmp_path / "missing.abluxx"
    with pytest.raises(RecordError) as e:
        scan_record(missing)
    assert str(e.value) == f"cannot read record {missing}: No such file or directory"


def test_a_frame_may_claim_exactly_the_most_a_frame_holds_and_no_more() -> None:
    """A last frame cut off is dropped even when it claims the largest size allowed; one byte more is damage."""
    from referee.records import scan_record
    from referee.records.recordfile import MAX_FRAME_BYTES
    from referee.wire.encode import varint

    rec = record_selfplay(3, 2)
    head = MAGIC + encode_frame(rpb.RecordFrame(header=rec.header))
    largest = varint(MAX_FRAME_BYTES) + b"\x00" * 10
    scan = scan_record(head + largest)
    assert (scan.frames, scan.dropped_bytes) == (1, len(largest))
    cut_prefix = scan_record(head + b"\x80\x80")  # a length prefix cut off in its middle
    assert (cut_prefix.frames, cut_prefix.dropped_bytes) == (1, 2)
    with pytest.raises(RecordError) as e:
        scan_record(head + varint(MAX_FRAME_BYTES + 1) + b"\x00" * 10)
    assert str(e.value) == (f"frame 2 at byte offset {len(head)} claims {MAX_FRAME_BYTES + 1} bytes, more than a "
                            f"frame may hold ({MAX_FRAME_BYTES}): the file is damaged")  # fmt: skip
