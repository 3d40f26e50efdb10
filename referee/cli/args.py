"""Arguments several commands share."""

from __future__ import annotations

import argparse
from pathlib import Path

from referee.records.paths import DEFAULT_DATA_DIR


def add_data_arg(p: argparse.ArgumentParser) -> None:
    """``--data DIR``: the data folder (the store, the records), ``./abluxx-data`` by default."""
    p.add_argument("--data", type=Path, default=DEFAULT_DATA_DIR, metavar="DIR",
                   help=f"data folder (default ./{DEFAULT_DATA_DIR})")  # fmt: skip
