"""A ladder of real bot processes over real gRPC, one of them killed and started again on its port: its tables
after its death do not play (no fallback wins against an absent bot), the others go on playing, it stands aside
and comes back once it answers again, and every choice still recomputes from the store."""

from __future__ import annotations

import asyncio
import shutil
import signal
import socket
import sys
import time
from pathlib import Path

from referee.fleet import match_player
from referee.store import ladder as ladder_store
from referee.store import open_store
from referee.tournament.config import load
from referee.tournament.ladder_run import replay, run_ladder
from tests.bots.driver import ServedBot

DEADLINE_S = 240.0  # generous: a loaded 2-core machine; what is asserted is what happened, not how fast


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def served(kind: str, port: int) -> ServedBot:
    """``abluxx bot KIND`` on a port the test chose (so that it can start again on it)."""
    exe = shutil.which("abluxx")
    cmd = [exe] if exe else [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
    return ServedBot([*cmd, "bot", kind, "--port", str(port), "--seed", "7"]).wait_ready()


def test_a_killed_bot_stands_aside_and_comes_back_when_it_answers_again(tmp_path: Path) -> None:
    kinds = ["greedy", "random", "counter", "greedy"]
    ports = [free_port() for _ in kinds]
    bots = [served(k, p) for k, p in zip(kinds, ports, strict=True)]
    names = [f"b{i}" for i in range(len(kinds))]
    entrants = "".join(f'[[entrants]]\nname = "{n}"\naddress = "127.0.0.1:{p}"\n'
                       for n, p in zip(names, ports, strict=True))  # fmt: skip
    (tmp_path / "l.toml").write_text(f'name = "gone"\ntable_size = 2\nconcurrency = 2\n[ladder]\n{entrants}')
    config = load(tmp_path / "l.toml")
    tid, victim = config.tournament_id, names[0]
    seen: dict[str, int] = {}

    async def until(store, cond, what: str) -> None:
        deadline = time.monotonic() + DEADLINE_S
        while not cond(store):
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            await asyncio.sleep(0.05)

    def games_with(store, name: str) -> list:
        return [g for g in store.games(tid) if name in g.names]

    async def run() -> None:
        with open_store(tmp_path / "d") as store:
            task = asyncio.create_task(run_ladder(config, store, match_player, progress=False))
            try:
                await until(store, lambda s: len(games_with(s, victim)) >= 2, "the victim's first games")
                bots[0].stop(signal.SIGKILL)
                seen["death"] = time.time()
                seen["choice_at_death"] = ladder_store.next_round(store, tid)
                seen["victim_at_death"] = len(games_with(store, victim))
                n = len(store.games(tid))
                await until(store, lambda s: len(s.games(tid)) >= n + 20, "20 games without it")
                seen["victim_games_while_dead"] = len(games_with(store, victim))
                bots[0] = served(kinds[0], ports[0])  # started again, on its port
                back = seen["victim_games_while_dead"] + 1
                await until(store, lambda s: len(games_with(s, victim)) >= back, "the victim back at a table")
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    try:
        asyncio.run(run())
        with open_store(tmp_path / "d") as store:
            games = store.games(tid)
            rows = ladder_store.rounds(store, tid)
            assert all(a == b for _, a, b in replay(store, config))
    finally:
        for b in bots:
            b.stop()
    after_death = [g for g in games if g.finished_at > seen["death"]]
    victim_faulted = [g for g in after_death if victim in g.names and g.seats[g.names.index(victim)].retired]
    # at most the game in flight at the kill ends by the fault policy; no later game is won against an absent bot
    assert len(victim_faulted) <= 1, [(g.game_id, g.seats) for g in victim_faulted]
    assert seen["victim_games_while_dead"] <= seen["victim_at_death"] + 1
    # its tables after the death were chosen, and did not play: they are in the choices, not in the schedule
    chosen_with_victim = [t for r in rows if r.round >= seen["choice_at_death"] for t in r.tables or () if victim in t]
    assert chosen_with_victim and len(chosen_with_victim) <= 6
    # the others kept playing meanwhile, and once it answered again it played a whole game
    assert sum(victim not in g.names for g in after_death) >= 20
    last = max((g for g in games if victim in g.names), key=lambda g: g.finished_at)
    assert not last.seats[last.names.index(victim)].retired and last.finished_at > seen["death"]
