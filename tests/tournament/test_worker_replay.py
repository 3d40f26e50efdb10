"""The worker replay, with the coordinator in this process (so mutation testing sees it; scripts/mutation.py): a
game whose worker dies is void, and its set is dealt again with a fresh deck on a fresh worker, in at most
MAX_REDEALS more rounds, and then the run stops.
Real worker processes, a real bot that kills its worker (tests/fixtures/worker_killer.py), real SQLite.
The same bound through the real `abluxx` command is in test_workers.py."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from referee.fleet import match_player
from referee.store import open_store
from referee.tournament.config import WorkerSettings, load
from referee.tournament.runner import MAX_REDEALS, TournamentError, run_tournament

KILLER = Path(__file__).resolve().parents[1] / "fixtures" / "worker_killer.py"


def _run(tmp_path: Path, kills: int) -> tuple[list[str], object]:
    """A one-game tournament of the killer (killing at most ``kills`` workers) and a built-in policy on one worker
    process: the pids it killed, and the outcome (or the TournamentError)."""
    log = tmp_path / "kills.txt"
    argv = [sys.executable, str(KILLER), "--log", str(log), "--kills", str(kills), "--port", "0"]
    cfg = tmp_path / "t.toml"
    cfg.write_text('name = "replay"\nseed = 5\ntable_size = 2\ndeals = 1\nseat_orders = "rotations"\n'
                   f'[[entrants]]\nname = "killer"\ncommand = {json.dumps(argv)}\n'
                   '[[entrants]]\nname = "r"\npolicy = "random"\n')  # fmt: skip
    config = load(cfg)
    store = open_store(tmp_path / "d")
    try:
        outcome: object = asyncio.run(run_tournament(config, store, match_player, concurrency=1, progress=False,
                                                     workers=WorkerSettings("processes", 1)))  # fmt: skip
    except TournamentError as e:
        outcome = e
    finally:
        games = len(store.games(config.tournament_id))
        store.close()
    pids = log.read_text().split() if log.exists() else []
    return pids, (outcome, games)


def test_a_game_lost_with_its_worker_every_time_is_tried_one_plus_max_redeals_times(tmp_path: Path) -> None:
    pids, (outcome, games) = _run(tmp_path, -1)
    assert len(pids) == len(set(pids)) == 1 + MAX_REDEALS, pids  # each try on a fresh worker
    assert isinstance(outcome, TournamentError), outcome
    assert f"lost their worker in {1 + MAX_REDEALS} rounds" in str(outcome)
    assert games == 0


@pytest.mark.parametrize("kills", [1, MAX_REDEALS])
def test_a_game_whose_worker_comes_back_is_played_and_stored_once(tmp_path: Path, kills: int) -> None:
    pids, (outcome, games) = _run(tmp_path, kills)
    assert len(pids) == kills
    assert not isinstance(outcome, TournamentError), outcome
    assert games == 2  # both seat orders of the one deal, each stored once
    for record in sorted((tmp_path / "d" / "records").glob("*.abluxx")):
        assert record.stat().st_size > 0
