"""``abluxx demo``: the README's main job. Starts the example bots as real local processes on free ports, runs a
small round robin against them over real gRPC into the data folder, and prints the standings and the command to
replay the best game."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from referee.errors import BadInput, Interrupted, RefereeError
from referee.event_loop import run as run_games
from referee.gc_policy import tune_gc
from referee.records.paths import DEFAULT_DATA_DIR
from referee.terminal import say

from .args import add_data_arg
from .logs import add_log_format, configure_logs

# (entrant name, example bot, its seed): each example bot twice, with different seeds, so that at 3 players every
# deal is played at two tables (duplicate across tables needs at least twice as many entrants as seats)
DEMO_BOTS = [("random", "random", 1), ("greedy", "greedy", 1), ("counter", "counter", 1), ("greedy-2", "greedy", 2),
             ("random-2", "random", 2), ("counter-2", "counter", 2)]  # fmt: skip


def register(sub) -> None:
    p = sub.add_parser("demo", help="run a small tournament of the example bots over real gRPC (under a minute)")
    p.add_argument("--deals", type=int, default=30, help="deals per table (default 30: 600 games)")
    p.add_argument("--table-size", type=int, default=3, choices=range(2, 5), help="players per game (default 3)")
    p.add_argument("--seed", type=int, default=1, help="tournament seed (default 1)")
    p.add_argument("--concurrency", "-c", type=int, default=8, help="games at once (default 8)")
    add_data_arg(p)
    add_log_format(p)
    p.set_defaults(func=run)


def demo_config(args):
    from referee.tournament.config import parse

    # each bot is this same referee's `abluxx bot NAME --port 0`, run with this Python (no PATH needed)
    launcher = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
    entrants = [{"name": name, "command": [*launcher, "bot", bot, "--port", "0", "--seed", str(seed)]}
                for name, bot, seed in DEMO_BOTS]  # fmt: skip
    data = {
        "name": time.strftime("demo-%Y%m%d-%H%M%S"),
        "seed": args.seed,
        "table_size": args.table_size,
        "deals": args.deals,
        "concurrency": args.concurrency,
        "time_control": {"decision_ms": 1000, "bank_ms": 10_000, "grace_ms": 50},
        "entrants": entrants,
    }
    return parse(data, "abluxx demo")


def run(args) -> int:

    from referee.fleet import EntrantError, match_player
    from referee.store import StoreError, open_store
    from referee.tournament.config import ConfigError
    from referee.tournament.runner import TournamentError, run_tournament
    from referee.view.report import write_demo_pages

    try:
        config = demo_config(args)
    except ConfigError as e:  # a flag out of range; the key names it
        raise BadInput(f"{e.key}: {e.reason}") from None
    configure_logs(args)
    names = ", ".join(n for n, _, _ in DEMO_BOTS)
    say(
        f"abluxx demo: starting the example bots ({names}) as local processes, then a round robin at "
        f"{config.table_size} players, {config.deals} deals per table, over gRPC, into {args.data}/",
        flush=True,
    )
    t0 = time.monotonic()
    try:
        store = open_store(args.data)
        with store:
            tune_gc()
            out = run_games(run_tournament(config, store, match_player, source="abluxx demo"))
            best = _best_game(store, out)
            report, best_page = write_demo_pages(store, out.tournament_id, args.data, best[3] if best else None)
    except (StoreError, EntrantError, TournamentError) as e:  # the demo ran and failed: exit 1, whatever the kind
        raise RefereeError(str(e)) from None
    except KeyboardInterrupt:  # the games played so far are stored: say how to play on
        raise Interrupted(f"interrupted; resume with: abluxx tournament resume {config.tournament_id} "
                          f"--data {args.data}") from None  # fmt: skip
    say()
    say(out.standings.table())
    say(f"\n{out.standings.games} games in {time.monotonic() - t0:.0f} s. Standings also in {out.json_path} "
          f"and {out.csv_path}.")  # fmt: skip
    if best is not None:
        game_id, who, score, record = best
        say(f"\nbest game: {game_id}, won by {who} with {score:+d}. Replay it with:")
        say(f"  abluxx replay {record}")
        say(f"or watch it in a browser: abluxx view {record}")
    elsewhere = f" --data {args.data}" if args.data != DEFAULT_DATA_DIR else ""
    say(f"\nall games: abluxx games {out.tournament_id}{elsewhere}")
    say(f"\nreport: {report}")
    say(
        f"\nthe site, live, on this data: abluxx serve{' --data ' + str(args.data) if elsewhere else ''} --port 0 "
        "--http-port 8080 --open"
    )
    if best_page is not None:
        say(f"best game's viewer: {best_page}")
    return 0


def _best_game(store, out) -> tuple[str, str, int, Path] | None:
    """The game the leader won with its highest score (the first such in schedule order)."""
    if not out.standings.rows:
        return None
    leader = out.standings.rows[0].entrant
    best = None
    for g in store.games(out.tournament_id):
        record = store.record_file(g.record_path)
        for s in g.seats:
            if s.entrant == leader and s.place == 1 and record and (best is None or s.score > best[2]):
                best = (g.game_id, leader, s.score, record)
    return best
