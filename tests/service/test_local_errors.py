"""A ``local`` error (its text may name the server's files or its bots' addresses) reaches a remote caller as its
status only; the server's log has the text (docs/service.md#errors). Issue 22 item 5: no call in the suite raised
one, so telling every caller the text passed. Here a real gRPC server runs the service's own error handling
(``base.handle``, ``base.handle_stream``) around calls that raise."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from referee.errors import Precondition
from referee.fleet import EntrantError
from referee.service.base import handle, handle_stream

SECRET = "/srv/abluxx/data/bots/alice.sock"


class _Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def exception(self, event: str, **kw: Any) -> None:
        self.lines.append((event, kw))


class _Service:
    """Calls that fail as a service call can: with a local error, or with one whose text is for the caller."""

    def __init__(self) -> None:
        self.log = _Log()

    @handle
    async def Local(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        raise EntrantError(f"bot alice at {SECRET} did not answer")

    @handle
    async def Told(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        raise Precondition("tournament t-1 is finished")

    @handle_stream
    async def LocalStream(self, request: bytes, context: grpc.aio.ServicerContext) -> Any:
        yield b"one"
        raise EntrantError(f"bot alice at {SECRET} did not answer")


async def _call_all() -> tuple[dict[str, grpc.aio.AioRpcError], _Service]:
    service = _Service()
    handlers = {
        "Local": grpc.unary_unary_rpc_method_handler(service.Local),
        "Told": grpc.unary_unary_rpc_method_handler(service.Told),
        "LocalStream": grpc.unary_stream_rpc_method_handler(service.LocalStream),
    }
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("t.T", handlers)])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    errors: dict[str, grpc.aio.AioRpcError] = {}
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            for name in ("Local", "Told"):
                with pytest.raises(grpc.aio.AioRpcError) as e:
                    await channel.unary_unary(f"/t.T/{name}")(b"", timeout=30)
                errors[name] = e.value
            with pytest.raises(grpc.aio.AioRpcError) as e:
                async for _ in channel.unary_stream("/t.T/LocalStream")(b"", timeout=30):
                    pass
            errors["LocalStream"] = e.value
    finally:
        await server.stop(None)
    return errors, service


def test_a_local_error_reaches_a_remote_caller_as_its_status_only_and_the_log_has_why() -> None:
    errors, service = asyncio.run(_call_all())
    for name in ("Local", "LocalStream"):
        err = errors[name]
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION  # its status still says what kind of failure
        assert err.details() == f"{name} failed in the referee; the server's log says why", err.details()
        assert SECRET not in err.details()
    told = errors["Told"]  # an error that is not local is told as it is
    assert told.code() == grpc.StatusCode.FAILED_PRECONDITION and told.details() == "tournament t-1 is finished"
    assert [(event, kw["method"]) for event, kw in service.log.lines] == [
        ("call failed", "Local"),
        ("call failed", "LocalStream"),
    ]
