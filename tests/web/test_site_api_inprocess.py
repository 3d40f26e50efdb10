"""The JSON API's lists in this process (tests/web/inprocess.py) over a real SQLite store that holds submitted bots,
three tournaments and games in play: what a script paging through ``/api/`` meets (each page's items, its ``next``
link, the last page's None), each bot version's private details as its reader may see them, and the errors as JSON.
Mutation testing runs these (scripts/mutation.toml, ``site_api``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from referee.engine import Options
from referee.service.registry import Registry
from referee.service.runs import LiveGame, opening
from referee.store import open_store

from .conftest import save_tournament
from .inprocess import SETTINGS, served
from .site import half_played
from .test_site_inprocess import _sign_in

AUTHORS = {"alice": "alice-secret", "bob": "bob-secret"}
# (bot, owner): alices v2 was submitted by an organiser for bob (SubmitBot's owner), v3 by alice again
SUBMITTED = [("alices", "alice"), ("alices", "bob"), ("bobs", "bob"), ("alices", "alice"), ("carols", "carol")]


def _address(i: int) -> str:
    return f"127.0.0.1:{41001 + i}"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, list[str], list[str]]:
    """Three tournaments (one half played, one whose last record is unreadable) and the bots of SUBMITTED:
    (data folder, tournament ids oldest first, the unreadable game's id and a game still to be played)."""
    data = tmp_path_factory.mktemp("api") / "data"
    _, first = save_tournament(data, ("ada", "bob", "zoë"))
    second, _, pending = half_played(data, ("dee", "eve", "fay"))
    _, third = save_tournament(data, ("gus", "hal", "ivy"), table_size=2, deals=1)
    with open_store(data) as s:
        registry = Registry(s)
        registry.set_state(second, "paused")  # as an organiser's PauseTournament leaves it
        for i, (name, owner) in enumerate(SUBMITTED):
            registry.add_bot(name, _address(i), owner, f"{i}.0", owner, f"validate-{name}-{i}")
        broken = s.db.execute("SELECT game_id FROM games WHERE tournament_id = ? LIMIT 1", (third,)).fetchone()[0]
        path = s.record_file(s.db.execute("SELECT record_path FROM games WHERE game_id = ?", (broken,)).fetchone()[0])
        path.write_bytes(b"not a record")
    return data, [first, second, third], [broken, pending[0]]


@pytest.fixture
def site(store):
    settings = {**SETTINGS, "auth": {**SETTINGS["auth"], "authors": AUTHORS}}
    with served(store[0], settings) as s:
        yield s


def _pages(site, path: str) -> list[tuple[list, str | None]]:
    """Every page of a list from ``path`` on, following ``next``: (items, next) of each."""
    pages = []
    while path is not None:
        answer = site.get(path).json()
        pages.append((answer["items"], answer["next"]))
        path = answer["next"]
        assert len(pages) < 10, "the pages never end"
    return pages


def _state(entrant: dict) -> str:
    return entrant["state"].removeprefix("ENTRANT_STATE_")


def _versions(items: list) -> list[tuple[str, int, str, str]]:
    return [(e["name"], e["version"], e["address"], e["validation_game_id"]) for e in items]


def test_the_bots_latest_versions_page_newest_first_with_every_version_on_asking(site) -> None:
    pages = _pages(site, "/api/bots")
    assert [n for _, n in pages] == ["/api/bots?before=4", None]
    shown = [(e["name"], e["version"], e["owner"], _state(e)) for items, _ in pages for e in items]
    assert shown == [("carols", 1, "carol", "ACTIVE"), ("alices", 3, "alice", "ACTIVE"), ("bobs", 1, "bob", "ACTIVE")]
    every = _pages(site, "/api/bots?all=1")
    assert [n for _, n in every] == ["/api/bots?all=1&before=4", "/api/bots?all=1&before=2", None]
    assert [(e["name"], e["version"]) for items, _ in every for e in items] == [
        ("carols", 1), ("alices", 3), ("bobs", 1), ("alices", 2), ("alices", 1)]  # fmt: skip
    assert [_state(e) for e in every[1][0] + every[2][0]] == ["ACTIVE", "SUPERSEDED", "SUPERSEDED"]
    assert [e["address"] for items, _ in every for e in items] == [""] * 5  # nobody signed in
    assert site.get("/api/bots?before=x").json() == {"error": "before must be a whole number",
                                                      "status": 400}  # fmt: skip


def test_each_version_of_a_bot_shows_its_private_details_to_its_own_owner_only(site) -> None:
    anonymous = _pages(site, "/api/bots/alices")
    assert [n for _, n in anonymous] == ["/api/bots/alices?start=2", None]
    assert _versions([e for items, _ in anonymous for e in items]) == [
        ("alices", 3, "", ""), ("alices", 2, "", ""), ("alices", 1, "", "")]  # fmt: skip
    assert _sign_in(site, "bob-secret").status_code == 303
    assert _versions(site.get("/api/bots/alices").json()["items"]) == [
        ("alices", 3, "", ""), ("alices", 2, _address(1), "validate-alices-1")]  # fmt: skip
    bob_sees = site.get("/api/bots?all=1&before=3").json()  # the list decides per version too
    assert bob_sees["next"] is None  # the last two versions: a full page, and nothing after it
    assert _versions(bob_sees["items"]) == [("alices", 2, _address(1), "validate-alices-1"), ("alices", 1, "", "")]
    assert _sign_in(site, "alice-secret").status_code == 303
    assert _versions(site.get("/api/bots/alices?start=1").json()["items"]) == [
        ("alices", 2, "", ""), ("alices", 1, _address(0), "validate-alices-0")]  # fmt: skip
    assert _versions(site.get("/api/bots?before=5").json()["items"]) == [
        ("alices", 3, _address(3), "validate-alices-3"), ("bobs", 1, "", "")]  # fmt: skip


def test_tournaments_page_oldest_first(site, store) -> None:
    _, tids, _ = store
    pages = _pages(site, "/api/tournaments")
    assert [n for _, n in pages] == ["/api/tournaments?start=2", None]
    assert [t["id"] for items, _ in pages for t in items] == tids
    assert [(t["games"], t["done"]) for t in pages[1][0]] == [(6, 6)]
    assert [t["state"] for items, _ in pages for t in items] == ["created", "paused", "created"]
    assert site.get(f"/api/t/{tids[1]}").json()["state"] == "paused"
    rest = site.get("/api/tournaments?start=1").json()
    assert [t["id"] for t in rest["items"]] == tids[1:] and rest["next"] is None


def test_a_tournaments_games_of_an_unknown_one_an_unfinished_game_and_an_unreadable_record(site, store) -> None:
    _, tids, (broken, pending) = store
    assert site.get("/api/t/nope/games").json() == {"error": "no such tournament or ladder on this server",
                                                     "status": 404}  # fmt: skip
    games = site.get(f"/api/t/{tids[1]}/games").json()
    assert len(games["items"]) == 2 and {g["tournament_id"] for g in games["items"]} == {tids[1]}
    assert site.get("/api/games/nope").json() == {"error": "no game 'nope' on this server", "status": 404}
    unfinished = site.get(f"/api/games/{pending}")
    assert unfinished.status_code == 409 and unfinished.json()["status"] == 409
    assert unfinished.json()["error"] == f"game {pending} has not finished; watch it with WatchGame"
    lost = site.get(f"/api/games/{broken}")
    assert lost.status_code == 500 and lost.json() == {
        "error": f"the record of {broken} cannot be read; the server's log says why", "status": 500}  # fmt: skip
    assert site.get(f"/g/{pending}/record.json").status_code == 409
    assert site.get(f"/g/{broken}/record.abluxx").status_code == 500


def test_the_games_in_play_page_as_they_are_played(site, store) -> None:
    _, tids, _ = store

    async def play(n: int) -> None:  # as a tournament's run starts its games (service/runs.py, on_start)
        for i in range(n):
            first = opening(f"live-{i}", tids[0], ["ada", "bob"], ["", ""], Options(), i, 0, 0)
            site.service.live[f"live-{i}"] = LiveGame(first)

    asyncio.run_coroutine_threadsafe(play(3), site.service_loop).result(60)
    pages = _pages(site, "/api/live")
    assert [n for _, n in pages] == ["/api/live?start=2", None]
    assert [g for items, _ in pages for g in items] == [
        {"game_id": f"live-{i}", "tid": tids[0], "names": ["ada", "bob"]} for i in range(3)]  # fmt: skip


def test_the_json_is_ascii_with_its_keys_sorted(site) -> None:
    body = site.get("/api/bots/nobody").content
    assert body == b'{"error": "no such bot on this server", "status": 404}'
    assert site.get("/api/").content.startswith(b'{"docs": "docs/web.md, JSON API", "endpoints": {"/api/bots": ')


def test_a_tournaments_games_filtered_by_result_page_with_their_filter(site, store) -> None:
    _, tids, _ = store
    pages = _pages(site, f"/api/t/{tids[0]}/games?entrant=ada")
    assert [len(items) for items, _ in pages] == [2, 2, 2]  # a full last page has no link to an empty one
    every = {g["game_id"] for items, _ in pages for g in items}
    split = {}
    for result in ("won", "lost"):
        pages = _pages(site, f"/api/t/{tids[0]}/games?entrant=ada&result={result}")
        assert all(f"result={result}" in n for _, n in pages[:-1])
        split[result] = {g["game_id"] for items, _ in pages for g in items}
        assert all(items for items, _ in pages)
    assert (
        split["won"] | split["lost"] == every and not split["won"] & split["lost"]
    )  # won: placed first; lost: any other place
    gus = [g for items, _ in _pages(site, f"/api/t/{tids[2]}/games?entrant=gus") for g in items]
    assert len(gus) == 4 and all("gus" in [s["entrant"] for s in g["seats"]] for g in gus)  # of the pairs' 6 games
    refused = site.get(f"/api/t/{tids[0]}/games?result=won")
    assert refused.json() == {"error": "result needs an entrant: filter one entrant's games (entrant=NAME)",
                              "status": 400}  # fmt: skip
