"""Bot health (docs/bot-health.md): down at an absence, probed at doubling intervals on a clock the test
moves, up at the first good Hello, suspended after too long down; all of it kept in a real SQLite store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from referee.store import SqliteStore
from referee.store import health as health_store
from referee.tournament.health import Health, HealthSettings


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Bot:
    """A Hello that answers as told, and counts how often it was asked."""

    def __init__(self) -> None:
        self.alive = False
        self.asked = 0

    async def __call__(self, name: str) -> bool:
        self.asked += 1
        return self.alive


def make(tmp_path: Path, **settings: float) -> tuple[Health, Clock, Bot, list[tuple[str, str]]]:
    clock, bot, changes = Clock(), Bot(), []
    h = Health(
        SqliteStore(tmp_path),
        bot,
        clock=clock,
        settings=HealthSettings(**settings),
        on_change=lambda name, row: changes.append((name, row.status)),
        wall=clock,
    )
    return h, clock, bot, changes


def test_down_probed_at_doubling_intervals_then_up(tmp_path: Path) -> None:
    h, clock, bot, changes = make(tmp_path, first_probe_s=5, max_probe_s=20)
    assert h.available("b.v1")
    h.absent("b.v1", "no connection")
    assert not h.available("b.v1") and changes == [("b.v1", "down")]
    asked_at = []
    for _ in range(60):  # one simulated minute, a second at a time
        clock.now += 1
        before = bot.asked
        asyncio.run(h.probe_once())
        if bot.asked > before:
            asked_at.append(clock.now - 1000)
    assert asked_at == [5, 15, 35, 55]  # 5, then 10, then 20 (the cap), 20
    row = health_store.get(h.store, ["b.v1"])["b.v1"]
    assert (row.status, row.probes, row.reason, row.since) == ("down", 4, "no connection", 1000)
    bot.alive = True
    clock.now += 20
    asyncio.run(h.probe_once())
    assert h.available("b.v1") and changes[-1] == ("b.v1", "up")
    assert health_store.get(h.store, ["b.v1"])["b.v1"].probes == 0


def test_suspended_after_long_down_until_submitted_again(tmp_path: Path) -> None:
    h, clock, bot, changes = make(tmp_path, first_probe_s=5, max_probe_s=60, suspend_after_s=300)
    h.absent("b.v1", "crashed mid-game")
    clock.now += 301
    asyncio.run(h.probe_once())
    assert h.status("b.v1") == "suspended"
    bot.alive, asked = True, bot.asked
    clock.now += 3600
    asyncio.run(h.probe_once())
    assert h.status("b.v1") == "suspended" and bot.asked == asked  # no more probes
    h.cleared("b.v1")
    assert h.available("b.v1") and [s for _, s in changes] == ["down", "suspended", "up"]


def test_missed_games_are_counted_and_kept(tmp_path: Path) -> None:
    h, _clock, _bot, _ = make(tmp_path)
    h.absent("b.v1", "no Hello")
    h.missed("b.v1")
    h.missed("b.v1", 2)
    h.missed("never.down")
    rows = health_store.get(h.store, ["b.v1", "never.down", "absent"])
    assert rows["b.v1"].missed == 3 and rows["never.down"] == health_store.HealthRow("never.down", "up", 0, 1)
    assert "absent" not in rows


def test_a_restart_resumes_probing_with_the_time_down_so_far(tmp_path: Path) -> None:
    h, clock, _bot, _ = make(tmp_path, first_probe_s=5, suspend_after_s=100)
    h.absent("b.v1", "no connection")
    h.store.close()
    clock.now += 60
    again = Health(SqliteStore(tmp_path), Bot(), clock=clock, settings=h.settings, wall=clock)
    assert again.status("b.v1") == "down"
    clock.now += 41
    asyncio.run(again.probe_once())
    assert again.status("b.v1") == "suspended"


def test_a_probe_that_raises_or_hangs_is_a_failed_probe(tmp_path: Path) -> None:
    async def broken(name: str) -> bool:
        if name == "raises":
            raise ConnectionError("refused")
        await asyncio.sleep(3600)
        return True

    clock = Clock()
    h = Health(SqliteStore(tmp_path), broken, clock=clock, settings=HealthSettings(probe_timeout_s=0.05), wall=clock)
    for name in ("raises", "hangs"):
        h.absent(name, "x")
    clock.now += 5
    asyncio.run(h.probe_once())
    rows = health_store.get(h.store, ["raises", "hangs"])
    assert [rows[n].probes for n in ("raises", "hangs")] == [1, 1]


def test_bad_settings_are_named() -> None:
    with pytest.raises(ValueError, match="first_probe_s"):
        HealthSettings(first_probe_s=0)
    with pytest.raises(ValueError, match="max_probe_s"):
        HealthSettings(first_probe_s=10, max_probe_s=5)
