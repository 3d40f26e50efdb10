"""The gRPC calls the service answers, counted by method and status code (``abluxx_grpc_calls_total``,
docs/operations.md): one server interceptor wraps every handler, the Referee's, health's and reflection's alike.
A method the server does not have never reaches a handler and is not counted, so the methods are a fixed set."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import grpc

from referee.metrics import GRPC_CALLS


class CallCounter(grpc.aio.ServerInterceptor):
    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        return handler if handler is None else _counted(handler, handler_call_details.method)


def _counted(handler: Any, method: str) -> Any:
    """``handler`` with its behaviour wrapped to count the call's outcome under ``method``."""
    make, behavior, streaming = next(
        (make, behavior, kind.endswith("stream"))
        for kind, make in (
            ("unary_unary", grpc.unary_unary_rpc_method_handler),
            ("unary_stream", grpc.unary_stream_rpc_method_handler),
            ("stream_unary", grpc.stream_unary_rpc_method_handler),
            ("stream_stream", grpc.stream_stream_rpc_method_handler),
        )
        if (behavior := getattr(handler, kind)) is not None
    )
    wrapped = _streaming(behavior, method) if streaming else _unary(behavior, method)
    return make(wrapped, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer)  # fmt: skip


def _unary(behavior: Callable[..., Any], method: str) -> Callable[..., Awaitable[Any]]:
    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        with _outcome(method, context):
            reply = behavior(request, context)
            return await reply if inspect.isawaitable(reply) else reply

    return call


def _streaming(behavior: Callable[..., Any], method: str) -> Callable[..., AsyncIterator[Any]]:
    async def call(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        with _outcome(method, context):
            replies = behavior(request, context)
            if inspect.isasyncgen(replies):
                async for reply in replies:
                    yield reply
            elif inspect.isawaitable(replies):  # a handler that writes with context.write
                await replies
            else:
                for reply in replies:
                    yield reply

    return call


@contextlib.contextmanager
def _outcome(method: str, context: grpc.aio.ServicerContext) -> Iterator[None]:
    """Counts the call when it ends: the code the handler set or aborted with, else OK, or UNKNOWN for an error it
    raised, or CANCELLED when the caller went away."""
    otherwise = grpc.StatusCode.OK
    try:
        yield
    except (asyncio.CancelledError, GeneratorExit):
        otherwise = grpc.StatusCode.CANCELLED
        raise
    except BaseException:
        otherwise = grpc.StatusCode.UNKNOWN
        raise
    finally:
        GRPC_CALLS.labels(method, _name(context.code() or otherwise)).inc()


def _name(code: object) -> str:
    """A status code's name (grpc.aio gives the enum, or its number)."""
    for known in grpc.StatusCode:
        if code in (known, known.value[0]):
            return known.name
    return "UNKNOWN"
