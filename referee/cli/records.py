"""``abluxx verify``, ``abluxx export`` and ``abluxx replay``: a game record checked, as JSON, and in words.

RECORD is a record file (``.abluxx``, or the JSON ``export`` writes) or a game id (looked up as
``<data>/records/<game_id>.abluxx``); ``verify`` also takes many of them and folders. Exit status: 0 fine, 1 a
record does not verify (or is incomplete, or its deal is not yet revealed), 2 one cannot be read.
"""

from __future__ import annotations

import argparse
import os

from google.protobuf import json_format

from referee.errors import BadInput, RefereeError
from referee.proto.abluxxen.v1.record_pb2 import GameRecord
from referee.records import resolve_record
from referee.records.bulk import MAX_JOBS, load_record, record_files, verify_files
from referee.records.text import replay_turns, seat_of
from referee.records.verify import VerifyError
from referee.terminal import say

from .args import add_data_arg


def _add_record_args(p) -> None:
    p.add_argument("record", metavar="RECORD", help="a record file (or its JSON export), or a game id")
    add_data_arg(p)


def register(sub) -> None:
    p = sub.add_parser("verify", help="re-run game records with the engine and check every decision")
    p.add_argument("records", nargs="+", metavar="RECORD",
                   help="record files (or their JSON exports), game ids, or folders of records")  # fmt: skip
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help=f"verify on N worker processes (default: one per core, at most {MAX_JOBS})")  # fmt: skip
    add_data_arg(p)
    p.set_defaults(func=run_verify)

    p = sub.add_parser("export", help="print a game record as JSON (protobuf's JSON mapping of GameRecord)")
    _add_record_args(p)
    p.add_argument("--json", action="store_true", help="JSON output (the only format, and the default)")
    p.set_defaults(func=run_export)

    p = sub.add_parser("replay", help="tell a recorded game turn by turn")
    _add_record_args(p)
    view = p.add_mutually_exclusive_group()
    view.add_argument(
        "--seat",
        metavar="N|NAME",
        help="as seat N (or entrant NAME's seat) saw it: its hand only, others' draws hidden",
    )
    view.add_argument("--public", action="store_true", help="as a spectator saw it: no hands")
    p.add_argument("--step", action="store_true", help="wait for Enter between turns (q to quit)")
    p.set_defaults(func=run_replay)


def _load(args: argparse.Namespace) -> GameRecord:
    """The record RECORD names; RecordError (exit 2) when it cannot be read."""
    return load_record(resolve_record(args.record, args.data))


def run_verify(args) -> int:
    """One line per record, in the order given; with more than one, a summary line and the worst status: 2 when a
    record cannot be read, else 1 when one does not verify (or is not yet revealed), else 0."""
    if not 1 <= args.jobs <= MAX_JOBS:
        raise BadInput(f"--jobs must be 1 to {MAX_JOBS}, got {args.jobs}")
    paths = record_files(args.records, args.data)
    if len(paths) == 1 and len(args.records) == 1 and not os.path.isdir(args.records[0]):
        (one,) = verify_files(paths, 1)
        if one.status == "unreadable":
            raise BadInput(one.line.removeprefix("unreadable: "))
        say(one.line)
        return 0 if one.status == "ok" else 1
    counts = {"ok": 0, "mismatch": 0, "not yet": 0, "unreadable": 0}
    for verdict in verify_files(paths, args.jobs):
        counts[verdict.status] += 1
        say(verdict.line, flush=True)
    bad = len(paths) - counts["ok"]
    say(f"{len(paths)} records: " + ", ".join(f"{n} {status}" for status, n in counts.items())
        + ("" if bad else " (all verify)"))  # fmt: skip
    return 2 if counts["unreadable"] else 1 if bad else 0


def run_export(args) -> int:
    record = _load(args)
    say(json_format.MessageToJson(record, preserving_proto_field_name=True))  # snake_case, as every --json
    return 0


def run_replay(args) -> int:
    record = _load(args)
    try:
        seat = None if args.seat is None else seat_of(record.header, args.seat)
        turns = replay_turns(record, seat=seat, public=args.public)
        for i, lines in enumerate(turns):
            if i and args.step:
                try:
                    answer = input("-- Enter: next turn, q: quit -- ")
                except EOFError:
                    return 0
                if answer.strip().lower().startswith("q"):
                    return 0
            say("\n".join(lines), flush=True)
    except VerifyError as e:
        raise RefereeError(f"record {record.header.game_id} does not verify: {e}") from None
    except ValueError as e:  # a seat the game does not have
        raise BadInput(f"record {record.header.game_id} cannot be shown: {e}") from None
    return 0
