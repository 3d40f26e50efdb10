"""The remote seat (referee/match/remote.py) in the test's own process, against real bot processes over real gRPC:
a write the bot never takes (no HTTP/2 flow-control window, tests/fixtures/stall_bot.py) is a timeout that names
its allowance and retires the seat at once; the transport a seat chooses; what the record keeps of a bot's Hello
and of its time. tests/match/test_stalls.py runs the stalls through the `abluxx` process; these run them here, so
that mutation testing (scripts/mutation.toml, module "seat") sees the seat's code under test."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest

from referee.match import ChannelPool, EntrantRef, GameSpec, TimeControl, exits, play_game
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb

from .helpers import BAD_BOTS, FIXTURES, bot_proc, bot_process, play_one, verify

STALL_BOT = FIXTURES / "stall_bot.py"
# Generous, so that a busy machine never makes the good bots late (5 s each); a stalled write still ends in 5 s.
TC = TimeControl(decision_ms=2000, bank_ms=2000, grace_ms=1000)
ALLOWANCE_MS = TC.decision_ms + TC.bank_ms + TC.grace_ms  # a seat's first decision: nothing of its bank spent
ANSWERED = 3  # decisions the staller answers before its "decision" stall


@pytest.fixture(scope="module")
def good_bot():
    with bot_process("--mode", "ok") as address:
        yield address


def play_with(staller: str, good: str, path, game_id: str) -> rec_pb.GameRecord:
    spec = GameSpec(game_id, 5, (EntrantRef("staller", staller), EntrantRef("good1", good),
                                 EntrantRef("good2", good)), time_control=TC)  # fmt: skip
    play_one(spec, path)
    return verify(path)


@pytest.mark.parametrize("stall", ["start", "decision"])
def test_a_write_the_bot_never_takes_is_a_timeout_that_names_its_allowance_and_retires_the_seat(
    stall, good_bot, tmp_path
) -> None:
    with bot_process("--stall", stall, "--after", str(ANSWERED), script=STALL_BOT) as staller:
        rec = play_with(staller, good_bot, tmp_path / "g.abluxx", f"stall-{stall}")
    mine = [d for d in rec.decisions if d.seat == 0]
    answered = 0 if stall == "start" else ANSWERED
    assert [d.chosen_by for d in mine[:answered]] == [rec_pb.CHOOSER_BOT] * answered
    stalled = mine[answered]
    # one fault, and it retires the seat at once (its stream cannot carry another request), whatever its strikes
    assert stalled.fault == rec_pb.FAULT_KIND_TIMEOUT and stalled.retired, stalled
    assert all(d.fault == rec_pb.FAULT_KIND_RETIRED for d in mine[answered + 1 :])
    assert list(rec.footer.retired) == [0]
    assert "flow-control window" in stalled.fault_detail
    if stall == "decision":
        # the request's write shares the decision's clock: its allowance, in ms, and at least that long waited
        assert stalled.fault_detail == (f"the Play stream took no request for {ALLOWANCE_MS} ms (the bot grants no "
                                        "flow-control window)"), stalled.fault_detail  # fmt: skip
        assert ALLOWANCE_MS * 1000 <= stalled.bot_us < 10 * ALLOWANCE_MS * 1000, stalled.bot_us
    else:
        assert stalled.fault_detail == (
            f"the Play stream to {staller} took no GameStart within "
            f"{TC.decision_ms + TC.grace_ms} ms (the bot grants no flow-control window)"
        )
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in rec.decisions if d.seat != 0)


def test_a_game_over_notice_the_bot_never_takes_still_ends_the_game(good_bot, tmp_path) -> None:
    with bot_process("--stall", "finish", script=STALL_BOT) as staller:
        rec = play_with(staller, good_bot, tmp_path / "g.abluxx", "stall-finish")
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in rec.decisions)
    assert not rec.footer.retired


@pytest.mark.parametrize(
    ("offered", "prefer", "chosen"),
    [
        ("stream,unary", None, "stream"),
        ("stream,unary", "unary", "unary"),
        ("stream", "unary", "stream"),  # a preference the bot does not offer gives way
        ("unary", None, "unary"),
        ("unary", "stream", "unary"),
    ],
)
def test_the_transport_is_the_stream_when_offered_unless_unary_is_preferred_and_offered(
    offered, prefer, chosen, tmp_path
) -> None:
    with bot_process("--mode", "ok", "--transports", offered) as bot:
        spec = GameSpec("transport", 3, (EntrantRef("a", bot), EntrantRef("b", bot)), time_control=TC)
        play_one(spec, tmp_path / "g.abluxx", prefer=prefer)
    rec = verify(tmp_path / "g.abluxx")
    assert [p.transport for p in rec.header.players] == [chosen, chosen]
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in rec.decisions)


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_the_record_keeps_each_bots_hello_and_the_time_it_took(transport, tmp_path) -> None:
    with bot_process("--mode", "ok", "--transports", transport) as bot:
        spec = GameSpec("hello", 4, (EntrantRef("a", bot), EntrantRef("b", bot)), time_control=TC)
        play_one(spec, tmp_path / "g.abluxx")
    rec = verify(tmp_path / "g.abluxx")
    # tests/fixtures/bad_bots.py's Hello: name = its mode, version "1.0", author "tests"
    assert [(p.name, p.version, p.author, p.address) for p in rec.header.players] == [
        ("a", "1.0", "tests", bot),
        ("b", "1.0", "tests", bot),
    ]
    # a bot in another process takes some microseconds to answer, and no answer took its whole allowance
    assert rec.decisions and all(1 <= d.bot_us < ALLOWANCE_MS * 1000 for d in rec.decisions)


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_each_bot_gets_its_game_start_once_before_its_first_request_and_its_game_over_notice(
    transport, tmp_path
) -> None:
    """The GameStart (on the stream; in a unary bot's first request) and the GameOverNotice (on the stream; by the
    GameOver call) reach the bot, once each, with its own seat, in order around its requests."""
    logs = [tmp_path / f"seat{i}.jsonl" for i in range(2)]
    with (
        bot_process("--mode", "ok", "--transports", transport, "--log", str(logs[0])) as a,
        bot_process("--mode", "ok", "--transports", transport, "--log", str(logs[1])) as b,
    ):
        spec = GameSpec("told", 6, (EntrantRef("a", a), EntrantRef("b", b)), time_control=TC)
        result = play_one(spec, tmp_path / "g.abluxx")
    rec = verify(tmp_path / "g.abluxx")
    for seat, log in enumerate(logs):
        seen = [json.loads(line) for line in log.read_text().splitlines()]
        kinds = ["start" if "start" in e else "over" if "over" in e else "request" for e in seen]
        asked = sum(1 for d in rec.decisions if d.seat == seat)
        assert kinds == ["start", *["request"] * asked, "over"], kinds
        start, over = seen[0], seen[-1]
        assert (start["start"], start["seat"], start["decision_ms"]) == ("told", seat, TC.decision_ms)
        assert (over["over"], over["seat"], over["scores"]) == ("told", seat, list(result.scores))


@pytest.mark.parametrize("when", ["before", "during", "opening"])
def test_a_refused_local_bot_is_named_by_how_its_process_ended(when, good_bot, tmp_path) -> None:
    """A local bot process (a command bot: exits.py) that ended before the game began makes its seat UNREACHABLE,
    "... before this game began"; one that dies in the game's Hello, or as its Play stream opens (the GameStart's
    write under way), DISCONNECTED: either way the fault names how the process ended, not only the connection."""
    args = {"before": ["--mode", "ok"], "during": ["--mode", "crash-hello", "--code", "7"],
            "opening": ["--stall", "start", "--then", "exit", "--code", "7"]}[when]  # fmt: skip
    with bot_proc(*args, script=STALL_BOT if when == "opening" else BAD_BOTS) as (proc, address):
        if when == "before":
            proc.kill()
            proc.wait()

        async def go() -> None:
            exits.watch(address, alive=lambda: proc.poll() is None)
            if when == "before":
                exits.exited(address, exits.how_it_ended(proc.returncode))

            async def tell() -> None:  # as the fleet does for a command bot: its end in words, as soon as seen
                while proc.poll() is None:
                    await asyncio.sleep(0.01)
                exits.exited(address, exits.how_it_ended(proc.returncode))

            teller = asyncio.create_task(tell()) if when != "before" else None
            spec = GameSpec(f"ended-{when}", 3, (EntrantRef("local", address), EntrantRef("good1", good_bot)),
                            time_control=TC)  # fmt: skip
            try:
                async with ChannelPool() as pool:
                    await play_game(spec, pool=pool, record_path=tmp_path / "g.abluxx")
            finally:
                exits.forget(address)
                if teller is not None:
                    teller.cancel()

        asyncio.run(go())
    rec = verify(tmp_path / "g.abluxx")
    first = next(d for d in rec.decisions if d.seat == 0)
    assert first.retired, first
    if when == "before":
        assert first.fault == rec_pb.FAULT_KIND_UNREACHABLE, first
        assert first.fault_detail.startswith(
            "the bot's process was killed by signal SIGKILL before this game began ("
        ), first.fault_detail
    else:
        assert first.fault == rec_pb.FAULT_KIND_DISCONNECTED, first
        assert first.fault_detail.startswith("the bot's process exited with code 7 ("), first.fault_detail
    if when == "opening":
        assert first.fault_detail.startswith(f"the bot's process exited with code 7 (could not open the Play stream "
                                             f"to {address}: "), first.fault_detail  # fmt: skip
    assert first.fault_detail.endswith(")") and address in first.fault_detail


def test_a_play_stream_that_fails_before_the_game_start_is_written_leaves_the_seat_unreachable(
    good_bot, tmp_path
) -> None:
    """A bot that goes away as its Play stream opens, the GameStart's write under way (tests/fixtures/stall_bot.py
    --then exit): the seat cannot play, and the fault says the stream could not be opened, to which address."""
    with bot_process("--stall", "start", "--then", "exit", script=STALL_BOT) as gone:
        rec = play_with(gone, good_bot, tmp_path / "g.abluxx", "gone-at-start")
    first = next(d for d in rec.decisions if d.seat == 0)
    assert first.fault == rec_pb.FAULT_KIND_UNREACHABLE and first.retired, first
    said = re.fullmatch(rf"could not open the Play stream to {re.escape(gone)}: [A-Z_]+(: .+)?", first.fault_detail)
    assert said, first.fault_detail
    assert rec.header.players[0].transport == "stream"
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in rec.decisions if d.seat != 0)


def test_a_bot_that_goes_away_while_a_request_is_written_is_disconnected_and_retired(good_bot, tmp_path) -> None:
    """The bot answers ANSWERED decisions, then goes away while the next request's write is under way: that
    decision's fault is the failed write (not a timeout, nor a later one's), and the seat retires at once."""
    with bot_process("--stall", "decision", "--after", str(ANSWERED), "--then", "exit", script=STALL_BOT) as gone:
        rec = play_with(gone, good_bot, tmp_path / "g.abluxx", "gone-mid-game")
    mine = [d for d in rec.decisions if d.seat == 0]
    assert [d.chosen_by for d in mine[:ANSWERED]] == [rec_pb.CHOOSER_BOT] * ANSWERED
    failed = mine[ANSWERED]
    assert failed.fault == rec_pb.FAULT_KIND_DISCONNECTED and failed.retired, failed
    # gRPC's status and its details, as channels.reason words them
    assert re.fullmatch(r"could not send on the Play stream: [A-Z_]+(: .+)?", failed.fault_detail), failed.fault_detail
    assert all(d.fault == rec_pb.FAULT_KIND_RETIRED for d in mine[ANSWERED + 1 :])
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in rec.decisions if d.seat != 0)


def test_a_unary_game_over_call_the_bot_never_answers_still_ends_the_game(good_bot, tmp_path) -> None:
    """GameOver is told, not awaited for ever: a unary bot that takes the notice and never answers the call holds the
    game's end for CLOSE_TIMEOUT_S at most (here: the game ends within 30 s, or the test fails)."""
    log = tmp_path / "over.jsonl"
    with bot_process("--mode", "ok", "--transports", "unary", "--over", "hang", "--log", str(log)) as bot:
        spec = GameSpec("hung-over", 5, (EntrantRef("a", bot), EntrantRef("good", good_bot)), time_control=TC)

        async def go() -> None:
            async with ChannelPool() as pool:
                await asyncio.wait_for(play_game(spec, pool=pool, record_path=tmp_path / "g.abluxx"), 30)

        asyncio.run(go())
    rec = verify(tmp_path / "g.abluxx")
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in rec.decisions)
    assert [json.loads(line).get("over") for line in log.read_text().splitlines()][-1] == "hung-over"


@pytest.mark.parametrize("slow_seat", [1, 0])
def test_a_seats_timer_that_fires_between_its_decisions_lapses_quietly(slow_seat, good_bot, tmp_path, caplog) -> None:
    """One seat answers at once; the other thinks past its allowance. The quick seat's timer, still armed for its
    last deadline (slow seat second: its first decision's; slow seat first: its GameStart's, as its first decision
    comes only after the slow seat's), fires while the slow seat thinks: with nothing of the quick seat waiting it
    lapses, with no error in the organiser's log. The slow seat's timeout is charged the time it waited."""
    # the quick seat's answers have 3 s each (a loaded machine may hold one for a second); the slow one comes 4 s
    # after its 4.5 s allowance, so a stall of the referee that extends the wait does not let it count
    tc = TimeControl(decision_ms=3000, bank_ms=500, grace_ms=1000)
    allowance_us = (tc.decision_ms + tc.bank_ms + tc.grace_ms) * 1000  # its first decision: the whole bank
    with bot_process("--mode", "slow", "--delay-ms", "8500", "--bad-count", "1", "--transports", "stream") as slow:
        entrants = [EntrantRef("good", good_bot), EntrantRef("good", good_bot)]
        entrants[slow_seat] = EntrantRef("slow", slow)
        spec = GameSpec("lapse", 5, tuple(entrants), time_control=tc)
        with caplog.at_level(logging.WARNING, logger="asyncio"):
            play_one(spec, tmp_path / "g.abluxx", prefer="stream")
    rec = verify(tmp_path / "g.abluxx")
    timed_out = next(d for d in rec.decisions if d.seat == slow_seat)
    assert timed_out.fault == rec_pb.FAULT_KIND_TIMEOUT, timed_out
    assert allowance_us <= timed_out.bot_us < 10 * allowance_us, timed_out.bot_us
    quick = 1 - slow_seat
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in rec.decisions if d.seat == quick)
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
