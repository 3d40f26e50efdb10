"""One Hello for every check: the match, a tournament's start-up check and SubmitBot ask it alike, with one
timeout (bot.proto: answer within a second) and the same checks of the reply."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import pytest

from referee.fleet import EntrantError, check_reachable
from referee.match import ChannelPool, RemoteSeat, SeatError
from referee.match.hello import HELLO_TIMEOUT_S, HELLO_TRIES, MAX_HELLO_TEXT_BYTES, HelloError, hello
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.service.submit import check_hello

from .helpers import bot_process, raw_hello_bot


def _all_three(address: str) -> tuple[BaseException | None, object, BaseException | None]:
    """What the match's seat, SubmitBot's check and the tournament's start-up check make of the bot."""

    async def go() -> tuple[BaseException | None, object, BaseException | None]:
        async with ChannelPool() as pool:
            seat_error: BaseException | None = None
            try:
                await RemoteSeat("b", address, pool).connect()
            except SeatError as e:
                seat_error = e
        submitted = await check_hello(address)
        try:
            await check_reachable({"b": address})
        except EntrantError as e:
            return seat_error, submitted, e
        return seat_error, submitted, None

    return asyncio.run(go())


def test_a_bot_slower_than_the_contracts_second_fails_every_hello_alike() -> None:
    """The tournament's check allowed 5 s and SubmitBot's 3 s, so a bot the match retired at once passed both."""
    assert HELLO_TIMEOUT_S == 1.0  # bot.proto and docs/writing-a-bot.md: "answer within a second"
    with bot_process("--mode", "slow-hello", "--delay-ms", "2500") as address:
        seat_error, submitted, entrant_error = _all_three(address)
    assert isinstance(submitted, ref_pb.Refusal) and submitted.reason == "unreachable"
    assert entrant_error is not None and "DEADLINE_EXCEEDED: no answer within 1 s" in str(entrant_error)
    assert isinstance(seat_error, SeatError) and seat_error.fault == rec_pb.FAULT_KIND_UNREACHABLE
    assert "DEADLINE_EXCEEDED: no answer within 1 s" in str(seat_error)


def test_a_check_outside_a_game_asks_again_when_an_answer_is_late_and_a_game_does_not() -> None:
    """On a busy machine one Hello can be late. The checks outside a game (SubmitBot, the start-up check, the
    naming Hello) ask again, HELLO_TRIES times in all, so a bot late on its first two Hellos passes them; a game's
    Hello is asked once, so its seat is unreachable at the first late answer. A bot late on its first three Hellos
    fails every check."""
    assert HELLO_TRIES == 3
    with bot_process("--mode", "slow-hello", "--delay-ms", "1500", "--bad-count", "2") as address:
        assert asyncio.run(hello(address)).name == "slow-hello"  # late twice, then in time
    with bot_process("--mode", "slow-hello", "--delay-ms", "1500", "--bad-count", "2") as address:
        seat_error, submitted, entrant_error = _all_three(address)  # the seat's Hello was the first, and late
    assert isinstance(seat_error, SeatError) and "DEADLINE_EXCEEDED" in str(seat_error)
    assert not isinstance(submitted, ref_pb.Refusal) and entrant_error is None
    with bot_process("--mode", "slow-hello", "--delay-ms", "1500", "--bad-count", "3") as address:
        with pytest.raises(HelloError) as late:
            asyncio.run(hello(address))
        assert asyncio.run(hello(address)).name == "slow-hello"  # its fourth Hello is in time
    assert (late.value.code, late.value.address) == (grpc.StatusCode.DEADLINE_EXCEEDED, address)
    assert str(late.value) == f"cannot reach a bot at {address}: Hello failed: DEADLINE_EXCEEDED: no answer within 1 s"


def test_a_bot_that_offers_no_transport_fails_every_hello_alike() -> None:
    """The tournament's check did not look at the transports: such a bot started and then lost every game."""
    with bot_process("--transports", "") as address:
        seat_error, submitted, entrant_error = _all_three(address)
    for said in (str(entrant_error), submitted.reason, str(seat_error)):  # type: ignore[attr-defined]
        assert "its Hello offers no known transport" in said, said


def test_a_bot_in_time_passes_and_says_who_it_is() -> None:
    with bot_process("--mode", "slow-hello", "--delay-ms", "100") as address:
        assert asyncio.run(hello(address)).name == "slow-hello"
        seat_error, submitted, entrant_error = _all_three(address)
    assert seat_error is None and entrant_error is None and not isinstance(submitted, ref_pb.Refusal)


@contextmanager
def _hello_bot(**texts: str) -> Iterator[str]:
    """A real gRPC bot whose Hello says ``texts`` (name, version, author); it answers nothing else."""
    fields = {"name": "b", "version": "1", "author": "me", **texts}
    reply = bot_pb.HelloReply(protocol_version=bot_pb.PROTOCOL_VERSION_1, transports=[bot_pb.TRANSPORT_STREAM],
                              **fields)  # fmt: skip
    with raw_hello_bot(lambda request, context: reply.SerializeToString()) as (address, _):
        yield address


@pytest.mark.parametrize("field", ["name", "version", "author"])
def test_every_hello_text_is_capped_in_bytes_at_the_limit(field: str) -> None:
    # issue 22 item 3: the cap holds for each of the three texts, counted in UTF-8 bytes, not characters
    with _hello_bot(**{field: "x" * MAX_HELLO_TEXT_BYTES}) as address:
        assert getattr(asyncio.run(hello(address)), field) == "x" * MAX_HELLO_TEXT_BYTES
    over = "é" * (MAX_HELLO_TEXT_BYTES // 2 + 1)  # fewer characters than the cap, more bytes
    with _hello_bot(**{field: over}) as address, pytest.raises(HelloError) as refused:
        asyncio.run(hello(address))
    assert refused.value.why == f"its Hello {field} is over {MAX_HELLO_TEXT_BYTES} bytes"
