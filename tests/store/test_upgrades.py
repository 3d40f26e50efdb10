"""A store written by each earlier schema (tests/fixtures/stores/, made by scripts/make_old_stores.py with the
project's own old commits) opens with today's code: it is upgraded by the numbered migrations, served, its
standings read as the old code read them, its records verify, and its unfinished tournament resumes."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.store import migrations as m
from referee.store import open_store
from referee.store import standings as kept_boards
from referee.tournament.config import TournamentConfig
from referee.tournament.ladder_run import replay
from referee.tournament.standings import Standings
from tests.service.helpers import ABLUXX, ORGANISER, auth, start_server, stub, terminate, write_settings

STORES = Path(__file__).resolve().parents[1] / "fixtures" / "stores"
LADDER_GAMES = 30  # the unfinished ladder's budget (scripts/make_old_stores.py)
# what every release's standings show and today's must show alike: the ratings (and so the rank) are today's
# estimator's over the same games, the whole-history fit (docs/ratings.md), not the old one-pass update's
FIELDS = ("entrant", "games", "wins", "avg_score")
# the stores of numbered schemas, at their schema version (before numbering: 0); from schema 10 on the old service
# kept its rating fits, from schema 13 on its standings too (scripts/make_old_stores.py)
SCHEMAS = {"6-bot-health": 9, "7-rating-fits": 10, "8-uploads": 11, "9-site-sessions": 12, "10-kept-standings": 13,
           "11-pairing-rules": 14}  # fmt: skip
KEPT_FITS = {release for release, schema in SCHEMAS.items() if schema >= 10}
KEPT_STANDINGS = {release for release, schema in SCHEMAS.items() if schema >= 13}
RELEASES = sorted((p.name for p in STORES.iterdir()), key=lambda name: int(name.split("-")[0]))


def abluxx(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*ABLUXX, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600)


def rows(standings: dict) -> list[tuple]:
    return sorted(tuple(round(r[f], 9) if isinstance(r[f], float) else r[f] for f in FIELDS)
                  for r in standings["standings"])  # fmt: skip


def ids(data: Path) -> dict[str, str]:
    with open_store(data) as store:
        return {t.name: t.id for t in store.tournaments()}


def committed_records(data: Path, tid: str) -> list[Path]:
    with open_store(data) as store:
        return [store.record_file(g.record_path) for g in store.games(tid)]  # type: ignore[misc]  # all have one


def replayed(data: Path, tid: str) -> list[tuple[int, bool]]:
    """Each stored ladder choice that keeps what it was chosen from, and whether today's code makes it again."""
    with open_store(data) as store:
        row = store.tournament(tid)
        assert row is not None
        return [(n, stored == again) for n, stored, again in replay(store, TournamentConfig.from_json(row.config))]


def test_every_release_with_its_own_schema_has_a_store() -> None:
    before = ["1-first-tables", "2-deal-keys", "3-ladders", "4-void-deals", "5-ladder-choices"]
    assert [*before, *SCHEMAS] == RELEASES
    assert sorted(SCHEMAS.values()) == list(range(9, m.LATEST))  # each numbered schema main had, up to today's


def kept(data: Path) -> tuple[int, int]:
    """The tournaments with a kept rating fit, and with a kept standings board (0 where the schema has no table)."""
    with sqlite3.connect(f"file:{data / 'abluxx.db'}?mode=ro", uri=True) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return tuple(  # type: ignore[return-value]  # two
            db.execute(f"SELECT COUNT(DISTINCT tournament_id) FROM {t}").fetchone()[0] if t in tables else 0
            for t in ("rating_fit_marks", "kept_standings")
        )


@pytest.mark.parametrize("release", RELEASES)
def test_an_old_store_opens_serves_verifies_and_resumes(tmp_path: Path, release: str) -> None:
    data = tmp_path / "data"
    shutil.copytree(STORES / release, data)
    with sqlite3.connect(f"file:{data / 'abluxx.db'}?mode=ro", uri=True) as db:
        assert m.version(db) == SCHEMAS.get(release, 0)  # 0: written before the migrations were numbered
    expected = {p.stem: json.loads(p.read_text()) for p in (data / "expected").glob("*.json")}  # done, open, lad
    old_kept = kept(data)
    assert old_kept == (3 if release in KEPT_FITS else 0, 3 if release in KEPT_STANDINGS else 0)
    tid = ids(data)  # opening it upgrades it
    with open_store(data) as store:
        assert m.version(store.db) == m.LATEST
        assert [r[0] for r in store.db.execute("SELECT number FROM schema_migrations")] == list(range(1, m.LATEST + 1))
        for name in expected:  # the standings the old service kept are read by today's (shown at once on a restart)
            boards = kept_boards.load(store, tid[name])
            assert (len(boards) > 0) == (release in KEPT_STANDINGS)
            for body in boards.values():
                assert rows(Standings.from_kept(body).to_json()) == rows(expected[name])
    assert kept(data) == (0, old_kept[1])  # fits of the draw probability 0.05 dropped (migration 15), boards kept

    for name in expected:  # the standings today's code reads are those the old code read, ratings aside
        shown = abluxx("standings", tid[name], "--json", "--data", data, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert rows(json.loads(shown.stdout)) == rows(expected[name])
    checked = abluxx("verify", *(f for name in expected for f in committed_records(data, tid[name])), "--jobs", "1",
                     cwd=tmp_path)  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr

    made = replayed(data, tid["lad"]) if "lad" in tid else []
    assert all(same for _, same in made), made  # each old choice made again by the rule that made it
    assert bool(made) == (int(release.split("-")[0]) >= 5)  # 5: the first release to keep what a choice was made from

    srv = start_server(data, write_settings(tmp_path))
    try:
        s = stub(srv.address)
        served = s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid["done"]), metadata=auth(ORGANISER))
        assert sorted((r.entrant, r.games) for r in served.rows) == [(r[0], r[1]) for r in rows(expected["done"])]
        t = s.GetTournament(ref_pb.GetTournamentRequest(tournament_id=tid["open"]), metadata=auth(ORGANISER))
        assert (t.finished, t.games) == (expected["open"]["games"], expected["open"]["scheduled"])
    finally:
        assert terminate(srv) == 0

    if release == "1-first-tables":  # before deal keys its decks follow from a public seed: refused, by design
        resumed = abluxx("tournament", "resume", tid["open"], "--data", data, "--no-progress", cwd=tmp_path)
        assert resumed.returncode == 2 and "has no secret deal key" in resumed.stderr
        return
    for name in set(expected) - {"done"}:  # the round robin, and the ladder where the release had ladders
        resumed = abluxx("tournament", "resume", tid[name], "--data", data, "--no-progress", cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        with open_store(data) as store:
            row = store.tournament(tid[name])
            assert row is not None and row.finished_at is not None and row.done == row.games
            assert row.games == (expected[name]["scheduled"] if name == "open" else LADDER_GAMES)
        checked = abluxx("verify", *committed_records(data, tid[name]), "--jobs", "1", cwd=tmp_path)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    if "lad" in tid:  # the resumed ladder's choices, by today's rule, after the old ones, by theirs
        again = replayed(data, tid["lad"])
        assert len(again) > len(made) and all(same for _, same in again), again
