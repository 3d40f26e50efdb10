"""The ratings' fit kept in the store (store/ratings.py, docs/ratings.md): a restart's standings come from it
without rating the games again; each game the service adds keeps its seats' ratings; a store changed behind the
fit's back is rated again. A real SQLite file, the service's own Boards."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from referee.engine import EndReason
from referee.match.spec import GameResult, SeatStats
from referee.rating import Ratings
from referee.service.reads import Boards, Reader
from referee.store import SqliteStore
from referee.store import ratings as kept_fits

from .test_reads import _big_store


def _standings(data: Path, tid: str, done: int) -> list[tuple[str, float, float]]:
    async def main() -> list[tuple[str, float, float]]:
        reader, store = Reader(data), SqliteStore(data)
        try:
            s = await Boards(reader, store).standings(tid, done)
            return [(r.entrant, r.mu, r.sigma) for r in s.rows]
        finally:
            reader.close()
            store.close()

    return asyncio.run(main())


def _count_adds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    adds = [0]
    real = Ratings.add

    def counting(self: Ratings, seats: tuple[str, ...], places: tuple[int, ...]) -> None:
        adds[0] += 1
        real(self, seats, places)

    monkeypatch.setattr(Ratings, "add", counting)
    return adds


def test_a_restart_shows_the_kept_fit_without_rating_the_games_again(tmp_path: Path, monkeypatch) -> None:
    tid = _big_store(tmp_path / "d", 300)
    adds = _count_adds(monkeypatch)
    first = _standings(tmp_path / "d", tid, 300)
    assert adds[0] == 300  # the first open rates every game once, and keeps the fit
    again = _standings(tmp_path / "d", tid, 300)
    assert adds[0] == 300 and again == first


def test_a_store_changed_behind_the_fits_back_is_rated_again(tmp_path: Path, monkeypatch) -> None:
    tid = _big_store(tmp_path / "d", 300)
    first = _standings(tmp_path / "d", tid, 300)
    with SqliteStore(tmp_path / "d") as store:
        assert kept_fits.load(store, tid) is not None
        store.db.execute("DELETE FROM results WHERE game_id IN (SELECT game_id FROM games WHERE slot = 0)")
        store.db.execute("DELETE FROM games WHERE tournament_id = ? AND slot = 0", (tid,))
        assert kept_fits.load(store, tid) is None  # the mark no longer matches the stored games
    adds = _count_adds(monkeypatch)
    again = _standings(tmp_path / "d", tid, 299)
    assert adds[0] == 299 and again != first


def test_each_game_the_service_adds_keeps_its_seats_ratings(tmp_path: Path) -> None:
    tid = _big_store(tmp_path / "d", 299)  # of 300 scheduled
    with SqliteStore(tmp_path / "d") as store:
        (slot,) = store.slots(tid, pending_only=True)

    async def main() -> list[tuple[str, float, float]]:
        reader, loop_store = Reader(tmp_path / "d"), SqliteStore(tmp_path / "d")
        boards = Boards(reader, loop_store)
        await boards.standings(tid, 299)
        with SqliteStore(tmp_path / "d") as store:  # the game finishes and commits, then the service hears of it
            store.save_game(tid, slot, GameResult(slot.game_id, (9, 1), (1, 2), EndReason.EMPTY_HAND,
                                                  [SeatStats(), SeatStats()], 40, "", None))  # fmt: skip
            game = next(g for g in store.games(tid) if g.slot == slot.slot)
        boards.add(tid, game)
        s = await boards.standings(tid, 300)
        await reader.run(lambda store: None)  # the keeping, submitted before, is done
        reader.close()
        loop_store.close()
        return [(r.entrant, r.mu, r.sigma) for r in s.rows]

    live = asyncio.run(main())
    with SqliteStore(tmp_path / "d") as store:
        kept = kept_fits.load(store, tid)
    assert kept is not None and kept.games == 300
    assert _standings(tmp_path / "d", tid, 300) == live  # a restart shows what the service showed
