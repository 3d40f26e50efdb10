#!/usr/bin/env python3
"""Benchmark: a 4-entrant round robin (table size 4, duplicate deals) of instant bots over real gRPC, through the
real tournament runner, match runner and SQLite store, at 1, 8 and 64 games at once.

    python3 scripts/bench_tournament.py [--seconds S] [--json]

Prints games/s at each concurrency and, at 64, the share of the run's wall time the store and the ratings take
(committing each game, the live ratings, and the final standings): the issue's goal is under 5%. Also the
referee process's CPU share (the match runner included), since the bots run in their own processes. The last
line is one JSON object with --json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import grpc

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import bot_pb2_grpc as bot_grpc


class InstantBot(bot_grpc.BotServicer):
    """Answers every decision at once with index 0, on both transports."""

    async def Hello(self, request, context):
        return bot_pb.HelloReply(name="instant", version="1", author="bench",
                                 protocol_version=bot_pb.PROTOCOL_VERSION_1,
                                 transports=[bot_pb.TRANSPORT_STREAM, bot_pb.TRANSPORT_UNARY])  # fmt: skip

    async def Decide(self, request, context):
        return bot_pb.DecisionReply(game_id=request.game_id, seq=request.seq, index=0)

    async def Play(self, request_iterator, context):
        async for m in request_iterator:
            if m.HasField("decision"):
                yield bot_pb.DecisionReply(game_id=m.decision.game_id, seq=m.decision.seq, index=0)

    async def GameOver(self, request, context):
        return bot_pb.GameOverAck()


async def serve_instant() -> None:
    server = grpc.aio.server()
    bot_grpc.add_BotServicer_to_server(InstantBot(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


async def measure(addresses: dict[str, str], concurrency: int, seconds: float, deals: int, data: Path) -> dict:
    from referee.fleet import match_player
    from referee.store import open_store
    from referee.tournament import runner
    from referee.tournament.config import parse

    cfg = parse({"name": f"bench-c{concurrency}", "table_size": 4, "deals": deals, "concurrency": concurrency,
                 "entrants": [{"name": n, "address": a} for n, a in addresses.items()]}, "bench")  # fmt: skip
    store = open_store(data)
    spent = {"store": 0.0, "ratings": 0.0, "play": 0.0}

    def timed(key: str, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.perf_counter() - t

        return wrapper

    # Wrapped in place for the run (by setattr: a type checker refuses assigning to a method).
    wrapped = [(store, "save_game", "store"), (store, "finish", "store"), (runner._InOrder, "add", "ratings"),
               (runner, "standings_of", "ratings")]  # fmt: skip
    originals = [getattr(owner, name) for owner, name, _ in wrapped]
    for (owner, name, key), fn in zip(wrapped, originals, strict=True):
        setattr(owner, name, timed(key, fn))
    play_slots = runner.play_slots

    async def timed_play_slots(*a, **k):
        t = time.perf_counter()
        try:
            return await play_slots(*a, **k)
        finally:
            spent["play"] += time.perf_counter() - t

    runner.play_slots = timed_play_slots
    cpu0, t0 = time.process_time(), time.perf_counter()
    try:
        await asyncio.wait_for(runner.run_tournament(cfg, store, match_player, progress=False), seconds)
        finished = True
    except TimeoutError:
        finished = False
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    for (owner, name, _), fn in zip(wrapped, originals, strict=True):
        setattr(owner, name, fn)
    runner.play_slots = play_slots
    games = len(store.games(cfg.tournament_id))
    store.close()
    return {
        "games": games,
        "seconds": wall,
        "games_per_s": games / spent["play"] if spent["play"] else 0.0,
        "overhead_share": (spent["store"] + spent["ratings"]) / wall,
        "referee_cpu_share": cpu / wall,
        "finished": finished,
    }


async def bench(seconds: float) -> dict:
    from referee.fleet import Bot, LocalBots

    me = [sys.executable, str(Path(__file__).resolve()), "--serve-instant"]
    entrants = tuple(Bot(name=f"instant{i}", command=tuple(me)) for i in range(4))
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        async with LocalBots(entrants, Path(tmp) / "logs", "bench") as bots:
            budget = max(1.0, seconds / 3)
            est = (await measure(bots.addresses, 1, 600, 1, Path(tmp) / "calib"))["games_per_s"]
            for c in (1, 8, 64):
                # enough games to fill the budget at the last rate seen, and at least two waves of c games
                deals = max(-(-2 * c // 4), int(est * budget / 4) + 1)
                r = await measure(bots.addresses, c, 600, deals, Path(tmp) / f"c{c}")
                est = r["games_per_s"]
                out[f"games_per_s_{c}"] = round(r["games_per_s"], 2)
                out[f"games_{c}"] = r["games"]
                if c == 64:
                    out["overhead_share_64"] = round(r["overhead_share"], 4)
                    out["referee_cpu_share_64"] = round(r["referee_cpu_share"], 4)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=30.0, help="about how long the whole benchmark runs")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--serve-instant", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve_instant:
        asyncio.run(serve_instant())
        return 0
    from referee.log import configure

    configure(level="warning")
    r = asyncio.run(bench(args.seconds))
    for c in (1, 8, 64):
        print(f"concurrency {c:>2}: {r[f'games_per_s_{c}']:8.2f} games/s ({r[f'games_{c}']} games)")
    print(f"store + ratings share of wall time at 64: {r['overhead_share_64']:.2%} (goal: under 5%)")
    print(f"referee process CPU share of wall time at 64: {r['referee_cpu_share_64']:.2%}")
    if args.json:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
