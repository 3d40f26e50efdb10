"""How fast the match runner drives bots, against the floor of raw gRPC between two processes (issue 4).

    python3 scripts/bench_referee.py [--seconds S] [--json]

1. The floor: a client here and an echo server in another process, over a bidi stream and over unary calls, 64
   concurrent conversations. Each round trip sends the bytes of a real request (the frames the referee sends in
   the benchmark's own games, in order, so sizes match: about 430 bytes on average) and gets back a
   DecisionReply's bytes; the server decodes nothing. The client's channel has the referee's options.
2. The referee: ``play_game`` with two seats, both an instant bot in another process (it decodes each request and
   answers index 0), over each transport, 1 and 64 games at once, records written to a temporary folder.

Prints decisions (round trips) per second and the referee's ratio to the floor; with ``--json`` the last line is
one JSON object with keys floor_stream_rt_per_s, floor_unary_rt_per_s, referee_stream_dps_1, referee_stream_dps_64,
referee_unary_dps_1, referee_unary_dps_64 and ratio_stream_64. The stream floor is the mean of a measurement
before and one after the referee's stream figures.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from referee.engine import apply, deck_from_seed, new_game
from referee.log import configure
from referee.match import ChannelPool, EntrantRef, GameSpec, TimeControl, play_game
from referee.match.seats import BotChannel
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.wire import decision_request

CONCURRENCY = 64
WARMUP_S = 0.5


def game_frames(seed: int) -> list[bytes]:
    """The Play stream frames (RefereeMessage with a DecisionRequest) the referee sends in a 2-seat game against
    bots that answer index 0, as the benchmark's games are played: the floor sends messages of the same sizes."""
    state = new_game(deck_from_seed(seed), 2)
    log: list = []
    since = [0, 0]
    frames: list[bytes] = []
    while not state.over:
        seat = state.seat
        req = decision_request(state, f"bench-{seed}", len(frames) + 1, log[since[seat] :], 5000, 60_000)
        since[seat] = len(log)
        frames.append(bot_pb.RefereeMessage(decision=req).SerializeToString())
        state, events = apply(state, state.legal[0])
        log.extend(events)
    return frames


def reply_message() -> bytes:
    return bot_pb.DecisionReply(game_id="bench-1000", seq=100, index=0).SerializeToString()


# --- the servers (run as subprocesses of this script) ----------------------------------------------------------


async def serve_echo() -> None:
    reply = reply_message()

    async def unary(request: bytes, context) -> bytes:
        return reply

    async def stream(requests, context):
        async for _ in requests:
            yield reply

    server = grpc.aio.server()
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "Stream": grpc.stream_stream_rpc_method_handler(stream),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


async def serve_instant_bot() -> None:
    def answer(req: bot_pb.DecisionRequest) -> bytes:
        return bot_pb.DecisionReply(game_id=req.game_id, seq=req.seq, index=0).SerializeToString()

    async def hello(request, context):
        return bot_pb.HelloReply(
            name="instant",
            version="1",
            protocol_version=bot_pb.PROTOCOL_VERSION_1,
            transports=[bot_pb.TRANSPORT_STREAM, bot_pb.TRANSPORT_UNARY],
        )

    async def decide(request: bot_pb.DecisionRequest, context) -> bytes:
        return answer(request)

    async def play(requests, context):
        async for msg in requests:
            if msg.WhichOneof("message") == "decision":
                yield answer(msg.decision)

    async def game_over(request, context):
        return bot_pb.GameOverAck()

    server = grpc.aio.server()
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
        "Hello": grpc.unary_unary_rpc_method_handler(
            hello, bot_pb.HelloRequest.FromString, bot_pb.HelloReply.SerializeToString
        ),
        "Decide": grpc.unary_unary_rpc_method_handler(decide, bot_pb.DecisionRequest.FromString),
        "Play": grpc.stream_stream_rpc_method_handler(play, bot_pb.RefereeMessage.FromString),
        "GameOver": grpc.unary_unary_rpc_method_handler(
            game_over, bot_pb.GameOverNotice.FromString, bot_pb.GameOverAck.SerializeToString
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("abluxxen.v1.Bot", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


class Subprocess:
    def __init__(self, role: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", role], stdout=subprocess.PIPE, text=True, stderr=subprocess.DEVNULL
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"the {role} server did not start: {line!r}")
        self.address = line.split()[-1]

    def __enter__(self) -> Subprocess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()


# --- measurements ----------------------------------------------------------------------------------------------


async def _timed(workers: int, seconds: float, work) -> float:
    """Run ``work(count)`` in ``workers`` tasks; the rate of ``count`` calls per second after the warm-up."""
    done = [0]
    marks: dict[str, tuple[float, int]] = {}

    def count(*_: object) -> None:
        done[0] += 1

    tasks = [asyncio.create_task(work(count)) for _ in range(workers)]
    await asyncio.sleep(WARMUP_S)
    marks["start"] = (time.perf_counter(), done[0])
    await asyncio.sleep(seconds)
    marks["end"] = (time.perf_counter(), done[0])
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    (t0, n0), (t1, n1) = marks["start"], marks["end"]
    return (n1 - n0) / (t1 - t0)


def floor_frames() -> list[bytes]:
    return [f for seed in (1, 2, 3) for f in game_frames(seed)]


async def floor_stream(address: str, seconds: float) -> float:
    """Round trips/s of 64 streams that each send the next real frame and wait for the answer."""
    frames = floor_frames()
    starts = itertools.count(0, 37)  # each conversation starts somewhere else in the games
    channel = BotChannel(address).channel  # the referee's channel options (retries off, limits)
    mc: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream("/bench.Echo/Stream")

    async def work(count) -> None:
        call = mc()
        i = next(starts)
        try:
            while True:
                await call.write(frames[i % len(frames)])
                await call.read()
                count()
                i += 1
        finally:
            call.cancel()

    try:
        return await _timed(CONCURRENCY, seconds, work)
    finally:
        await channel.close()


async def floor_unary(address: str, seconds: float) -> float:
    # The request inside each frame: Decide takes a DecisionRequest, not a RefereeMessage.
    requests = [bot_pb.RefereeMessage.FromString(f).decision.SerializeToString() for f in floor_frames()]
    starts = itertools.count(0, 37)
    channel = BotChannel(address).channel  # the referee's channel options (retries off, limits)
    mc: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary("/bench.Echo/Unary")

    async def work(count) -> None:
        i = next(starts)
        while True:
            await mc(requests[i % len(requests)], timeout=5)
            count()
            i += 1

    try:
        return await _timed(CONCURRENCY, seconds, work)
    finally:
        await channel.close()


async def referee(address: str, games: int, transport: str, seconds: float, tmp: Path) -> float:
    folder = tmp / f"{transport}-{games}"
    tc = TimeControl(decision_ms=5000, bank_ms=60_000, grace_ms=1000)
    async with ChannelPool() as pool:
        counter = [0]

        async def work(count) -> None:
            while True:
                counter[0] += 1
                n = counter[0]
                spec = GameSpec(f"bench-{n}", n, (EntrantRef("a", address), EntrantRef("b", address)), time_control=tc)
                await play_game(
                    spec, pool=pool, record_path=folder / f"{n}.abluxx", prefer=transport, on_decision=count
                )

        return await _timed(games, seconds, work)


async def measure(s: float) -> dict[str, float]:
    """Every figure, in one event loop (gRPC's asyncio layer wants one loop per process). The stream floor is
    measured before and after the referee's stream figures and averaged: on a shared machine the floor drifts by
    a third within a minute, and the ratio should compare like with like."""
    out: dict[str, float] = {}
    with Subprocess("echo") as echo, Subprocess("bot") as bot, tempfile.TemporaryDirectory() as tmp:
        before = await floor_stream(echo.address, s)
        for games in (1, CONCURRENCY):
            out[f"referee_stream_dps_{games}"] = await referee(bot.address, games, "stream", s, Path(tmp))
        after = await floor_stream(echo.address, s)
        out["floor_stream_rt_per_s"] = (before + after) / 2
        out["floor_unary_rt_per_s"] = await floor_unary(echo.address, s)
        for games in (1, CONCURRENCY):
            out[f"referee_unary_dps_{games}"] = await referee(bot.address, games, "unary", s, Path(tmp))
    print(f"floor, {CONCURRENCY} conversations: stream {out['floor_stream_rt_per_s']:8.0f} round trips/s "
          f"({before:.0f} before the referee, {after:.0f} after), unary {out['floor_unary_rt_per_s']:8.0f} "
          "round trips/s")  # fmt: skip
    for transport in ("stream", "unary"):
        for games in (1, CONCURRENCY):
            dps, fl = out[f"referee_{transport}_dps_{games}"], out[f"floor_{transport}_rt_per_s"]
            print(f"referee, {transport:6}, {games:2} game(s): {dps:8.0f} decisions/s "
                  f"({dps / fl:.2f} of the {transport} floor)")  # fmt: skip
    out["ratio_stream_64"] = out["referee_stream_dps_64"] / out["floor_stream_rt_per_s"]
    print(f"ratio_stream_64 = {out['ratio_stream_64']:.2f} (goal >= 0.70)")
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=3.0, help="measuring time per figure (default 3)")
    p.add_argument("--json", action="store_true", help="end with one JSON line")
    p.add_argument("--serve", choices=["echo", "bot"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve == "echo":
        asyncio.run(serve_echo())
        return 0
    if args.serve == "bot":
        asyncio.run(serve_instant_bot())
        return 0
    configure("warning")
    out = asyncio.run(measure(args.seconds))
    if args.json:
        print(json.dumps({k: round(v, 3) for k, v in out.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
