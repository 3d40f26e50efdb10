"""Builds that several tests need (the C++ bot, the Node bot's packages), made once per test run even when
pytest-xdist runs the tests in several worker processes: each build runs under a file lock that every worker of
the run shares, so the first worker to ask builds and the others wait for it and find the work done."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

CPP_DIR = Path(__file__).resolve().parents[1] / "clients" / "cpp"
NODE_DIR = Path(__file__).resolve().parents[1] / "clients" / "node"


@contextlib.contextmanager
def run_lock(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """The folder ``name`` shared by every worker of this run (created if new), held under an exclusive lock."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # pytest-N/popen-gwK: pytest-N is this run's, shared by its workers
    folder = base / name
    folder.mkdir(exist_ok=True)
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield folder


def build_cpp_bot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The C++ bot's binary, built with its Makefile outside the source tree, and make's run. Make is
    incremental: after the first worker's build the others' make has nothing to do."""
    with run_lock(tmp_path_factory, "cppbot") as build:
        done = subprocess.run(
            ["make", "-C", str(CPP_DIR), f"BUILD={build}", "-j2"], capture_output=True, text=True, timeout=900
        )
    return build / "cppbot", done


def node_packages(tmp_path_factory: pytest.TempPathFactory, npm: str) -> None:
    """The Node bot's pinned packages in clients/node/node_modules (`npm ci`, once, if they are missing)."""
    with run_lock(tmp_path_factory, "node-packages"):
        if not (NODE_DIR / "node_modules").is_dir():
            subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300)
