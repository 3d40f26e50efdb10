"""Shared by the match runner's tests: bot processes and record checks."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path

import grpc

from referee.event_loop import run as run_games
from referee.match import ChannelPool, GameResult, GameSpec, play_game
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records import read_record, verify_record

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BAD_BOTS = FIXTURES / "bad_bots.py"


@contextlib.contextmanager
def bot_proc(*args: str, script: Path = BAD_BOTS) -> Iterator[tuple[subprocess.Popen, str]]:
    """Run ``script`` (tests/fixtures/bad_bots.py) with ``args`` in its own process; yield it and its address."""
    proc = subprocess.Popen(
        [sys.executable, str(script), *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("listening on "), f"{script.name} {' '.join(args)} did not start: {line!r}"
        yield proc, line.split()[-1]
    finally:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def bot_process(*args: str, script: Path = BAD_BOTS) -> Iterator[str]:
    """As ``bot_proc``, yielding the address only."""
    with bot_proc(*args, script=script) as (_, address):
        yield address


def free_address() -> str:
    """An address with nothing listening on it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def play_one(spec: GameSpec, path: Path, prefer: str | None = None) -> GameResult:
    """Play ``spec`` in a fresh event loop with its own channel pool, writing the record to ``path`` (``prefer``:
    a transport to force where the bot offers it)."""

    async def go() -> GameResult:
        async with ChannelPool() as pool:
            return await play_game(spec, pool=pool, record_path=path, prefer=prefer)

    return run_games(go())  # the loop every command that plays games runs (referee/event_loop.py)


def verify(path: Path) -> rec_pb.GameRecord:
    """Read the record at ``path`` and verify it by replay (referee.records); return it."""
    rec = read_record(path)
    assert rec.complete, "the record has no footer"
    verify_record(rec)
    return rec


@contextlib.contextmanager
def raw_hello_bot(answer: Callable[[bytes, grpc.ServicerContext], bytes]) -> Iterator[tuple[str, list[bytes]]]:
    """A gRPC server whose Hello gets the request's bytes and answers ``answer``'s; yields its address and the
    requests it got."""
    got: list[bytes] = []

    def hello_rpc(request: bytes, context: grpc.ServicerContext) -> bytes:
        got.append(request)
        return answer(request, context)

    class Handler(grpc.GenericRpcHandler):
        def service(self, handler_call_details):
            if handler_call_details.method != "/abluxxen.v1.Bot/Hello":
                return None
            return grpc.unary_unary_rpc_method_handler(hello_rpc)  # bytes in, bytes out

    bot = grpc.server(futures.ThreadPoolExecutor(2), handlers=[Handler()])
    address = f"127.0.0.1:{bot.add_insecure_port('127.0.0.1:0')}"
    bot.start()
    try:
        yield address, got
    finally:
        bot.stop(None)
