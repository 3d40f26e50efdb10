"""``abluxx verify``, ``abluxx export`` and ``abluxx replay``: a game record checked, as JSON, and in words.

RECORD is a record file or a game id (looked up as ``<data>/records/<game_id>.abluxx``). Exit status: 0 fine,
1 the record does not verify (or is incomplete), 2 it cannot be read.
"""

from __future__ import annotations

import argparse

from google.protobuf import json_format

from referee.errors import BadInput, RefereeError
from referee.proto.abluxxen.v1.record_pb2 import GameRecord
from referee.records import (
    DealNotRevealed,
    VerifyError,
    read_record,
    resolve_record,
    verify_record,
)
from referee.records.text import replay_turns
from referee.terminal import say

from .args import add_data_arg


def _add_record_args(p) -> None:
    p.add_argument("record", metavar="RECORD", help="a record file, or a game id looked up in the data folder")
    add_data_arg(p)


def register(sub) -> None:
    p = sub.add_parser("verify", help="re-run a game record with the engine and check every decision")
    _add_record_args(p)
    p.set_defaults(func=run_verify)

    p = sub.add_parser("export", help="print a game record as JSON (protobuf's JSON mapping of GameRecord)")
    _add_record_args(p)
    p.add_argument("--json", action="store_true", help="JSON output (the only format, and the default)")
    p.set_defaults(func=run_export)

    p = sub.add_parser("replay", help="tell a recorded game turn by turn")
    _add_record_args(p)
    view = p.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, metavar="N", help="as seat N saw it: only its hand, others' draws hidden")
    view.add_argument("--public", action="store_true", help="as a spectator saw it: no hands")
    p.add_argument("--step", action="store_true", help="wait for Enter between turns (q to quit)")
    p.set_defaults(func=run_replay)


def _load(args: argparse.Namespace) -> GameRecord:
    """The record RECORD names; RecordError (exit 2) when it cannot be read."""
    return read_record(resolve_record(args.record, args.data))


def run_verify(args) -> int:
    record = _load(args)
    try:
        verify_record(record)
    except DealNotRevealed as e:
        say(f"not yet: {record.header.game_id}: {e}")
        return 1
    except VerifyError as e:
        say(f"mismatch: {record.header.game_id}: {e}")
        return 1
    f = record.footer
    say(f"ok: {record.header.game_id} {len(record.decisions)} decisions, digest {f.final_digest}")
    return 0


def run_export(args) -> int:
    record = _load(args)
    say(json_format.MessageToJson(record, preserving_proto_field_name=True))  # snake_case, as every --json
    return 0


def run_replay(args) -> int:
    record = _load(args)
    try:
        turns = replay_turns(record, seat=args.seat, public=args.public)
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
