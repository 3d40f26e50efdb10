"""The ``abluxx`` command: thin wrappers over the referee's parts.

Each subcommand lives in its own module here with a ``register(subparsers)`` function that adds its parser and
sets ``func``; ``main`` lists the modules.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from referee import __version__

# One module per subcommand (or group of subcommands), in the order `abluxx --help` lists them.
COMMAND_MODULES = ["demo", "bot", "match", "records", "view", "tournament", "serve", "remote"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="abluxx", description="Referee for Abluxxen (Linko!) bot competitions.")
    parser.add_argument("--version", action="version", version=f"abluxx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f"referee.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
