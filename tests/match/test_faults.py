"""Every way a bot can fail, each against a real misbehaving bot process over real gRPC: the game finishes, the
fault is recorded with its kind, the other seats play all their own decisions, and the record verifies."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json

import pytest

from referee.log import configure
from referee.match import ChannelPool, EntrantRef, GameSpec, TimeControl, play_game
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

from .helpers import bot_process, free_address, play_one, verify

# Limits are generous, so a noisy machine does not make a good bot late; the timing cases use TIMED, where a slow
# bot (SLOW_MS) times out at 2500 ms (decision + bank + grace), then at 2000 ms once its bank is spent. The margins
# are the point: a slow answer is 3 s past its limit, a good one has 2.5 s, and only a stall of the referee's own
# event loop of at least the grace (1 s) makes a timeout the referee's fault (clock.py), so a busy 2-core machine
# neither makes a good bot late nor turns a bot's timeout into a referee fault.
TC = TimeControl(decision_ms=2000, bank_ms=2000, grace_ms=1000)
TIMED = TimeControl(decision_ms=1000, bank_ms=500, grace_ms=1000)
SLOW_MS = "5500"
TIMED_MODES = {"slow", "hang"}
BAD = 1  # the misbehaving seat; seats 0 and 2 are well-behaved bots

F = rec_pb
SOMETIMES_SLOW = ["--mode", "slow", "--delay-ms", SLOW_MS, "--bad-count", "1", "--after", "2"]
STREAM_CASES = [
    # (id, bad_bots.py args, expected fault or 0, expect the seat retired)
    ("slow-sometimes", SOMETIMES_SLOW, F.FAULT_KIND_TIMEOUT, False),
    ("slow-always", ["--mode", "slow", "--delay-ms", SLOW_MS], F.FAULT_KIND_TIMEOUT, True),
    ("illegal", ["--mode", "illegal"], F.FAULT_KIND_INVALID, True),
    ("out-of-range", ["--mode", "out-of-range"], F.FAULT_KIND_INVALID, True),
    ("bad-seq", ["--mode", "bad-seq"], F.FAULT_KIND_INVALID, True),
    ("twice", ["--mode", "twice"], 0, False),
    ("stale", ["--mode", "stale"], 0, False),
    ("action", ["--mode", "action"], 0, False),
    ("garbage", ["--mode", "garbage"], F.FAULT_KIND_MALFORMED, True),
    ("huge", ["--mode", "huge", "--after", "3"], F.FAULT_KIND_MALFORMED, True),
    ("crash", ["--mode", "crash", "--after", "5"], F.FAULT_KIND_DISCONNECTED, True),
    ("hang", ["--mode", "hang"], F.FAULT_KIND_TIMEOUT, True),
    ("close", ["--mode", "close", "--after", "5"], F.FAULT_KIND_DISCONNECTED, True),
    ("wrong-version", ["--mode", "wrong-version"], F.FAULT_KIND_UNREACHABLE, True),
]
UNARY_CASES = [
    ("slow-sometimes", SOMETIMES_SLOW, F.FAULT_KIND_TIMEOUT, False),
    ("illegal", ["--mode", "illegal", "--bad-count", "2"], F.FAULT_KIND_INVALID, False),
    ("out-of-range", ["--mode", "out-of-range"], F.FAULT_KIND_INVALID, True),
    ("garbage", ["--mode", "garbage"], F.FAULT_KIND_MALFORMED, True),
    ("huge", ["--mode", "huge"], F.FAULT_KIND_MALFORMED, True),
    ("crash", ["--mode", "crash", "--after", "5"], F.FAULT_KIND_DISCONNECTED, True),
    ("hang", ["--mode", "hang"], F.FAULT_KIND_TIMEOUT, True),
    ("bad-seq", ["--mode", "bad-seq"], F.FAULT_KIND_INVALID, True),
    ("aborts", ["--mode", "close", "--bad-count", "1"], F.FAULT_KIND_RPC_ERROR, False),
]
# How the first fault of some cases begins, by transport and case (the rest of a detail names gRPC's status)
ALLOWED_MS = TIMED.decision_ms + TIMED.bank_ms + TIMED.grace_ms  # a hanging bot's first request: a full bank
FIRST_DETAIL = {
    ("stream", "close"): "the bot closed the Play stream",
    ("stream", "crash"): "the Play stream failed: UNAVAILABLE",
    ("stream", "hang"): f"no reply to seq {{seq}} within {ALLOWED_MS} ms",
    ("unary", "aborts"): "Decide failed: ABORTED: closing",
    ("unary", "crash"): "Decide failed: UNAVAILABLE",
}


def first_detail(rec: rec_pb.GameRecord, transport: str, name: str) -> None:
    if (want := FIRST_DETAIL.get((transport, name))) is None:
        return
    # the first fault that costs a strike (the referee's own stalls on a loaded machine cost none)
    first = next(d for d in rec.decisions if d.seat == BAD and d.fault not in (0, rec_pb.FAULT_KIND_REFEREE))
    assert first.fault_detail.startswith(want.format(seq=first.seq)), first.fault_detail


@pytest.fixture(scope="module")
def good_bot():
    with bot_process("--mode", "ok") as address:
        yield address


def play(spec: GameSpec, path) -> object:
    if spec.entrants[BAD].name.split("-")[0] in TIMED_MODES:
        spec = dataclasses.replace(spec, time_control=TIMED)
    return play_one(spec, path)


def check(result, path, expected_fault: int, expect_retired: bool, bad_name: str) -> rec_pb.GameRecord:
    rec = verify(path)  # the game finished and its record replays exactly
    assert result.decisions == len(rec.decisions)
    by_seat: dict[int, list] = {0: [], 1: [], 2: []}
    for d in rec.decisions:
        by_seat[d.seat].append(d)
    for seat in (0, 2):  # the other seats played every one of their decisions themselves
        assert by_seat[seat], f"seat {seat} had no decisions"
        assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in by_seat[seat])
        assert not result.seats[seat].retired
    bad = by_seat[BAD]
    for d in bad:  # a short reason in words: never a Python repr, a gRPC debug string, or a second line
        assert not any(w in d.fault_detail for w in ("object at 0x", "AioRpcError", "debug_error_string", "\n")), (
            d.fault_detail
        )
    # the time the bot took, as the referee saw it: some microseconds for every answer from another process, and
    # for a timeout at least the decision's own time (its allowance adds the bank and the grace)
    assert all(d.bot_us >= 1 for d in rec.decisions if d.chosen_by == rec_pb.CHOOSER_BOT)
    timed_out = [d for d in bad if d.fault == rec_pb.FAULT_KIND_TIMEOUT]
    assert all(d.bot_us >= 1000 * min(TC.decision_ms, TIMED.decision_ms) for d in timed_out), timed_out
    faults = [d.fault for d in bad if d.fault not in (0, rec_pb.FAULT_KIND_RETIRED)]
    if expected_fault == 0:
        assert faults == [], [d.fault_detail for d in bad if d.fault]
        assert all(d.chosen_by == rec_pb.CHOOSER_BOT for d in bad)
    else:
        details = [d.fault_detail for d in bad if d.fault]
        assert expected_fault in faults, f"{bad_name}: recorded faults {faults}, details {details}"
        faulted = [d for d in bad if d.fault]
        assert all(d.chosen_by == rec_pb.CHOOSER_FALLBACK and d.fault_detail for d in faulted)
    assert result.seats[BAD].retired == expect_retired
    assert any(d.retired for d in bad) == expect_retired
    assert list(rec.footer.retired) == ([BAD] if expect_retired else [])
    if expect_retired:
        assert result.places[BAD] == 3, "a retired seat places last"
        after = bad[[d.retired for d in bad].index(True) + 1 :]
        assert all(d.fault == rec_pb.FAULT_KIND_RETIRED and d.chosen_by == rec_pb.CHOOSER_FALLBACK for d in after)
    return rec


@pytest.mark.parametrize("case", STREAM_CASES, ids=[c[0] for c in STREAM_CASES])
def test_stream_bot_faults(case, good_bot, tmp_path):
    name, args, fault, retired = case
    with bot_process(*args, "--transports", "stream") as bad:
        spec = GameSpec(f"stream-{name}", 7, (EntrantRef("good0", good_bot), EntrantRef(name, bad),
                                              EntrantRef("good2", good_bot)), time_control=TC)  # fmt: skip
        result = play(spec, tmp_path / "g.abluxx")
    rec = check(result, tmp_path / "g.abluxx", fault, retired, name)
    first_detail(rec, "stream", name)
    expected_transport = "" if name == "wrong-version" else "stream"
    assert rec.header.players[BAD].transport == expected_transport


@pytest.mark.parametrize("case", UNARY_CASES, ids=[c[0] for c in UNARY_CASES])
def test_unary_bot_faults(case, good_bot, tmp_path):
    name, args, fault, retired = case
    with bot_process(*args, "--transports", "unary") as bad:
        spec = GameSpec(f"unary-{name}", 8, (EntrantRef("good0", good_bot), EntrantRef(name, bad),
                                             EntrantRef("good2", good_bot)), time_control=TC)  # fmt: skip
        result = play(spec, tmp_path / "g.abluxx")
    rec = check(result, tmp_path / "g.abluxx", fault, retired, name)
    first_detail(rec, "unary", name)
    assert rec.header.players[BAD].transport == "unary"
    # every faulty call has its own time in the record, as an answer has: some microseconds, and not more than twice
    # the longest allowance (TC's, with a full bank)
    called = [d for d in rec.decisions if d.seat == BAD and d.fault not in (0, F.FAULT_KIND_RETIRED)]
    longest_us = (TC.decision_ms + TC.bank_ms + TC.grace_ms) * 1000
    assert all(1 <= d.bot_us <= 2 * longest_us for d in called), [(d.fault, d.bot_us) for d in called]


@pytest.mark.parametrize("transport", ["stream", "unary"])
@pytest.mark.parametrize("strikes", [2, 3], ids=["K-1", "K"])
def test_the_kth_strike_retires_the_seat(strikes, transport, good_bot, tmp_path):
    """A bot that faults exactly K-1 times (every other decision) plays on to the end; exactly K times retires."""
    bad_args = ["--mode", "out-of-range", "--bad-count", str(strikes), "--every", "2", "--transports", transport]
    with bot_process(*bad_args) as bad:
        spec = GameSpec("strikes", 7, (EntrantRef("good0", good_bot), EntrantRef("oor", bad),
                                       EntrantRef("good2", good_bot)), time_control=TC, max_strikes=3)  # fmt: skip
        result = play_one(spec, tmp_path / "g.abluxx")
    retires = strikes == spec.max_strikes
    rec = check(result, tmp_path / "g.abluxx", F.FAULT_KIND_INVALID, retires, "oor")
    bad_decisions = [d for d in rec.decisions if d.seat == BAD]
    assert [d.fault for d in bad_decisions].count(F.FAULT_KIND_INVALID) == strikes
    last_fault = max(i for i, d in enumerate(bad_decisions) if d.fault == F.FAULT_KIND_INVALID)
    assert bad_decisions[last_fault].retired == retires
    if not retires:  # the bot plays its own decisions again after its last strike
        assert any(d.chosen_by == rec_pb.CHOOSER_BOT for d in bad_decisions[last_fault + 1 :])


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_a_timeout_empties_the_bank(transport, good_bot, tmp_path):
    """A timeout spends the whole bank: the record says 0 left, and so does the bot's next request."""
    requests = tmp_path / "requests.jsonl"
    with bot_process(*SOMETIMES_SLOW, "--transports", transport, "--log", str(requests)) as bad:
        spec = GameSpec("bank", 7, (EntrantRef("good0", good_bot), EntrantRef("slow", bad),
                                    EntrantRef("good2", good_bot)), time_control=TIMED)  # fmt: skip
        result = play_one(spec, tmp_path / "g.abluxx")
    rec = check(result, tmp_path / "g.abluxx", F.FAULT_KIND_TIMEOUT, False, "slow")
    [timeout] = [d for d in rec.decisions if d.fault == F.FAULT_KIND_TIMEOUT]
    assert timeout.bank_left_ms == 0
    asked = [r for r in map(json.loads, requests.read_text().splitlines()) if "seq" in r]  # the requests
    seqs = [r["seq"] for r in asked]
    at = seqs.index(timeout.seq)
    assert asked[at]["bank_ms"] == TIMED.bank_ms, "the bank was full before the slow decision"
    assert asked[at + 1]["bank_ms"] == 0, "the next request still offers a bank the timeout spent"


def test_nothing_listening_retires_the_seat_from_the_start(good_bot, tmp_path):
    spec = GameSpec("refused", 9, (EntrantRef("good0", good_bot), EntrantRef("nobody", free_address()),
                                   EntrantRef("good2", good_bot)), time_control=TC)  # fmt: skip
    result = play(spec, tmp_path / "g.abluxx")
    rec = check(result, tmp_path / "g.abluxx", rec_pb.FAULT_KIND_UNREACHABLE, True, "refused")
    first = next(d for d in rec.decisions if d.seat == BAD)
    assert first.retired and first.fault == rec_pb.FAULT_KIND_UNREACHABLE and "Hello" in first.fault_detail
    # the record names the seat's address, and no version, author or transport, as no bot told any
    player = rec.header.players[BAD]
    assert (player.address, player.version, player.author, player.transport) == (spec.entrants[BAD].address, "", "", "")


def test_one_log_line_per_fault(good_bot, tmp_path):
    out = io.StringIO()
    configure("info", json=True, stream=out)
    try:
        with bot_process("--mode", "out-of-range", "--bad-count", "2", "--transports", "stream") as bad:
            spec = GameSpec("logged", 3, (EntrantRef("good0", good_bot), EntrantRef("oor", bad),
                                          EntrantRef("good2", good_bot)), time_control=TC)  # fmt: skip
            result = play(spec, tmp_path / "g.abluxx")
    finally:
        configure("info")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    faults = [x for x in lines if x["event"] == "fault"]
    assert len(faults) == 2
    assert all(x["game_id"] == "logged" and x["seat"] == BAD and x["bot"] == bad and x["fault"] == "invalid"
               and "out of range" in x["detail"] for x in faults)  # fmt: skip
    assert len(lines) < 5, "no line per decision at the default level"
    assert result.seats[BAD].faults == {"invalid": 2}


def test_a_record_that_cannot_be_opened_leaves_no_stream_open(good_bot, tmp_path):
    (tmp_path / "file").write_text("not a directory")
    spec = GameSpec("unwritable", 3, (EntrantRef("good0", good_bot), EntrantRef("good1", good_bot)), time_control=TC)

    async def go() -> list[asyncio.Task]:
        async with ChannelPool() as pool:
            with pytest.raises(OSError):
                await play_game(spec, pool=pool, record_path=tmp_path / "file" / "g.abluxx")
            await asyncio.sleep(0.2)  # a cancelled stream reader ends on a later turn of the loop
            return [t for t in asyncio.all_tasks() if "RemoteSeat._read" in repr(t.get_coro())]

    assert asyncio.run(go()) == [], "the Play streams opened before the record failed are still being read"


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_a_bot_error_is_recorded_in_words_bounded_and_on_one_line(transport, good_bot, tmp_path):
    # bot.proto DecisionReply.error: the referee keeps the first 200 characters, printable, in the fault detail
    with bot_process("--mode", "error", "--bad-count", "1", "--transports", transport) as bad:
        spec = GameSpec(f"error-{transport}", 7, (EntrantRef("good0", good_bot), EntrantRef("error", bad),
                                                  EntrantRef("good2", good_bot)), time_control=TC)  # fmt: skip
        result = play(spec, tmp_path / "g.abluxx")
    rec = check(result, tmp_path / "g.abluxx", F.FAULT_KIND_INVALID, False, "error")
    (faulted,) = [d for d in rec.decisions if d.fault]
    assert faulted.fault_detail == "the bot raised KeyError: 7 forged line " + "x" * 176 + "…"
    assert result.seats[BAD].first_fault == f"invalid at decision {faulted.seq}: {faulted.fault_detail}"


def test_a_crashed_seat_retires_at_its_first_fatal_fault_whatever_its_strikes_left(good_bot, tmp_path):
    # issue 22 lucky catch: a seat whose Play stream is gone cannot answer any more and retires at once, not after
    # max_strikes faults (a unary bot's failed Decide is one call's fault: the next call may reach it)
    with bot_process("--mode", "crash", "--after", "5", "--transports", "stream") as bad:
        spec = GameSpec("crash", 7, (EntrantRef("good0", good_bot), EntrantRef("crash", bad),
                                     EntrantRef("good2", good_bot)), time_control=TC, max_strikes=100)  # fmt: skip
        result = play_one(spec, tmp_path / "g.abluxx")
    rec = check(result, tmp_path / "g.abluxx", F.FAULT_KIND_DISCONNECTED, True, "crash")
    bad_decisions = [d for d in rec.decisions if d.seat == BAD]
    assert [d.chosen_by for d in bad_decisions[:5]] == [rec_pb.CHOOSER_BOT] * 5
    crashed = bad_decisions[5]
    assert crashed.fault == F.FAULT_KIND_DISCONNECTED and crashed.retired, crashed
    assert all(d.fault == F.FAULT_KIND_RETIRED for d in bad_decisions[6:])
