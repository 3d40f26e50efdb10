"""``abluxx backup`` and ``abluxx restore``: a consistent copy of a data folder in use, its check, and putting it
back (docs/operations.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from referee.store.backup import backup, check, restore
from referee.terminal import say

from .args import add_data_arg


def register(sub) -> None:
    p = sub.add_parser("backup", help="copy a data folder consistently, even while it is served; or --check a copy")
    p.add_argument("dest", type=Path, metavar="DEST", help="the backup's folder (missing or empty)")
    p.add_argument("--check", action="store_true", help="verify the backup DEST against its manifest instead")
    add_data_arg(p)
    p.set_defaults(func=run_backup)

    p = sub.add_parser("restore", help="copy a checked backup into a new data folder")
    p.add_argument("backup", type=Path, metavar="BACKUP", help="a folder `abluxx backup` wrote")
    add_data_arg(p)
    p.set_defaults(func=run_restore)


def run_backup(args: argparse.Namespace) -> int:
    if args.check:
        problems = check(args.dest)
        for problem in problems:
            say(problem)
        if not problems:
            say(f"ok: {args.dest}")
        return 1 if problems else 0
    manifest = backup(args.data, args.dest, say=lambda line: say(line, file=sys.stderr, flush=True))
    say(f"backed up {args.data} to {args.dest}: {len(manifest.files)} files, schema version "
        f"{manifest.schema_version}; {len(manifest.left_out)} records of games in flight left out")  # fmt: skip
    return 0


def run_restore(args: argparse.Namespace) -> int:
    files = restore(args.backup, args.data)
    say(f"restored {files} files into {args.data}")
    return 0
