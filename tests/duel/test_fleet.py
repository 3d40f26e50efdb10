"""A duel on the fleet's workers (docs/duel.md, "On workers") stores what the same duel stores in one process: the
same pairs (deals, seats, roles, scores, places, differences), the same records, the same verdict. Real worker
processes, a real example bot process in the command seat (one started afresh for every game, on the worker that
plays it), real SQLite; the deals are fixed by the test (``plans``), as two secret-deal runs never share them."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.duel.runner import DuelSettings, DuelState, PairPlan, run_duel
from referee.duel.store import DuelStore
from referee.fleet import WorkerSettings
from referee.records import read_record, verify_record
from referee.stats import Sprt, Verdict
from referee.tournament.config import EntrantConfig

from .test_cli import ABLUXX, abluxx

BOT = (sys.executable, "-c", ABLUXX[2], "bot")
NEVER = Sprt(alpha=1e-9, beta=1e-9, margin=0.01)  # a test this wide decides nothing in a few pairs


def _plan(i: int) -> PairPlan:
    return PairPlan(i, 7_000 + 13 * i, i % 2, f"fleet-p{i}")


def _duel(tmp_path: Path, name: str, settings: DuelSettings, workers: WorkerSettings) -> tuple[DuelState, Any]:
    with DuelStore(tmp_path / name) as store:
        state = DuelState("fleet", settings, {})
        store.create(state.duel_id, settings.to_json())
        asyncio.run(run_duel(state, store, concurrency=4, workers=workers, plans=_plan))
        return state, store.pairs(state.duel_id)


def _rows(pairs: list[Any]) -> list[tuple]:
    """The stored pairs as a comparable value, less where each record file is, plus each record's final digest
    (after checking it verifies by replay)."""
    out = []
    for p in sorted(pairs, key=lambda p: p.pair):
        games = []
        for g in p.games:
            record = read_record(Path(g["record"]))
            verify_record(record)
            games.append({**{k: v for k, v in g.items() if k != "record"}, "digest": record.footer.final_digest})
        out.append((p.pair, p.deck_seed, p.seat, games, p.diff, p.place_diff))
    return out


def test_a_duel_on_two_worker_processes_stores_what_it_stores_inline(tmp_path: Path) -> None:
    settings = DuelSettings(
        candidate=EntrantConfig("new", command=(*BOT, "greedy", "--port", "0")),
        baseline=EntrantConfig("old", policy="counter"),
        field=(),
        max_games=16,
        test=NEVER,
    )
    inline, inline_pairs = _duel(tmp_path, "inline", settings, WorkerSettings())
    on_workers, worker_pairs = _duel(tmp_path, "w2", settings, WorkerSettings("processes", 2))
    assert len(inline_pairs) == len(worker_pairs) == 8  # every pair of the budget
    assert _rows(worker_pairs) == _rows(inline_pairs)
    assert on_workers.decision() == inline.decision() == (Verdict.INCONCLUSIVE, 8)
    # the command bot was started on the workers (a log per start there), once per game after each start check
    logs = sorted((tmp_path / "w2" / "logs").glob("fleet-w*-new.log"))
    assert [p.name for p in logs] == ["fleet-w0-new.log", "fleet-w1-new.log"]
    starts = sum(p.read_text().count("listening on") for p in logs)
    assert starts == 2 + 16  # each worker's start check, then one start for each of the 16 games


def test_a_decided_duel_on_workers_has_the_verdict_and_counted_pairs_it_has_inline(tmp_path: Path) -> None:
    settings = DuelSettings(
        candidate=EntrantConfig("cand", policy="greedy"),
        baseline=EntrantConfig("base", policy="random"),
        field=(EntrantConfig("f1", policy="counter"), EntrantConfig("f2", policy="random")),
        table_size=3,
        max_games=400,
    )
    inline, _ = _duel(tmp_path, "inline", settings, WorkerSettings())
    on_workers, _ = _duel(tmp_path, "w2", settings, WorkerSettings("processes", 2))
    verdict, counted = inline.decision()
    assert verdict is Verdict.H1 and counted < settings.max_pairs  # decided early, at its first crossing
    assert on_workers.decision() == (verdict, counted)
    assert _rows(on_workers.counted()) == _rows(inline.counted())  # later pairs may differ: in flight, not counted


@pytest.mark.parametrize("command", ["duel", "gauntlet"])
def test_duel_and_gauntlet_take_workers_on_the_command_line(tmp_path: Path, command: str) -> None:
    bots = ["greedy", "counter"] if command == "duel" else ["greedy", "--field", "counter"]
    out = abluxx(command, *bots, "--max-games", "4", "--workers", "2", "--json", "--data", "d", cwd=tmp_path)
    assert out.returncode == 3, out.stderr  # 2 pairs: too few for a verdict
    assert json.loads(out.stdout.strip().splitlines()[-1])["games"] == 4
    records = sorted((tmp_path / "d" / "records").glob("*.abluxx"))
    assert len(records) == 4  # both games of both pairs, written by the coordinator from the workers' bytes
    for path in records:
        verify_record(read_record(path))


def test_bad_worker_flags_exit_2_and_store_nothing(tmp_path: Path) -> None:
    out = abluxx("duel", "greedy", "counter", "--workers", "0", "--data", "d", cwd=tmp_path)
    assert out.returncode == 2 and "--workers must be 1 to 256, got 0" in out.stderr, out.stderr
    assert not (tmp_path / "d").exists()
