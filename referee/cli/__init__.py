"""The ``abluxx`` command: thin wrappers over the referee's parts.

Each subcommand lives in its own module here with a ``register(subparsers)`` function that adds its parser and
sets ``func``; ``main`` lists the modules.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from referee import __version__
from referee.errors import RefereeError
from referee.terminal import say

# One module per subcommand (or group of subcommands), in the order `abluxx --help` lists them, with the commands
# each adds. A command line that names a command imports only its module: the others' imports (the rating fit's
# scipy, the site's web stack) cost a CLI run or a bot process 0.2 CPU-seconds it does not need.
COMMAND_MODULES = {
    "demo": ("demo",), "bot": ("bot",), "match": ("match",), "duel": ("duel",), "gauntlet": ("gauntlet",),
    "records": ("verify", "export", "replay"), "view": ("view", "report"),
    "tournament": ("tournament", "standings", "games"), "serve": ("serve",), "backup": ("backup", "restore"),
    "remote": ("submit", "remote"),
}  # fmt: skip


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; or, when ``argv`` starts with a command's name, of that command's module only.
    Anything else (no command, ``--help``, ``--version``, a name no module adds) gets every command, so that help
    and argparse's "invalid choice" list them all."""
    parser = argparse.ArgumentParser(prog="abluxx", description="Referee for Abluxxen (Linko!) bot competitions.")
    parser.add_argument("--version", action="version", version=f"abluxx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    named = argv[0] if argv else None
    modules = [name for name, commands in COMMAND_MODULES.items() if named in commands] or list(COMMAND_MODULES)
    for name in modules:
        importlib.import_module(f"referee.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; its RefereeError becomes a line on stderr and the error's exit code (docs/cli.md)."""
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
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
