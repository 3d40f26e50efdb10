"""A fault's detail tells an exception as a short reason: status and details for gRPC, never a repr."""

from __future__ import annotations

import asyncio

import grpc
from grpc.aio import AioRpcError, Metadata

from referee.match.channels import reason


def test_a_grpc_error_is_its_status_and_details() -> None:
    e = AioRpcError(grpc.StatusCode.UNAVAILABLE, Metadata(), Metadata(), details="Socket closed",
                    debug_error_string="UNKNOWN:Error received from peer {grpc_status:14}")  # fmt: skip
    assert reason(e) == "UNAVAILABLE: Socket closed"


def test_anything_else_is_its_type_and_words_without_an_objects_repr() -> None:
    class ExecuteBatchError(Exception):
        pass

    quoted = ExecuteBatchError('Failed "execute_batch": (<grpc._cython.cygrpc.SendMessageOperation object at 0x7f3a>,)')
    assert reason(quoted) == 'ExecuteBatchError: Failed "execute_batch"'
    assert reason(asyncio.InvalidStateError()) == "the call had already ended"
    assert reason(ValueError("x\nforged")) == "ValueError: x forged"
    assert len(reason(ValueError("y" * 500))) == 200
