"""``--log-format`` for the commands that run games (demo, match, tournament run/resume).

People read the standard output; progress and problems go to stderr as readable lines. ``--log-format json``
turns stderr into JSON log lines (every game, faults, progress) for services and log collectors.
"""

from __future__ import annotations

import argparse

from referee.log import LOG_FORMATS, configure


def add_log_format(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="text",
        help="stderr as readable lines (text, the default) or JSON log lines (json, for services)",
    )


def configure_logs(args: argparse.Namespace, text_level: str = "info") -> None:
    """Readable lines at ``text_level``, or JSON lines at info with --log-format json."""
    if args.log_format == "json":
        configure("info", json=True)
    else:
        configure(text_level, json=False)
