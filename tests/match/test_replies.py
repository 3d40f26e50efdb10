"""What a bot sends on its Play stream beyond the answers it was asked for: a flood of stale replies cannot grow
the referee's memory, and a reply sent before its request does not count (nor give a negative time). Real bot
processes (tests/fixtures/bad_bots.py); the flood test measures the real `abluxx match` process."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from referee.match import EntrantRef, GameSpec, TimeControl
from referee.match.seats import MAX_STALE_REPLIES
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

from .helpers import bot_process, play_one, verify

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
RSS_LIMIT_MIB = 100


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@pytest.mark.parametrize("seq", ["same", "zero"])
def test_a_bot_flooding_stale_replies_is_cut_off_and_the_referee_stays_small(tmp_path: Path, seq: str) -> None:
    # The flooder answers its first decision, then sends 2000 stale copies of about 60 KiB (120 MB) while the
    # other seat thinks for 6 s: before the limit, every one of them waited in the referee's queue. With seq 0 (a
    # reply's unset seq) they matched "no request on the wire" (0) and were queued as answers, uncounted: found by
    # mutation testing (scripts/mutation.toml, module "seat").
    with (
        bot_process("--mode", "flood", "--bad-count", "1", "--flood", "2000", "--flood-seq", seq) as flooder,
        bot_process("--mode", "slow", "--delay-ms", "6000", "--bad-count", "1") as thinker,
    ):
        proc = subprocess.Popen([*ABLUXX, "match", flooder, thinker, "--seed", "3", "--game-id", "g", "--data",
                                 str(tmp_path), "--decision-ms", "10000", "--max-strikes", "100"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        peak = [0.0]

        def watch() -> None:
            while proc.poll() is None:
                peak[0] = max(peak[0], _rss_mib(proc.pid))
                time.sleep(0.01)

        watcher = threading.Thread(target=watch)
        watcher.start()
        _, err = proc.communicate(timeout=120)
        watcher.join()
    assert proc.returncode == 1, err  # a bot seat retired (docs/cli.md)
    assert peak[0] < RSS_LIMIT_MIB, f"the referee grew to {peak[0]:.0f} MiB"
    rec = verify(tmp_path / "records" / "g.abluxx")
    flooder_decisions = [d for d in rec.decisions if d.seat == 0]
    assert flooder_decisions[0].chosen_by == rec_pb.CHOOSER_BOT  # its answer counted
    cut = flooder_decisions[1]  # the flood closed its stream: a fault at its next decision, and it retires
    assert cut.fault == rec_pb.FAULT_KIND_INVALID and cut.retired
    assert f"more than {MAX_STALE_REPLIES} messages" in cut.fault_detail
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT for d in rec.decisions if d.seat == 1)


def test_a_reply_sent_before_its_request_does_not_count(tmp_path: Path) -> None:
    # The early bot answers each request, then guesses the answer to seq + 2 at once. Before the fix a right
    # guess was taken as the answer to a request not yet sent, with bot_us -396 wrapped to 4294966900.
    tc = TimeControl(decision_ms=2000, bank_ms=2000, grace_ms=100)
    with bot_process("--mode", "early") as early, bot_process("--mode", "ok") as good:
        spec = GameSpec("g", 11, (EntrantRef("early", address=early), EntrantRef("ok", address=good)),
                        time_control=tc, max_strikes=1000)  # fmt: skip
        play_one(spec, tmp_path / "g.abluxx")
    rec = verify(tmp_path / "g.abluxx")
    allowance_us = (tc.decision_ms + tc.bank_ms + tc.grace_ms) * 1000
    assert all(0 <= d.bot_us <= allowance_us for d in rec.decisions)
    early_decisions = [d for d in rec.decisions if d.seat == 0]
    guessed = [d for d in early_decisions if d.fault == rec_pb.FAULT_KIND_INVALID]
    assert guessed and all("answers no question" in d.fault_detail for d in guessed)  # an early reply is a fault
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT for d in rec.decisions if d.seat == 1)


def _stale_flood(tmp_path: Path, count: int) -> list[rec_pb.DecisionRecord]:
    """The flooder's decisions in a game where it sends ``count`` stale replies after its first answer, while the
    other seat thinks 4 s (time for all of them to arrive before the flooder's next request, even from a flooder a
    loaded machine holds up for seconds)."""
    tc = TimeControl(decision_ms=10_000, bank_ms=0, grace_ms=100)
    with (
        bot_process("--mode", "flood", "--bad-count", "1", "--flood", str(count)) as flooder,
        bot_process("--mode", "slow", "--delay-ms", "4000", "--bad-count", "1") as thinker,
    ):
        spec = GameSpec("g", 3, (EntrantRef("flood", address=flooder), EntrantRef("slow", address=thinker)),
                        time_control=tc, max_strikes=100)  # fmt: skip
        play_one(spec, tmp_path / "g.abluxx")
    return [d for d in verify(tmp_path / "g.abluxx").decisions if d.seat == 0]


def test_the_stale_reply_limit_keeps_the_stream_at_the_limit_and_closes_it_one_past(tmp_path: Path) -> None:
    # issue 22 item 2: MAX_STALE_REPLIES between two requests keep the stream; one more closes it
    kept = _stale_flood(tmp_path / "at", MAX_STALE_REPLIES)
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == rec_pb.FAULT_KIND_UNSPECIFIED for d in kept)
    cut = _stale_flood(tmp_path / "over", MAX_STALE_REPLIES + 1)
    assert cut[0].chosen_by == rec_pb.CHOOSER_BOT
    assert cut[1].fault == rec_pb.FAULT_KIND_INVALID and cut[1].retired
    assert f"more than {MAX_STALE_REPLIES} messages" in cut[1].fault_detail
    assert MAX_STALE_REPLIES == 8  # the documented limit (docs/security.md)


@pytest.mark.parametrize(("guesses", "seq"), [(1, 2), (MAX_STALE_REPLIES, 2), (MAX_STALE_REPLIES + 1, 2), (1, 1)])
def test_answers_sent_before_the_first_request_are_faults_and_too_many_close_the_stream(
    tmp_path: Path, guesses: int, seq: int
) -> None:
    # The eager bot (seat 1) sends its guesses of the answer to its first request (seq 2: seat 0's first decision
    # is seq 1), or to seat 0's (seq 1), as soon as its GameStart comes, while seat 0 thinks 3 s: before any
    # request to it, even from an eager bot a loaded machine holds up for seconds. None of them counts as the answer
    # (nothing was asked yet), each leaves a fault for a decision, and one more than MAX_STALE_REPLIES closes the
    # stream before the first decision, as between two requests.
    tc = TimeControl(decision_ms=5000, bank_ms=2000, grace_ms=1000)
    with (
        bot_process("--mode", "slow", "--delay-ms", "3000", "--bad-count", "1") as thinker,
        bot_process("--mode", "eager", "--flood", str(guesses), "--guess-seq", str(seq)) as eager,
    ):
        spec = GameSpec("g", 11, (EntrantRef("slow", address=thinker), EntrantRef("eager", address=eager)),
                        time_control=tc, max_strikes=100)  # fmt: skip
        play_one(spec, tmp_path / "g.abluxx")
    rec = verify(tmp_path / "g.abluxx")
    mine = [d for d in rec.decisions if d.seat == 1]
    assert mine[0].seq == 2
    if guesses > MAX_STALE_REPLIES:
        assert mine[0].fault == rec_pb.FAULT_KIND_INVALID and mine[0].retired, mine[0]
        assert mine[0].fault_detail == (f"more than {MAX_STALE_REPLIES} messages that answer no request since the "
                                        "last one; the Play stream is closed")  # fmt: skip
        return
    faulted = mine[:guesses]  # each guess leaves its fault for one decision, in turn
    assert all(d.fault == rec_pb.FAULT_KIND_INVALID and not d.retired for d in faulted), faulted
    assert all(
        d.fault_detail == f"reply with seq {seq} came before any request with that seq: it answers no question"
        for d in faulted
    )
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT for d in mine[guesses:])
    assert not rec.footer.retired
