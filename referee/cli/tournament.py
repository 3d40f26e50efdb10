"""``abluxx tournament run CONFIG``, ``abluxx tournament plan CONFIG``, ``abluxx tournament resume ID``,
``abluxx standings [ID]`` and ``abluxx games [ID]`` (docs/tournaments.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from referee.errors import BadInput, Interrupted, NoTournament, RefereeError
from referee.event_loop import run as run_games
from referee.gc_policy import tune_gc
from referee.terminal import say

from .args import (
    add_data_arg,
    add_order_arg,
    add_table_formats,
    add_tournament_arg,
    add_versions_arg,
    add_worker_args,
    in_order,
)
from .logs import add_log_format, configure_logs
from .lookup import open_tournament


def register(sub) -> None:
    t = sub.add_parser("tournament", help="run or resume a tournament: a round robin, or a ladder")
    tsub = t.add_subparsers(dest="tournament_command", metavar="ACTION", required=True)
    p = tsub.add_parser("run", help="run the tournament a TOML file describes (rerun it to resume)")
    p.add_argument("config", type=Path, help="the tournament's TOML file (docs/tournaments.md)")
    _common_run(p)
    p.set_defaults(func=run)
    p = tsub.add_parser("plan", help="how many games a TOML file makes and about how long they take; plays nothing")
    p.add_argument("config", type=Path, help="the tournament's TOML file (docs/tournaments.md)")
    p.add_argument("--concurrency", "-c", type=int, help="games at once (default: the config's, else 8)")
    p.set_defaults(func=plan)
    p = tsub.add_parser("resume", help="resume a stored tournament by id")
    p.add_argument("id", help="the tournament id (abluxx standings lists the latest)")
    _common_run(p)
    p.set_defaults(func=resume)

    p = sub.add_parser("standings", help="a tournament's standings: ratings, scores, faults, head to head")
    add_tournament_arg(p)
    add_data_arg(p)
    add_table_formats(p)
    add_versions_arg(p)
    p.set_defaults(func=standings)

    p = sub.add_parser("games", help="list a tournament's finished games and their records, the latest first")
    add_tournament_arg(p)
    add_data_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    add_order_arg(p)
    p.set_defaults(func=games)


def _common_run(p: argparse.ArgumentParser) -> None:
    add_data_arg(p)
    p.add_argument("--concurrency", "-c", type=int, help="games at once (default: the config's, else 8)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar or progress lines")
    p.add_argument("--games-log", action="store_true", help="print a line for each finished game: who played, "
                   "places, scores and faults (as cutechess-cli's 'Finished game' lines)")  # fmt: skip
    add_worker_args(p)
    add_log_format(p)


def run(args) -> int:
    from referee.tournament.config import ConfigError, load

    try:
        config = load(args.config)
    except ConfigError as e:
        raise BadInput(f"{e}\nnothing was run") from None
    return _run(config, args, source=str(args.config))


def plan(args) -> int:
    from referee.log import configure
    from referee.tournament.config import load
    from referee.tournament.plan import plan as make_plan

    _check_concurrency(args)
    config = load(args.config)
    configure("warning")  # the games that measure the referee's cost are not news
    say(make_plan(config, args.concurrency).text())
    return 0


def resume(args) -> int:
    from referee.tournament.config import TournamentConfig

    store, _ = open_tournament(args.data, None)  # a mistyped --data makes no data folder
    with store:
        row = store.tournament(args.id)
        if row is None:
            raise NoTournament(args.id, f"in {store.path}", [t.id for t in store.tournaments()])
    return _run(TournamentConfig.from_json(row.config), args, source=row.source)


def _check_concurrency(args: argparse.Namespace) -> None:
    if args.concurrency is not None and not 1 <= args.concurrency <= 1024:
        raise BadInput(f"--concurrency must be 1 to 1024, got {args.concurrency}")


def _run(config, args, source: str) -> int:
    from referee.fleet import EntrantError, WorkerError, match_player, settings_from
    from referee.store import StoreError, open_store
    from referee.tournament.ladder_run import run_ladder
    from referee.tournament.runner import NoDealKey, TournamentError, run_tournament

    _check_concurrency(args)
    workers = settings_from(config.workers, args.workers, args.backend, args.ray_address)
    configure_logs(args)
    store = open_store(args.data)
    tid = config.tournament_id
    tune_gc()
    with store:
        try:
            out = run_games(
                (run_ladder if config.ladder else run_tournament)(
                    config,
                    store,
                    match_player,
                    source=source,
                    concurrency=args.concurrency,
                    progress=not args.no_progress,
                    workers=workers,
                    games_log=sys.stdout if args.games_log else None,
                )
            )
        except EntrantError as e:
            raise RefereeError(f"{e}\nthe tournament {tid} did not start") from None
        except (NoDealKey, WorkerError):  # their own exit code: resuming cannot help
            raise
        except (TournamentError, StoreError) as e:
            raise RefereeError(f"{e}\nresume with: abluxx tournament resume {tid} --data {args.data}") from None
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted; resume with: abluxx tournament resume {tid} --data {args.data}") from None
    say(out.standings.table())
    if out.crashes:
        from referee.fleet import crash_summary

        per = "per entrant" if workers.backend == "inline" else "per entrant on each worker"
        say("\ncommand bots whose process ended during the run (each lost the games it was in; restart = "
            f"{config.restart!r}, at most {config.max_restarts} {per}):", file=sys.stderr)  # fmt: skip
        for line in crash_summary(out.crashes):
            say(f"  {line}", file=sys.stderr)
    if out.played == 0:
        say(f"\n(tournament {tid} was already finished; nothing was played)")
    say(f"\nstandings: {out.json_path} and {out.csv_path}")
    say(f"games:     abluxx games {tid} --data {args.data}")
    return 0


def standings(args) -> int:
    from referee.tournament.board import board
    from referee.tournament.standings import dumps

    store, tid = open_tournament(args.data, args.id)
    with store:
        s = board(store, tid, args.all_versions)
    say(dumps(s) if args.json else s.to_csv().rstrip("\n") if args.csv else s.table())
    return 0


def games(args) -> int:
    from referee.store.void import void_games
    from referee.tournament.progress import seat_notes

    store, tid = open_tournament(args.data, args.id)
    with store:
        rows = in_order(store.games(tid), args.oldest_first)
        row = store.tournament(tid)
        assert row is not None  # _open_tournament found it
        scheduled = row.games
        for g in rows:
            record = store.record_file(g.record_path)
            if args.json:
                say(json.dumps({
                    "slot": g.slot, "game_id": g.game_id, "table": g.table, "deal": g.deal, "order": g.order,
                    "seats": [{"entrant": s.entrant, "score": s.score, "place": s.place, "retired": s.retired,
                               "faults": s.faults} for s in g.seats],
                    "end_reason": g.end_reason, "decisions": g.decisions,
                    "record": str(record) if record else None,
                }))  # fmt: skip
                continue
            seats = "  ".join(f"{s.place}.{s.entrant} {s.score:+d}{seat_notes(s.faults, s.retired)}"
                              for s in sorted(g.seats, key=lambda s: s.place))  # fmt: skip
            if any(s.faults or s.retired for s in g.seats):
                seats = "! " + seats  # a game with a fault or a retirement, as --json's faults and retired say
            say(f"{g.slot:>5}  {g.game_id}  {seats}  [{g.end_reason}]  {record or '-'}")
        void = in_order(void_games(store, tid), args.oldest_first)
    for v in void:  # out of the results: their deal was dealt again (docs/tournaments.md, "Interrupted games")
        record = (v.result or {}).get("record")
        if args.json:
            say(json.dumps({"void": True, "slot": v.slot, "game_id": v.game_id, "attempt": v.attempt,
                            "finished": v.finished, "seats": v.seats, "result": v.result}))  # fmt: skip
            continue
        how = f"finished {v.result['scores']}" if v.result else "interrupted"
        say(f"{v.slot:>5}  {v.game_id}  VOID ({how}; its deal was dealt again)  {record or '-'}")
    if not args.json:
        say(f"{len(rows)}/{scheduled} games of {tid}; open one with: abluxx replay RECORD (or abluxx view RECORD)")
        if void:
            say(f"{len(void)} void games: interrupted deals dealt again with fresh decks, not counted")
    return 0
