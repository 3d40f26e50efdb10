"""Sandboxed command entrants in a real tournament (``abluxx tournament run``): each runs where its games are
played, in the coordinator's process or on each worker process, started once there and reused for every game,
unless ``fresh_process`` starts one for each game. The games are played over the sandbox's Unix socket without a
fault."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from tests.sandbox.conftest import needs_sandbox
from tests.tournament.test_real import ABLUXX, abluxx, standings_json, write_config

pytestmark = needs_sandbox()


def _entrant(name: str, kind: str) -> str:
    argv = [sys.executable, "-c", ABLUXX[2], "bot", kind, "--port", "0"]
    return f"[[entrants]]\nname = {json.dumps(name)}\ncommand = {json.dumps(argv)}\nsandbox = true\n"


RAY = pytest.mark.skipif(importlib.util.find_spec("ray") is None and os.environ.get("CI") != "true",
                         reason='Ray is an optional extra: pip install -e ".[ray]"')  # fmt: skip


@pytest.mark.parametrize(("workers", "fresh", "starts"), [((), False, 1), (("--workers", "2"), False, 1),
                                                           ((), True, None),
                                                           pytest.param(("--backend", "ray", "--workers", "2"), False,
                                                                        1, marks=RAY)])  # fmt: skip
def test_sandboxed_entrants_play_a_tournament(tmp_path: Path, workers: tuple[str, ...], fresh: bool,
                                              starts: int | None) -> None:  # fmt: skip
    text = f'name = "boxed"\nseed = 3\ndeals = 2\nfresh_process = {str(fresh).lower()}\n[sandbox]\ntmp_mb = 16\n'
    cfg = write_config(tmp_path, text + _entrant("sg", "greedy") + _entrant("sc", "counter") +
                       '[[entrants]]\nname = "r"\npolicy = "random"\n')  # fmt: skip
    data = tmp_path / "data"
    out = abluxx("tournament", "run", cfg, "--data", data, *workers, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = {r["entrant"]: r for r in standings_json(tmp_path, data)["standings"]}
    assert rows["sg"]["games"] == rows["sc"]["games"] == 4
    assert all(not r["faults"] for r in rows.values()), rows
    logs = list((data / "logs").glob("*-sg.log"))
    assert logs and all("listening on unix:/run/abluxx/bot.sock" in p.read_text() for p in logs)
    if starts is not None:  # once where its games are played (the run's process, or each worker), for every game
        assert [p.read_text().count("listening on") for p in logs] == [starts] * len(logs)
        assert len(logs) == (2 if workers else 1)
    else:  # once to answer Hello, then once for each of its games
        assert sum(p.read_text().count("listening on") for p in logs) == 1 + 4
