"""Fixtures for the browser tests: Debian's Chromium driven by Playwright, and a real tournament in a real store.

Without Chromium these tests skip with a message saying how to install it; with CI=true they fail instead.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from referee.match.spec import GameResult, SeatStats
from referee.proto.abluxxen.v1 import record_pb2
from referee.records import FAULT_NAME, record_bytes
from referee.store import open_store
from referee.tournament import deals, schedule
from referee.tournament.config import parse
from referee.wire import END_FROM_PB

from .records import self_play_record

FIXED_KEY = bytes(range(deals.KEY_BYTES))  # save_tournament's deal key

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",  # we run as root
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOW_TO_INSTALL = (
    "needs Debian's Chromium at /usr/bin/chromium and the playwright package: "
    "apt-get install -y chromium && pip install -e '.[test]' (never `playwright install`)"
)


def _missing() -> str | None:
    if not CHROMIUM.exists() and not shutil.which("chromium"):
        return "Chromium is not installed"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    return None


# Module scope: Playwright's sync API keeps an event loop running while it is open, which breaks any later test
# that calls asyncio.run. With package scope, a worker that ran a browser file and then an in-process file of
# tests/web (test_render.py, test_site_app_inprocess.py) failed those with "asyncio.run() cannot be called from a
# running event loop"; whether it did hung on how pytest-xdist shared out the files.
@pytest.fixture(scope="module")
def browser():
    why = _missing()
    if why:
        message = f"{why}: the browser tests {HOW_TO_INSTALL}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.fixture
def page_for(browser):
    """page_for(width, height) -> a new page that records script errors and refuses every network request."""
    contexts = []

    def make(width: int = 1280, height: int = 900):
        ctx = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(ctx)
        pg = ctx.new_page()
        pg.errors = []
        pg.requests = []
        pg.on("pageerror", lambda e: pg.errors.append(str(e)))
        pg.on("request", lambda r: pg.requests.append(r.url))
        return pg

    yield make
    for ctx in contexts:
        ctx.close()


# Which games of the tournament fault, by schedule slot: (timeouts by seat, retire (seat, index)).
FAULTS = {1: ({0: (3, 8)}, None), 4: ({}, (1, 6))}


@pytest.fixture(scope="session")
def tournament(tmp_path_factory):
    """A 3-entrant round robin (2 deals x 3 seat rotations) saved in a real SQLite store, with record files."""
    return save_tournament(tmp_path_factory.mktemp("data"), ("ada", "bob", "cyd"))


# Names a config file refuses, but that a page must still show as written (they reach it through the store).
MARKUP_NAMES = ("<b>ada</b>", "</script x", 'bob & "co"')


@pytest.fixture(scope="session")
def markup_tournament(tmp_path_factory):
    """The same tournament, its entrants named with markup."""
    return save_tournament(tmp_path_factory.mktemp("markup"), MARKUP_NAMES)


@pytest.fixture(scope="session")
def big_tournament(tmp_path_factory):
    """5 entrants, two to a table, 3 deals: 60 games, more than one page of the report's games table."""
    names = ("ada", "bob", "cyd", "dee", "eve")
    return save_tournament(tmp_path_factory.mktemp("big"), names, table_size=2, deals=3)


def save_tournament(data: Path, names: tuple[str, ...], table_size: int = 3, deals: int = 2) -> tuple[Path, str]:
    """Play the webtest round robin between ``names`` by self-play and save it in a store in ``data``."""
    entrants = [{"name": f"e{i}", "policy": "random"} for i in range(len(names))]
    spec = {"name": "webtest", "seed": 7, "table_size": table_size, "deals": deals, "seat_orders": "rotations"}
    config = parse({**spec, "entrants": entrants}, "<test>")
    config = dataclasses.replace(
        config, entrants=tuple(dataclasses.replace(e, name=n) for e, n in zip(config.entrants, names, strict=True))
    )
    with open_store(data) as store:
        # a fixed deal key (create_tournament's is fresh and random): the same decks, so the same winners, every run;
        # with a random key some entrant won no game in about one store in ten, and a test that filters by result
        # then found nothing to list
        slots = schedule.build(config, FIXED_KEY)
        store.create_tournament(config, slots, "<test>", FIXED_KEY)
        for slot in slots:
            timeouts, retire = FAULTS.get(slot.slot, ({}, None))
            rec = self_play_record(
                slot.deck_seed,
                slot.seats,
                timeouts=timeouts,
                retire=retire,
                game_id=slot.game_id,
                play_seed=slot.slot,
                tournament_id=config.tournament_id,
            )
            path = store.records / f"{slot.game_id}.abluxx"
            path.write_bytes(record_bytes(rec))
            store.save_game(config.tournament_id, slot, _result(rec, path))
    return data, config.tournament_id


def _result(rec: record_pb2.GameRecord, path: Path) -> GameResult:
    n = len(rec.header.players)
    seats = [SeatStats() for _ in range(n)]
    for d in rec.decisions:
        if d.fault:
            f = seats[d.seat].faults
            f[FAULT_NAME[d.fault]] = f.get(FAULT_NAME[d.fault], 0) + 1
        elif d.chosen_by == record_pb2.CHOOSER_BOT:  # as the match runner: the bot's time for each answer
            seats[d.seat].decision_us.append(d.bot_us)
        if d.retired:
            seats[d.seat].retired = True
    return GameResult(
        game_id=rec.header.game_id,
        scores=tuple(rec.footer.scores),
        places=tuple(rec.footer.places),
        end_reason=END_FROM_PB[rec.footer.reason],
        seats=seats,
        decisions=len(rec.decisions),
        final_digest=rec.footer.final_digest,
        record_path=path,
    )
