"""The standings kept in the store (store/standings.py, docs/ratings.md): a restarted service shows the standings
it showed before without reading the games first (the games are read once, after, to go on from them), and a
copy that does not count the stored games is never shown. A real SQLite file, the service's own Boards."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from referee.engine import EndReason
from referee.match.spec import GameResult, SeatStats
from referee.service.reads import Boards, Reader, ReaderStopped
from referee.store import GameRow, SqliteStore
from referee.store import standings as kept_boards
from referee.tournament.standings import Tally

from .test_reads import _big_store


class Reads:
    """Counts the reads of every game of a tournament from the store; while ``gate`` is clear, a read waits for it
    (so standings shown meanwhile cannot have come from the games)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count, self.gate = 0, threading.Event()
        real = SqliteStore.games

        def counting(store: SqliteStore, tid: str) -> list[GameRow]:
            assert self.gate.wait(30)
            self.count += 1
            return real(store, tid)

        monkeypatch.setattr(SqliteStore, "games", counting)


async def _session(data: Path, tid: str, done: int, reads: Reads) -> tuple[dict, dict, int, int]:
    """One service's life: its first standings (and how many game reads and builds they waited for), then the
    standings once its tally is built; the standings are kept as a stopping service keeps them."""
    reader, store = Reader(data), SqliteStore(data)
    boards = Boards(reader, store)
    try:
        first = (await boards.standings(tid, done)).to_json()
        seen = reads.count, boards.builds
        reads.gate.set()
        while boards.builds == 0:
            await asyncio.sleep(0.01)
        built = (await boards.standings(tid, done)).to_json()
        boards._keeping.add(tid)
        boards.keep_all()
        return first, built, *seen
    finally:
        reader.close()
        store.close()


def test_a_restart_shows_the_standings_it_showed_before_without_reading_the_games(tmp_path, monkeypatch) -> None:
    tid = _big_store(tmp_path / "d", 600)
    reads = Reads(monkeypatch)
    reads.gate.set()
    before, built, waited_reads, waited_builds = asyncio.run(_session(tmp_path / "d", tid, 600, reads))
    assert (waited_reads, waited_builds) == (1, 1)  # nothing kept yet: the first open reads every game
    assert before == built and before["games"] == 600
    reads.count = 0
    reads.gate.clear()  # from here every read of the games waits until the first standings are shown
    after, rebuilt, waited_reads, waited_builds = asyncio.run(_session(tmp_path / "d", tid, 600, reads))
    assert (waited_reads, waited_builds) == (0, 0)  # shown from the kept copy, before any game was read
    assert after == before  # every figure: ratings, scores, intervals, head to head, score differences
    assert reads.count == 1  # then built from the games once, in the background, and the same but for one thing:
    assert _unmarked(rebuilt) == _unmarked(before)  # ratings restored from a kept fit carry no covariance, so the
    # separated marks fall back to sqrt(sigma_a² + sigma_b²) until the next full fit (docs/ratings.md)


def _unmarked(standings: dict) -> dict:
    return {**standings, "standings": [{**r, "separated_from_next": None} for r in standings["standings"]]}


def test_kept_standings_that_miss_a_stored_game_are_not_shown(tmp_path: Path, monkeypatch) -> None:
    tid = _big_store(tmp_path / "d", 599)  # of 600 scheduled
    reads = Reads(monkeypatch)
    reads.gate.set()
    before, *_ = asyncio.run(_session(tmp_path / "d", tid, 599, reads))
    with SqliteStore(tmp_path / "d") as store:  # a game commits after the standings were kept
        (slot,) = store.slots(tid, pending_only=True)
        assert set(kept_boards.load(store, tid)) == {""}
        store.save_game(tid, slot, GameResult(slot.game_id, (9, 1), (1, 2), EndReason.EMPTY_HAND,
                                              [SeatStats(), SeatStats()], 40, "", None))  # fmt: skip
        assert kept_boards.load(store, tid) == {}  # its mark no longer counts the stored games
    reads.count = 0
    after, _, waited_reads, waited_builds = asyncio.run(_session(tmp_path / "d", tid, 600, reads))
    assert (waited_reads, waited_builds) == (1, 1) and after["games"] == 600 and before["games"] == 599


def test_a_ladder_board_of_some_entrants_is_kept_apart_from_the_whole_board(tmp_path: Path) -> None:
    tid = _big_store(tmp_path / "d", 120)

    async def main() -> tuple[dict, dict]:
        reader, store = Reader(tmp_path / "d"), SqliteStore(tmp_path / "d")
        boards = Boards(reader, store)
        try:
            whole = await boards.standings(tid, 120)
            some = await boards.standings(tid, 120, shown={whole.rows[0].entrant, whole.rows[-1].entrant})
            boards._keeping.add(tid)
            boards.keep_all()
            return json.loads(json.dumps(whole.to_json())), json.loads(json.dumps(some.to_json()))
        finally:
            reader.close()
            store.close()

    whole, some = asyncio.run(main())
    with SqliteStore(tmp_path / "d") as store:
        kept = kept_boards.load(store, tid)
    shown = kept_boards.shown_key({whole["standings"][0]["entrant"], whole["standings"][-1]["entrant"]})
    assert set(kept) == {"", shown}
    assert len(kept[shown]["standings"]) == 2 and [r["rank"] for r in kept[shown]["standings"]] == [1, 2]
    assert kept[""]["standings"] == whole["standings"] and kept[shown]["standings"] == some["standings"]


def test_a_stopping_service_does_not_wait_for_a_board_to_be_counted(tmp_path: Path, monkeypatch) -> None:
    """A stop while a board's games are being counted (minutes at 100,000 games) ends that count at its next game
    instead of waiting for it; pages waiting on it get the error, and the next start counts again."""
    tid = _big_store(tmp_path / "d", 600)
    counted: list[int] = []
    real_count, real_games = Tally.count, SqliteStore.games
    monkeypatch.setattr(Tally, "count", lambda self, g: (counted.append(1), real_count(self, g))[1])
    reached, release = threading.Event(), threading.Event()

    def games(store: SqliteStore, t: str):
        for i, row in enumerate(real_games(store, t)):
            if i == 10:
                reached.set()
                assert release.wait(30)
            yield row

    monkeypatch.setattr(SqliteStore, "games", games)

    async def stop_mid_build() -> None:
        reader, store = Reader(tmp_path / "d"), SqliteStore(tmp_path / "d")
        page = asyncio.ensure_future(Boards(reader, store).standings(tid, 600))
        assert await asyncio.to_thread(reached.wait, 30)
        closer = threading.Thread(target=reader.close)
        closer.start()
        assert await asyncio.to_thread(reader.stopping.wait, 30)
        release.set()
        await asyncio.to_thread(closer.join, 30)
        assert not closer.is_alive()
        with pytest.raises(ReaderStopped):
            await page
        store.close()

    asyncio.run(stop_mid_build())
    assert len(counted) == 10  # the ten games before the stop, none after
