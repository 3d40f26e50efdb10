"""A small test driver: plays engine games against served bots over real gRPC (Decide or Play).

Not the match runner: no clocks or fault handling. Each remote seat has BotSession's interface (start, answer,
game_over), so ``abluxx_bot.local.play_local`` drives remote and in-process seats alike.
"""

from __future__ import annotations

import queue
import select
import shutil
import signal
import subprocess
import sys

import grpc

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import bot_pb2_grpc

# A bot that never starts is what this bounds. Several cold `abluxx bot` starts at once took over 20 s at a load
# average of 20-25 on 2 cores (the whole suite beside other jobs' mutation runs).
STARTUP_TIMEOUT_S = 90.0


class ServedBot:
    """A bot server in a real subprocess, started with ``abluxx bot NAME --port 0`` or any command."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.address = ""
        self.channel: grpc.Channel | None = None  # once it is ready

    def wait_ready(self) -> ServedBot:
        """Read the "listening on HOST:PORT" line and connect. Returns self."""
        line = self._read_line(STARTUP_TIMEOUT_S)
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"bot server said {line!r}, stderr: {self.proc.stderr.read()}")
        self.address = line.removeprefix("listening on ").strip()
        self.channel = grpc.insecure_channel(self.address)
        self.stub = bot_pb2_grpc.BotStub(self.channel)
        return self

    @classmethod
    def example(cls, name: str, seed: int = 7) -> ServedBot:
        exe = shutil.which("abluxx")
        cmd = [exe] if exe else [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
        return cls([*cmd, "bot", name, "--port", "0", "--seed", str(seed)])

    def _read_line(self, timeout: float) -> str:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.proc.kill()
            raise RuntimeError(f"no 'listening on' line within {timeout} s")
        return self.proc.stdout.readline()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        if self.channel is not None:  # a bot that never became ready has none
            self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


class UnarySeat:
    """A seat answered by Decide: the first request of the game carries GameStart; GameOver at the end."""

    def __init__(self, stub: bot_pb2_grpc.BotStub, name: str) -> None:
        self.stub = stub
        self.name = name
        self._start: bot_pb.GameStart | None = None

    def start(self, start: bot_pb.GameStart) -> None:
        self._start = start

    def answer(self, request: bot_pb.DecisionRequest) -> bot_pb.DecisionReply:
        if self._start is not None:
            first = bot_pb.DecisionRequest()
            first.CopyFrom(request)
            first.start.CopyFrom(self._start)
            self._start = None
            request = first
        return self.stub.Decide(request, timeout=10)

    def game_over(self, notice: bot_pb.GameOverNotice) -> None:
        self.stub.GameOver(notice, timeout=10)


class StreamSeat:
    """A seat answered on one Play stream: GameStart, the requests, GameOverNotice, then the stream closes."""

    def __init__(self, stub: bot_pb2_grpc.BotStub, name: str) -> None:
        self.name = name
        self._out: queue.Queue[bot_pb.RefereeMessage | None] = queue.Queue()
        self._replies = stub.Play(iter(self._out.get, None), timeout=120)

    def start(self, start: bot_pb.GameStart) -> None:
        self._out.put(bot_pb.RefereeMessage(start=start))

    def answer(self, request: bot_pb.DecisionRequest) -> bot_pb.DecisionReply:
        self._out.put(bot_pb.RefereeMessage(decision=request))
        return next(self._replies)

    def game_over(self, notice: bot_pb.GameOverNotice) -> None:
        self._out.put(bot_pb.RefereeMessage(game_over=notice))
        self._out.put(None)
        # The bot closes its side once ours is closed: the stream ends with no further reply.
        for extra in self._replies:
            raise AssertionError(f"bot sent a reply after the game was over: {extra}")

    def cancel(self) -> None:
        self._out.put(None)
        self._replies.cancel()
