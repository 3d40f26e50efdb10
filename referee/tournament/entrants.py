"""Entrants the referee starts itself (``command = ...`` in the config), and the check that every entrant can be
reached before a tournament starts.

A command entrant is a local bot process. It must print ``listening on HOST:PORT`` on stdout once it serves (the
bot kit's ``serve`` and ``abluxx bot NAME --port 0`` do). Its output goes to ``<data>/logs/<tournament>-<name>.log``.
On Linux it is also told to end if the referee dies, so a killed referee leaves no bots behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc

from referee.log import get_logger
from referee.match.seats import bot_channel, hello_problem
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import bot_pb2_grpc as bot_grpc

from .config import EntrantConfig, TournamentConfig

LISTENING = re.compile(rb"listening on (\S+:\d+)")
START_TIMEOUT_S = 30.0  # a cold Python start on a busy 2-core machine can take a few seconds
HELLO_TIMEOUT_S = 5.0


class EntrantError(RuntimeError):
    """An entrant that cannot take part: the tournament does not start."""


def _die_with_parent() -> None:  # runs in the child between fork and exec
    import ctypes

    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class LocalBots:
    """Starts the command entrants, gives their addresses, and stops them (an async context manager)."""

    def __init__(self, entrants: tuple[EntrantConfig, ...], log_dir: Path, prefix: str) -> None:
        self.entrants = [e for e in entrants if e.command]
        self.log_dir = log_dir
        self.prefix = prefix
        self.procs: dict[str, asyncio.subprocess.Process] = {}
        self.addresses: dict[str, str] = {}
        self._drains: list[asyncio.Task] = []

    async def __aenter__(self) -> LocalBots:
        starts = [asyncio.ensure_future(self._start(e)) for e in self.entrants]
        try:
            await asyncio.gather(*starts)
        except BaseException:
            # the others may still be starting: stop them first, or a process they spawn later is never stopped
            for t in starts:
                t.cancel()
            await asyncio.gather(*starts, return_exceptions=True)
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _start(self, e: EntrantConfig) -> None:
        assert e.command
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.log_dir / f"{self.prefix}-{e.name}.log"
        log = open(log_path, "ab")  # noqa: SIM115 - stays open for the life of the process
        try:
            proc = await asyncio.create_subprocess_exec(
                *e.command,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                stdin=asyncio.subprocess.DEVNULL,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        except OSError as err:
            log.close()
            raise EntrantError(f"entrant {e.name}: cannot start {' '.join(e.command)!r}: {err}") from None
        self.procs[e.name] = proc
        assert proc.stdout is not None
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                while True:
                    line = await proc.stdout.readline()
                    if not line:
                        code = await proc.wait()
                        raise EntrantError(
                            f"entrant {e.name}: {' '.join(e.command)!r} exited with code {code} before printing "
                            f"'listening on HOST:PORT' (its output is in {log_path})"
                        )
                    log.write(line)
                    if m := LISTENING.search(line):
                        self.addresses[e.name] = m[1].decode()
                        break
        except TimeoutError:
            log.close()
            raise EntrantError(
                f"entrant {e.name}: {' '.join(e.command)!r} printed no 'listening on HOST:PORT' within "
                f"{START_TIMEOUT_S:.0f} s (its output is in {log_path})"
            ) from None
        except BaseException:
            log.close()
            raise
        self._drains.append(asyncio.create_task(_drain(proc.stdout, log)))

    async def stop(self) -> None:
        """SIGTERM, a few seconds' grace, then SIGKILL."""
        for proc in self.procs.values():
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
        for proc in self.procs.values():
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        for t in self._drains:
            t.cancel()
        self.procs.clear()


async def _drain(stream: asyncio.StreamReader, log) -> None:
    try:
        while line := await stream.readline():
            log.write(line)
            log.flush()
    finally:
        log.close()


async def hello(address: str, timeout: float = HELLO_TIMEOUT_S) -> bot_pb.HelloReply:
    """Ask the bot at ``address`` who it is; raises EntrantError saying why it cannot be reached."""
    async with bot_channel(address) as channel:
        stub = bot_grpc.BotStub(channel)
        try:
            reply = await stub.Hello(bot_pb.HelloRequest(protocol_version=bot_pb.PROTOCOL_VERSION_1), timeout=timeout)
        except grpc.aio.AioRpcError as err:
            why = "no answer" if err.code() == grpc.StatusCode.DEADLINE_EXCEEDED else err.details()
            raise EntrantError(f"cannot reach a bot at {address}: {err.code().name}: {why}") from None
    if reply.protocol_version != bot_pb.PROTOCOL_VERSION_1:
        raise EntrantError(f"the bot at {address} speaks protocol version {reply.protocol_version}, not 1")
    if problem := hello_problem(reply):
        raise EntrantError(f"the bot at {address}: {problem}")
    return reply


async def check_reachable(addresses: dict[str, str], timeout: float = HELLO_TIMEOUT_S) -> None:
    """Every entrant answers Hello, or EntrantError names each one that does not."""

    async def one(name: str, address: str) -> str | None:
        try:
            await hello(address, timeout)
        except EntrantError as e:
            return f"entrant {name}: {e}"
        return None

    problems = [p for p in await asyncio.gather(*(one(n, a) for n, a in addresses.items())) if p]
    if problems:
        raise EntrantError("; ".join(problems))


@contextlib.asynccontextmanager
async def ready(
    config: TournamentConfig,
    log_dir: Path,
    *,
    retry_s: float | None = None,
    keep_trying: Callable[[], bool] = lambda: True,
) -> AsyncIterator[dict[str, str]]:
    """Start the command entrants, wait until every entrant answers Hello, and yield each one's address; the
    command entrants are stopped on leaving.

    Without ``retry_s`` an unreachable entrant raises EntrantError at once. With it, Hello is asked again every
    ``retry_s`` seconds for as long as ``keep_trying()`` (the service's resumed run waits for its bots to come back
    rather than fault them all); EntrantError is raised once it says stop."""
    async with LocalBots(config.entrants, log_dir, config.tournament_id) as bots:
        addresses = {e.name: e.address for e in config.entrants if e.address}
        addresses.update(bots.addresses)
        while True:
            try:
                await check_reachable(addresses)
                break
            except EntrantError as e:
                if retry_s is None:
                    raise
                get_logger(tournament=config.tournament_id).warning(
                    "entrants unreachable; retrying", error=str(e), retry_s=retry_s
                )
                await asyncio.sleep(retry_s)
                if not keep_trying():
                    raise
        yield addresses
