"""How fast the match runner drives bots, against the floor of raw gRPC between two processes, and what each
decision costs in CPU (issues 4 and 27).

    python3 scripts/bench_referee.py [--seconds S] [--json]

1. The floor: a client here and an echo server in another process, over a bidi stream and over unary calls, 64
   concurrent conversations. Each round trip sends the bytes of a real request (the frames the referee sends in
   the benchmark's own games, in order, so sizes match: about 430 bytes on average) and gets back a
   DecisionReply's bytes; the server decodes nothing. The client's channel has the referee's options.
2. The referee: ``play_game`` with two seats, both an instant bot in another process (it decodes each request and
   answers index 0), over each transport, 1 and 64 games at once, records written to a temporary folder.

Everything runs on the loop every process that plays games runs (``referee.event_loop.run``: a game's own work
yields to I/O, timers and the streams' readers, docs/match.md), the floor's client too.

Prints decisions (round trips) per second and the referee's ratio to the floor; with ``--json`` the last line is
one JSON object with keys floor_stream_rt_per_s, floor_unary_rt_per_s, referee_stream_dps_1, referee_stream_dps_64,
referee_unary_dps_1, referee_unary_dps_64 and ratio_stream_64, and the sandbox's figures (sandbox_figures.py):
sandbox_start_ms (goal <= 200), sandbox_python_bot_start_ms, python_bot_start_ms and unix_vs_tcp_cpu. The stream
floor is the mean of a measurement before and one after the referee's stream figures.

Wall-clock rates on a shared machine swing with the other work on it, so the stream figures at 64 games are also
given in CPU time from the processes' own accounting, which the other work disturbs far less:

- ``referee_cpu_us_per_decision``: this process's CPU per decision (``time.process_time``), split into
  ``referee_loop_cpu_us_per_decision`` (the event loop's thread, ``time.thread_time``) and
  ``referee_grpc_cpu_us_per_decision`` (every other thread: gRPC's poller and the thread that fsyncs a finished
  record);
- ``bot_cpu_us_per_decision``: the bot process's CPU per decision (``/proc/PID/task/*/schedstat``);
- ``floor_client_cpu_us_per_rt`` (and ``floor_server_cpu_us_per_rt``): the same for the stream floor's client and
  echo server per round trip, averaged over its two measurements; ``floor_client_loop_cpu_us_per_rt`` the client's
  event loop thread alone (to set beside ``referee_loop_cpu_us_per_decision``);
- ``cpu_vs_floor``: referee CPU per decision / floor client CPU per round trip. gRPC's own cost is the limit, 1.0.
- ``dialin_cpu_us_per_decision`` and ``dialin_cpu_vs_stream``: the same 64 games with both seats one instant bot
  that dials in (BotGateway, served here by ``dialin.bare_gateway``: the service's gateway less its tokens and
  entry), the referee's CPU per decision, and that over the Play stream's (``referee_cpu_us_per_decision``); goal
  <= 1.1.

and the event loop's health over the same 64-game window, from a timer that re-arms itself every 5 ms and notes
how late the loop runs it:

- ``max_loop_stall_ms``, ``p99_loop_stall_ms``: the lateness, worst and 99th percentile;
- ``max_loop_stall_cpu_ms``: the worst lateness counting only time the loop's thread was on a CPU (the rest of a
  stall is the OS running something else: on a loaded machine that is most of it);
- ``max_loop_stall_ms_16``, ``max_loop_stall_cpu_ms_16``: the same two over a window of 16 games at once (a loop
  turn runs every game whose reply has come, so its CPU grows with the games one loop plays);
- ``gc_max_pause_ms`` (wall) and ``gc_max_pause_cpu_ms`` (its thread on a CPU), ``gc_us_per_decision`` (CPU),
  ``gc_collections_gen0`` (1, 2): the collector's pauses, from ``gc.callbacks``, so a collector stall can be told
  apart from the OS's preemption and from a long turn of the loop;
- ``gc_middle_cpu_ms``: the CPU of one collection of the middle generation, forced at the end of the 64-game
  window with the games still in play. A window of a few seconds seldom holds one (one falls about every minute
  and a half at 64 games, docs/match.md), so its stall is measured on purpose rather than left to chance.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import gc
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from sandbox_figures import start_figures  # scripts/, beside this file

from referee.engine import apply, deck_from_seed, new_game
from referee.event_loop import run as run_games
from referee.gc_policy import tune_gc
from referee.log import configure
from referee.match import ChannelPool, EntrantRef, GameSpec, TimeControl, dialin, play_game
from referee.match.channels import BotChannel
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import gateway_pb2 as gw_pb
from referee.wire import decision_request

CONCURRENCY = 64
FEWER_GAMES = 16  # a second stall window, with this many games in the loop
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
    if unix := os.environ.get("BENCH_UNIX"):  # the instant bot also serves there (sandbox_figures.py)
        server.add_insecure_port(unix)
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


def answer(req: bot_pb.DecisionRequest) -> bytes:
    return bot_pb.DecisionReply(game_id=req.game_id, seq=req.seq, index=0).SerializeToString()


async def dial_in_instant_bot(gateway: str) -> None:
    """The instant bot, dialled in to the BotGateway at ``gateway``: a Play call of its own for each game."""

    async def game(ticket: str) -> None:
        call = play(metadata=((dialin.TICKET_KEY, ticket),))
        while isinstance(m := await call.read(), bot_pb.RefereeMessage):
            kind = m.WhichOneof("message")
            if kind == "decision":
                await call.write(answer(m.decision))
            elif kind == "game_over":
                break
        await call.done_writing()

    async with grpc.aio.insecure_channel(gateway) as channel:
        connect = channel.stream_stream("/abluxxen.v1.BotGateway/Connect", gw_pb.DialIn.SerializeToString,
                                        gw_pb.GatewayMessage.FromString)()  # fmt: skip
        play: Any = channel.stream_stream("/abluxxen.v1.BotGateway/Play", None, bot_pb.RefereeMessage.FromString)
        await connect.read()
        hello = bot_pb.HelloReply(name="instant", version="1", protocol_version=bot_pb.PROTOCOL_VERSION_1)
        await connect.write(gw_pb.DialIn(name="bench", hello=hello))
        games = set()
        while isinstance(m := await connect.read(), gw_pb.GatewayMessage):
            if m.WhichOneof("message") == "entered":
                print("listening on dialin:bench", flush=True)
            elif m.WhichOneof("message") == "open_game":
                task = asyncio.create_task(game(m.open_game.ticket))
                games.add(task)
                task.add_done_callback(games.discard)


async def serve_instant_bot() -> None:
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
    if unix := os.environ.get("BENCH_UNIX"):  # the instant bot also serves there (sandbox_figures.py)
        server.add_insecure_port(unix)
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


class Subprocess:
    def __init__(self, role: str, *more: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", role, *more], stdout=subprocess.PIPE, text=True,
            stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})},
        )  # fmt: skip
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


LAG_TICK_S = 0.005  # the loop-lag monitor's sleep
CLOCK_TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """CPU seconds process ``pid`` has used, all its threads (those that ended too), from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * CLOCK_TICK_S  # utime and stime, the 14th and 15th fields


class LoopLag:
    """A timer that re-arms itself every LAG_TICK_S and notes how late the loop runs it: (when, lateness, the part
    of the lateness the loop's thread spent on a CPU) in seconds. The on-CPU part is the CPU the thread used since
    the timer was armed beyond the tick: a loop busy with its own work for 12 ms runs the timer 7 ms late on a CPU;
    a loop the OS kept off the CPU is late, but not on a CPU. A plain timer, not a task, so the lateness is the
    loop's own, without a task's extra hop."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float, float]] = []  # (ran at, lateness, on-CPU lateness)
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._arm(time.perf_counter(), time.thread_time())

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()

    def _arm(self, t0: float, c0: float) -> None:
        self._handle = asyncio.get_running_loop().call_later(LAG_TICK_S, self._tick, t0, c0)

    def _tick(self, t0: float, c0: float) -> None:
        t1, c1 = time.perf_counter(), time.thread_time()
        self.samples.append((t1, max(0.0, t1 - t0 - LAG_TICK_S), max(0.0, c1 - c0 - LAG_TICK_S)))
        self._arm(t1, c1)


class GcWatch:
    """A ``gc.callbacks`` entry that notes each collection: (its wall time, its thread's CPU time, generation). The
    two differ by the time the OS kept the collecting thread off the CPU."""

    def __init__(self) -> None:
        self.pauses: list[tuple[float, float, int]] = []
        self._start = (0.0, 0.0)

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = (time.perf_counter(), time.thread_time())
        else:
            wall, cpu = self._start
            self.pauses.append((time.perf_counter() - wall, time.thread_time() - cpu, info["generation"]))


@dataclass
class Window:
    """One measuring window: its length, the calls counted, this process's CPU (all threads, and the loop's
    thread alone), the peer process's CPU, the loop's lateness and the collector's pauses."""

    seconds: float
    count: int
    cpu_s: float
    loop_cpu_s: float
    peer_cpu_s: float
    lags: list[tuple[float, float, float]] = field(default_factory=list)
    pauses: list[tuple[float, float, int]] = field(default_factory=list)  # (wall, CPU, generation)
    middle_cpu_s: float = 0.0  # a middle collection forced after the window

    @property
    def rate(self) -> float:
        return self.count / self.seconds

    def per_call_us(self, cpu_s: float) -> float:
        return cpu_s * 1e6 / max(1, self.count)

    def stalls(self) -> dict[str, float]:
        """The loop's lateness and the collector's pauses over the window (milliseconds, microseconds)."""
        late = sorted(lag for _, lag, _ in self.lags) or [0.0]
        out = {
            "max_loop_stall_ms": late[-1] * 1000,
            "p99_loop_stall_ms": late[min(len(late) - 1, int(len(late) * 0.99))] * 1000,
            "max_loop_stall_cpu_ms": max((c for _, _, c in self.lags), default=0.0) * 1000,
            "gc_max_pause_ms": max((wall for wall, _, _ in self.pauses), default=0.0) * 1000,
            "gc_max_pause_cpu_ms": max((cpu for _, cpu, _ in self.pauses), default=0.0) * 1000,
            "gc_us_per_decision": self.per_call_us(sum(cpu for _, cpu, _ in self.pauses)),
            "gc_middle_cpu_ms": self.middle_cpu_s * 1000,
        }
        for gen in range(3):
            out[f"gc_collections_gen{gen}"] = sum(1 for *_, g in self.pauses if g == gen)
        return out


MIN_CALLS = 20  # a window lasts until this many calls at least...
MAX_WINDOW_S = 120.0  # ...or this long


async def _timed(workers: int, seconds: float, work, peer: int) -> Window:
    """Run ``work(count)`` in ``workers`` tasks; the ``count`` calls, the CPU of this process and of process
    ``peer``, the loop's lateness and the collector's pauses over ``seconds`` after the warm-up."""
    done = [0]

    def count(*_: object) -> None:
        done[0] += 1

    tasks = [asyncio.create_task(work(count)) for _ in range(workers)]
    await asyncio.sleep(WARMUP_S)
    lag, watch = LoopLag(), GcWatch()
    lag.start()
    gc.callbacks.append(watch)
    t0, n0, c0, l0, p0 = time.perf_counter(), done[0], time.process_time(), time.thread_time(), process_cpu_s(peer)
    await asyncio.sleep(seconds)
    # On a starved machine a short window can end before one call does (a rate of 0 measures nothing): the window
    # lasts until MIN_CALLS calls, up to MAX_WINDOW_S.
    while done[0] - n0 < MIN_CALLS and time.perf_counter() - t0 < MAX_WINDOW_S:
        await asyncio.sleep(0.05)
    t1, n1, c1, l1, p1 = time.perf_counter(), done[0], time.process_time(), time.thread_time(), process_cpu_s(peer)
    gc.callbacks.remove(watch)
    lag.stop()
    m0 = time.thread_time()
    gc.collect(1)  # what a middle collection costs with the games in play (after the window: not in its figures)
    middle = time.thread_time() - m0
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return Window(t1 - t0, n1 - n0, c1 - c0, l1 - l0, p1 - p0, lag.samples, watch.pauses, middle)


def floor_frames() -> list[bytes]:
    return [f for seed in (1, 2, 3) for f in game_frames(seed)]


async def floor_stream(address: str, peer: int, seconds: float) -> Window:
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
        return await _timed(CONCURRENCY, seconds, work, peer)
    finally:
        await channel.close()


async def floor_unary(address: str, peer: int, seconds: float) -> Window:
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
        return await _timed(CONCURRENCY, seconds, work, peer)
    finally:
        await channel.close()


async def referee(address: str, peer: int, games: int, transport: str, seconds: float, tmp: Path) -> Window:
    folder = tmp / f"{transport}-{games}-{address.replace(':', '-')}"
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

        return await _timed(games, seconds, work, peer)


async def measure(s: float) -> dict[str, float]:
    """Every figure, in one event loop (gRPC's asyncio layer wants one loop per process). The stream floor is
    measured before and after the referee's stream figures and averaged: on a shared machine the floor drifts by
    a third within a minute, and the ratio should compare like with like."""
    out: dict[str, float] = {}
    tmp = tempfile.mkdtemp(prefix="bench-referee-")
    atexit.register(shutil.rmtree, tmp, True)  # not left behind in the temporary folder
    unix = f"unix:{tmp}/bot.sock"
    with Subprocess("echo") as echo, Subprocess("bot", env={"BENCH_UNIX": unix}) as bot:
        eid, bid = echo.proc.pid, bot.proc.pid
        before = await floor_stream(echo.address, eid, s)
        stream = {games: await referee(bot.address, bid, games, "stream", s, Path(tmp)) for games in (1, CONCURRENCY)}
        after = await floor_stream(echo.address, eid, s)
        unary_floor = await floor_unary(echo.address, eid, s)
        unary = {games: await referee(bot.address, bid, games, "unary", s, Path(tmp)) for games in (1, CONCURRENCY)}
        fewer = await referee(bot.address, bid, FEWER_GAMES, "stream", s, Path(tmp))
        dialled = await dialled_in(s, Path(tmp))
        over_unix = await referee(unix, bid, CONCURRENCY, "stream", s, Path(tmp) / "unix")
    out.update(await start_figures())
    unix_us, tcp_us = over_unix.per_call_us(over_unix.cpu_s), stream[CONCURRENCY].per_call_us(stream[CONCURRENCY].cpu_s)
    out["unix_vs_tcp_cpu"] = unix_us / tcp_us
    out["floor_stream_rt_per_s"] = (before.rate + after.rate) / 2
    out["floor_unary_rt_per_s"] = unary_floor.rate
    for games in (1, CONCURRENCY):
        out[f"referee_stream_dps_{games}"] = stream[games].rate
        out[f"referee_unary_dps_{games}"] = unary[games].rate
    out["ratio_stream_64"] = out["referee_stream_dps_64"] / out["floor_stream_rt_per_s"]
    out.update(cpu_figures(stream[CONCURRENCY], before, after))
    out["dialin_cpu_us_per_decision"] = dialled.per_call_us(dialled.cpu_s)
    out["dialin_cpu_vs_stream"] = out["dialin_cpu_us_per_decision"] / out["referee_cpu_us_per_decision"]
    out.update(stream[CONCURRENCY].stalls())
    few = fewer.stalls()
    out[f"max_loop_stall_ms_{FEWER_GAMES}"] = few["max_loop_stall_ms"]
    out[f"max_loop_stall_cpu_ms_{FEWER_GAMES}"] = few["max_loop_stall_cpu_ms"]
    show(out, before.rate, after.rate)
    print(f"sandbox: starts in {out['sandbox_start_ms']:.0f} ms (goal <= 200; a kit bot in it "
          f"{out['sandbox_python_bot_start_ms']:.0f} ms, without it {out['python_bot_start_ms']:.0f} ms); referee CPU "
          f"per decision over a Unix socket {unix_us:.0f} us, over TCP {tcp_us:.0f} us: unix_vs_tcp_cpu = "
          f"{out['unix_vs_tcp_cpu']:.2f}")  # fmt: skip
    shutil.rmtree(tmp, ignore_errors=True)
    return out


async def dialled_in(seconds: float, tmp: Path) -> Window:
    """The referee's 64 games against the instant bot dialled in to a gateway served by this process."""
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((dialin.bare_gateway(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        bot = await asyncio.to_thread(Subprocess, "dialin", "--gateway", f"127.0.0.1:{port}")
        with bot:
            return await referee(bot.address, bot.proc.pid, CONCURRENCY, "stream", seconds, tmp)
    finally:
        await server.stop(0)


def cpu_figures(game: Window, *floor: Window) -> dict[str, float]:
    """CPU per decision of the referee (its loop's thread and the rest) and the bot, and per round trip of the
    floor's client and server (its windows' totals over their round trips)."""
    rts = sum(f.count for f in floor)
    out = {
        "referee_cpu_us_per_decision": game.per_call_us(game.cpu_s),
        "referee_loop_cpu_us_per_decision": game.per_call_us(game.loop_cpu_s),
        "referee_grpc_cpu_us_per_decision": game.per_call_us(game.cpu_s - game.loop_cpu_s),
        "bot_cpu_us_per_decision": game.per_call_us(game.peer_cpu_s),
        "floor_client_cpu_us_per_rt": sum(f.cpu_s for f in floor) * 1e6 / max(1, rts),
        "floor_client_loop_cpu_us_per_rt": sum(f.loop_cpu_s for f in floor) * 1e6 / max(1, rts),
        "floor_server_cpu_us_per_rt": sum(f.peer_cpu_s for f in floor) * 1e6 / max(1, rts),
    }
    out["cpu_vs_floor"] = out["referee_cpu_us_per_decision"] / out["floor_client_cpu_us_per_rt"]
    return out


def show(out: dict[str, float], before: float, after: float) -> None:
    print(f"floor, {CONCURRENCY} conversations: stream {out['floor_stream_rt_per_s']:8.0f} round trips/s "
          f"({before:.0f} before the referee, {after:.0f} after), unary {out['floor_unary_rt_per_s']:8.0f} "
          "round trips/s")  # fmt: skip
    for transport in ("stream", "unary"):
        for games in (1, CONCURRENCY):
            dps, fl = out[f"referee_{transport}_dps_{games}"], out[f"floor_{transport}_rt_per_s"]
            print(f"referee, {transport:6}, {games:2} game(s): {dps:8.0f} decisions/s "
                  f"({dps / fl:.2f} of the {transport} floor)")  # fmt: skip
    print(f"ratio_stream_64 = {out['ratio_stream_64']:.2f} (goal >= 0.70)")
    print(f"CPU, stream, {CONCURRENCY} games: referee {out['referee_cpu_us_per_decision']:.0f} us/decision "
          f"(loop thread {out['referee_loop_cpu_us_per_decision']:.0f}, other threads "
          f"{out['referee_grpc_cpu_us_per_decision']:.0f}), bot {out['bot_cpu_us_per_decision']:.0f}; floor client "
          f"{out['floor_client_cpu_us_per_rt']:.0f} us/round trip (loop thread "
          f"{out['floor_client_loop_cpu_us_per_rt']:.0f}), server {out['floor_server_cpu_us_per_rt']:.0f}; "
          f"cpu_vs_floor = {out['cpu_vs_floor']:.2f} (goal <= 2.0)")  # fmt: skip
    print(f"CPU, dialled in, {CONCURRENCY} games: referee {out['dialin_cpu_us_per_decision']:.0f} us/decision; "
          f"dialin_cpu_vs_stream = {out['dialin_cpu_vs_stream']:.2f} (goal <= 1.1)")  # fmt: skip
    print(f"event loop, stream, {CONCURRENCY} games: stalls max {out['max_loop_stall_ms']:.1f} ms, p99 "
          f"{out['p99_loop_stall_ms']:.1f} ms, max on a CPU {out['max_loop_stall_cpu_ms']:.1f} ms (goal: max < 5 ms; "
          f"{FEWER_GAMES} games: max {out[f'max_loop_stall_ms_{FEWER_GAMES}']:.1f} ms, on a CPU "
          f"{out[f'max_loop_stall_cpu_ms_{FEWER_GAMES}']:.1f} ms); "
          f"collector: longest pause "
          f"{out['gc_max_pause_ms']:.1f} ms ({out['gc_max_pause_cpu_ms']:.1f} ms on a CPU), "
          f"{out['gc_us_per_decision']:.1f} us/decision of CPU, collections "
          f"{out['gc_collections_gen0']:.0f}/{out['gc_collections_gen1']:.0f}/{out['gc_collections_gen2']:.0f} "
          f"(generation 0/1/2), a middle collection {out['gc_middle_cpu_ms']:.1f} ms of CPU")  # fmt: skip


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=3.0, help="measuring time per figure (default 3)")
    p.add_argument("--json", action="store_true", help="end with one JSON line")
    p.add_argument("--serve", choices=["echo", "bot", "dialin"], help=argparse.SUPPRESS)
    p.add_argument("--gateway", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve == "dialin":
        asyncio.run(dial_in_instant_bot(args.gateway))
        return 0
    if args.serve == "echo":
        asyncio.run(serve_echo())
        return 0
    if args.serve == "bot":
        asyncio.run(serve_instant_bot())
        return 0
    configure("warning")
    tune_gc()  # as every process that plays games does (referee/gc_policy.py); the floor's client runs under it too
    out = run_games(measure(args.seconds))
    if args.json:
        print(json.dumps({k: round(v, 3) for k, v in out.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
