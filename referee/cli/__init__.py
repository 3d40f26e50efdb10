"""The ``abluxx`` command: thin wrappers over the referee's parts.

Each subcommand lives in its own module here with a ``register(subparsers)`` function that adds its parser and
sets ``func``; ``main`` lists the modules.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from referee import __version__
from referee.errors import RefereeError
from referee.terminal import say

# One module per subcommand (or group of subcommands), in the order `abluxx --help` lists them.
COMMAND_MODULES = [
    "demo", "bot", "match", "duel", "gauntlet", "records", "view", "tournament", "serve", "backup", "remote",
]  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="abluxx", description="Referee for Abluxxen (Linko!) bot competitions.")
    parser.add_argument("--version", action="version", version=f"abluxx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f"referee.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; its RefereeError becomes a line on stderr and the error's exit code (docs/cli.md)."""
    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # here, not at exit, so that a reader gone away is caught below
        return code
    except RefereeError as e:
        say(f"abluxx {args.command}: {e.message}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        say("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`abluxx games | head -1`): stop quietly, as other Unix tools do. Point stdout at
        # /dev/null so that the flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
