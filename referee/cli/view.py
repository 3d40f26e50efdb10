"""``abluxx view`` (a game's replay page) and ``abluxx report`` (a tournament's report page)."""

from __future__ import annotations

from pathlib import Path

from referee.errors import BadInput
from referee.proto.abluxxen.v1 import record_pb2
from referee.terminal import say

from .args import add_data_arg
from .lookup import open_tournament


def register(sub) -> None:
    p = sub.add_parser("view", help="write a game's replay viewer: one self-contained HTML page")
    p.add_argument("record", metavar="RECORD", help="a .abluxx record file, its JSON export, or a game id")
    p.add_argument("-o", "--output", metavar="FILE", help="the page to write (default: <game id>.html)")
    add_data_arg(p)
    p.set_defaults(func=run_view)

    p = sub.add_parser("report", help="write a tournament's report: standings, head to head, faults, ratings")
    p.add_argument("tournament", metavar="TOURNAMENT", nargs="?", help="tournament id or name (default: the latest)")
    p.add_argument("-o", "--output", metavar="FILE", default="report.html", help="the page (default report.html)")
    add_data_arg(p)
    games = p.add_mutually_exclusive_group()
    games.add_argument("--all-games", dest="all_games", action="store_true", default=True,
                       help="write a viewer page for every game (the default)")  # fmt: skip
    games.add_argument("--notable-only", dest="all_games", action="store_false",
                       help="write viewer pages only for the notable games (the report says so)")  # fmt: skip
    p.set_defaults(func=run_report)


def load_record(arg: str, data: str | Path) -> record_pb2.GameRecord:
    """A record from a file (``.abluxx``, or ``.json`` in protobuf's JSON mapping) or a game id in ``data``."""
    from referee.records import resolve_record
    from referee.records.bulk import load_record as load

    return load(resolve_record(arg, data))


def run_view(args) -> int:
    from referee.view import ReplayError, write_viewer

    try:
        record = load_record(args.record, args.data)
        out = Path(args.output or f"{record.header.game_id or Path(args.record).stem}.html")
        write_viewer(record, out)
    except (OSError, ValueError, ReplayError) as e:  # RecordError and ReplayError are ValueErrors
        raise BadInput(str(e)) from None
    say(out)
    return 0


def run_report(args) -> int:
    from referee.view.report import write_report

    store, tid = open_tournament(args.data, args.tournament)
    with store:
        try:
            files = write_report(store, tid, Path(args.output), all_games=args.all_games)
        except (OSError, ValueError) as e:
            raise BadInput(str(e)) from None
    say(files.report)
    if files.best_game is not None:
        say(f"best game: {files.best_game}")
    return 0
