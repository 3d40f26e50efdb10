"""What a Hello outside a game (SubmitBot, a run's start-up check, the naming Hello: ``hello``) asks, what it takes
in, and the words of its refusals, which organisers and authors read: the bot's address, the gRPC status, and the
reason, never a repr. Real gRPC servers in this process, whose answers are raw bytes."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from referee.match.hello import HelloError, hello
from referee.match.seats import MAX_RECEIVE_BYTES
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.wire import varint

from .helpers import free_address, raw_hello_bot

GOOD = bot_pb.HelloReply(protocol_version=bot_pb.PROTOCOL_VERSION_1, name="b", version="1", author="me",
                         transports=[bot_pb.TRANSPORT_STREAM])  # fmt: skip


def _refusal(address: str) -> HelloError:
    with pytest.raises(HelloError) as refused:
        asyncio.run(hello(address))
    return refused.value


def test_hello_asks_in_protocol_version_1() -> None:
    with raw_hello_bot(lambda request, context: GOOD.SerializeToString()) as (address, got):
        assert asyncio.run(hello(address)).name == "b"
    assert len(got) == 1 and bot_pb.HelloRequest.FromString(got[0]).protocol_version == bot_pb.PROTOCOL_VERSION_1


def test_a_hello_reply_over_the_receive_limit_is_refused_outside_a_game_too() -> None:
    """A reply padded with an unknown field passes every text cap, so only the channel's receive limit keeps a
    SubmitBot or a start-up check from taking in megabytes (gRPC's own default is 4 MiB)."""

    def padded(size: int) -> bytes:
        field_99 = b"\x9a\x06"  # field 99, length-delimited: a field HelloReply does not have
        pad = size - len(GOOD.SerializeToString()) - len(field_99) - 3
        return GOOD.SerializeToString() + field_99 + varint(pad) + b"x" * pad

    with raw_hello_bot(lambda request, context: padded(MAX_RECEIVE_BYTES - 16)) as (address, _):
        assert asyncio.run(hello(address)).name == "b"
    with raw_hello_bot(lambda request, context: padded(MAX_RECEIVE_BYTES + 1024)) as (address, _):
        refused = _refusal(address)
    assert refused.code == grpc.StatusCode.RESOURCE_EXHAUSTED and refused.address == address


def test_a_reply_that_does_not_decode_is_refused_in_words_naming_the_bot() -> None:
    with raw_hello_bot(lambda request, context: b"\xff" * 11) as (address, _):
        refused = _refusal(address)
    assert (refused.address, refused.code) == (address, None)
    assert str(refused) == (f"the bot at {address}: its Hello reply is not a HelloReply (the bytes do not decode: bad "
                            "protobuf or a string that is not UTF-8)")  # fmt: skip


def test_no_known_transport_is_refused_showing_at_most_eight_of_those_offered() -> None:
    offered = bot_pb.HelloReply(protocol_version=bot_pb.PROTOCOL_VERSION_1, name="b", transports=range(7, 17))
    with raw_hello_bot(lambda request, context: offered.SerializeToString()) as (address, _):
        refused = _refusal(address)
    assert str(refused) == (f"the bot at {address}: its Hello offers no known transport (transports=[7, 8, 9, 10, "
                            "11, 12, 13, 14]); offer TRANSPORT_STREAM (Play) or TRANSPORT_UNARY (Decide)")  # fmt: skip


def test_nothing_listening_is_unreachable_in_words_and_asked_once() -> None:
    """Not a late answer: the words are gRPC's, not "no answer within 1 s", and there is no second try."""
    address = free_address()
    refused = _refusal(address)
    assert refused.code == grpc.StatusCode.UNAVAILABLE and refused.address == address
    assert str(refused).startswith(f"cannot reach a bot at {address}: Hello failed: UNAVAILABLE: ")
    assert "no answer within" not in str(refused)


@pytest.mark.parametrize(
    ("details", "why"), [("", "PERMISSION_DENIED"), ("no entry for box X", "PERMISSION_DENIED: no entry for box X")]
)
def test_a_refusal_reads_as_its_status_and_the_bots_details(details: str, why: str) -> None:
    """The status name and the bot's own details, nothing trailing when it gave none; asked once."""

    def deny(request: bytes, context: grpc.ServicerContext) -> bytes:
        context.abort(grpc.StatusCode.PERMISSION_DENIED, details)
        raise AssertionError("abort returns nothing")

    with raw_hello_bot(deny) as (address, got):
        refused = _refusal(address)
    assert len(got) == 1  # a refusal that is not a late answer is not asked again
    assert (refused.why, str(refused)) == (why, f"cannot reach a bot at {address}: Hello failed: {why}")
