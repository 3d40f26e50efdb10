"""The site's JSON API, record downloads, filters and sorting over HTTP, from a real ``abluxx serve --http-port``
with real bots submitted over gRPC (issue 46, items 2 and 5): each bot version's private details go to its own
owner on every surface (gRPC, pages, JSON API, downloads), no deck leaves before its reveal, and the lists filter and
sort on the server with addresses that can be linked to."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records import read_record
from referee.store import open_store
from tests.service.helpers import ALICE, BOB, ORGANISER, auth, start_bot, stub, submit

from .conftest import save_tournament
from .site import get, half_played, start_site
from .test_site_http import _signed_in


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A finished round robin, a half-played one (decks still secret), and the bot ``alices``: v1 submitted by
    alice, v2 submitted by an organiser for bob (SubmitBot's owner)."""
    root = tmp_path_factory.mktemp("site-api")
    data, tid = save_tournament(root / "data", ("ada", "bob", "cyd"))
    secret, played, _ = half_played(root / "data", ("dee", "eve", "fay"))
    bots = [start_bot("greedy"), start_bot("greedy")]
    site = start_site(data, root, extra_settings="[http]\npage_size = 2\n")
    try:
        s = stub(site.address)
        v1 = submit(s, "alices", bots[0].address, token=ALICE).entrant
        v2 = submit(s, "alices", bots[1].address, token=ORGANISER, owner="bob").entrant
        assert (v1.version, v1.owner, v2.version, v2.owner) == (1, "alice", 2, "bob")
        yield {"site": site, "tid": tid, "secret": secret, "played": played, "v1": v1, "v2": v2, "data": data,
               "cookies": {who: _signed_in(site.url, token) for who, token in
                           (("alice", ALICE), ("bob", BOB), ("organiser", ORGANISER))}}  # fmt: skip
    finally:
        site.stop()
        for b in bots:
            b.stop()


def _as(served, who: str | None, path: str) -> tuple[int, dict[str, str], str]:
    headers = {"cookie": served["cookies"][who]} if who else {}
    return get(served["site"].url + path, headers)


def _bytes(served, who: str | None, path: str) -> tuple[int, bytes]:
    headers = {"cookie": served["cookies"][who]} if who else {}
    req = urllib.request.Request(served["site"].url + path, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_each_version_shows_its_private_details_to_its_own_owner_everywhere(served) -> None:
    """An organiser submitted v2 of alice's bot for bob: bob sees v2's address and validation game, not v1's; alice
    keeps v1's and does not see v2's; on the gRPC API, the bot's page, the JSON API and the record downloads."""
    v1, v2 = served["v1"], served["v2"]
    mine = {"alice": v1, "bob": v2}
    theirs = {"alice": v2, "bob": v1}
    s = stub(served["site"].address)
    for who, token in (("alice", ALICE), ("bob", BOB)):
        own, other = mine[who], theirs[who]
        for v in (own, other):  # the gRPC API
            got = s.GetEntrant(ref_pb.GetEntrantRequest(name="alices", version=v.version), metadata=auth(token))
            want = (v.address, v.validation_game_id) if v is own else ("", "")
            assert (got.address, got.validation_game_id) == want
        page = _as(served, who, "/bots/alices")[2]  # the bot's page
        assert own.address in page and own.validation_game_id in page, who
        assert other.address not in page and other.validation_game_id not in page, who
        api = json.loads(_as(served, who, "/api/bots/alices")[2])["items"]  # the JSON API
        by_version = {e["version"]: e for e in api}
        assert by_version[own.version]["address"] == own.address
        assert by_version[own.version]["validation_game_id"] == own.validation_game_id
        assert by_version[other.version]["address"] == "" and by_version[other.version]["validation_game_id"] == ""
        for path in ("/api/games/{}", "/g/{}/record.json", "/g/{}/record.abluxx", "/g/{}", "/bots/alices/validation/"):
            own_path = path.format(own.validation_game_id) if "{}" in path else f"{path}{own.version}"
            other_path = path.format(other.validation_game_id) if "{}" in path else f"{path}{other.version}"
            assert _bytes(served, who, own_path)[0] == 200, (who, own_path)
            assert _bytes(served, who, other_path)[0] == 404, (who, other_path)
    anonymous = json.loads(_as(served, None, "/api/bots/alices")[2])["items"]
    assert [e["address"] for e in anonymous] == ["", ""]
    organiser = json.loads(_as(served, "organiser", "/api/bots/alices")[2])["items"]
    assert {e["address"] for e in organiser} == {v1.address, v2.address}


def test_a_downloaded_record_is_the_record_file_and_its_json_the_same_game(served, tmp_path: Path) -> None:
    tid = served["tid"]
    games = json.loads(_as(served, None, f"/api/t/{tid}/games")[2])["items"]
    game_id = games[0]["game_id"]
    status, body = _bytes(served, None, f"/g/{game_id}/record.abluxx")
    assert status == 200
    (tmp_path / "g.abluxx").write_bytes(body)
    got = read_record(tmp_path / "g.abluxx")
    with open_store(served["data"]) as store:
        row = store.game(game_id)
        assert row is not None
        stored = read_record(store.record_file(row.record_path))
    assert got.header.deck == stored.header.deck and len(got.decisions) == len(stored.decisions)
    assert list(got.footer.scores) == list(stored.footer.scores)
    as_json = json.loads(_bytes(served, None, f"/g/{game_id}/record.json")[1])
    assert as_json["header"]["game_id"] == game_id and len(as_json["decisions"]) == len(stored.decisions)
    assert _bytes(served, None, f"/g/{game_id}/record.txt")[0] == 404
    assert "record.abluxx" in _as(served, None, f"/g/{game_id}")[2]  # the game page links its downloads


def test_no_deck_leaves_the_api_or_a_download_before_its_reveal(served) -> None:
    for game_id in served["played"]:
        record = json.loads(_as(served, "alice", f"/api/games/{game_id}")[2])
        assert record["deal_withheld"] is True and not record["header"].get("deck") and not record["decisions"]
        assert not json.loads(_bytes(served, None, f"/g/{game_id}/record.json")[1])["header"].get("deck")
        assert _bytes(served, "bob", f"/g/{game_id}/record.abluxx")[0] == 409
        organiser = json.loads(_as(served, "organiser", f"/api/games/{game_id}")[2])
        assert organiser["deal_withheld"] is False and organiser["header"]["deck"]


def test_the_json_api_gives_what_grpc_gives(served) -> None:
    tid = served["tid"]
    s = stub(served["site"].address)
    grpc_rows = [r.entrant for r in s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid)).rows]
    first = json.loads(_as(served, None, f"/api/t/{tid}/standings")[2])  # page_size 2: two pages
    second = json.loads(_as(served, None, first["next"])[2])
    assert [r["entrant"] for r in first["rows"] + second["rows"]] == grpc_rows and second["next"] is None
    listed = json.loads(_as(served, None, "/api/tournaments")[2])["items"]
    assert {t["id"] for t in listed} == {tid, served["secret"]}
    status, headers, body = _as(served, None, "/api/t/no-such")
    assert status == 404 and headers["content-type"] == "application/json"
    assert json.loads(body)["error"].startswith("no such tournament")
    assert "content-security-policy" in headers and headers["cache-control"] == "no-store"


def _all_pages(served, path: str) -> list[dict]:
    out, url = [], path
    while url:
        page = json.loads(_as(served, None, url)[2])
        out += page["items"]
        url = page["next"]
    return out


def test_games_filter_on_the_server_and_page_without_a_gap(served) -> None:
    """By opponent, result and fault, over every page (page_size 2): the same games as the store's, none twice."""
    tid = served["tid"]
    with open_store(served["data"]) as store:
        every = store.games(tid)

    def expect(keep) -> list[str]:
        return sorted(g.game_id for g in every if keep(g))

    def seat(g, name):
        return next(s for s in g.seats if s.entrant == name)

    # The deals are secret and random (a fresh store's seed), so who won is read from the store: one entrant that
    # won a game and one that lost one, so that both result filters have games to find.
    won = next(s.entrant for s in every[0].seats if s.place == 1)
    lost = next(s.entrant for s in every[0].seats if s.place > 1)
    cases = {
        "entrant=ada&opponent=bob": expect(lambda g: {"ada", "bob"} <= set(g.names)),
        f"entrant={won}&result=won": expect(lambda g: seat(g, won).place == 1),
        f"entrant={lost}&result=lost": expect(lambda g: seat(g, lost).place > 1),
        "fault=timeout": expect(lambda g: any(s.faults.get("timeout") for s in g.seats)),
        "entrant=cyd&fault=any": expect(lambda g: bool(seat(g, "cyd").faults)),
    }
    for query, want in cases.items():
        got = [g["game_id"] for g in _all_pages(served, f"/api/t/{tid}/games?{query}")]
        assert sorted(got) == want and len(set(got)) == len(got), query
        assert want or query.endswith("fault=any")  # each filter has games to find
        page = _as(served, None, f"/t/{tid}/games?{query}")[2]  # the page shows the first of them
        assert (want == []) == ("No game matches" in page)
    for bad in ("result=won", "entrant=ada&result=drawn", "fault=bogus", "opponent=" + "x" * 101):
        status, _, body = _as(served, None, f"/api/t/{tid}/games?{bad}")
        assert status == 400 and json.loads(body)["error"], bad
        assert _as(served, None, f"/t/{tid}/games?{bad}")[0] == 400


def test_the_leaderboard_sorts_and_searches_on_the_server(served) -> None:
    tid = served["tid"]
    s = stub(served["site"].address)
    rows = s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid)).rows

    def names(query: str) -> list[str]:
        got = json.loads(_as(served, None, f"/api/t/{tid}/standings?{query}")[2])
        return [r["entrant"] for r in got["rows"]] + ([] if not got["next"] else names(got["next"].split("?")[1]))

    assert names("sort=name") == ["ada", "bob", "cyd"]
    assert names("sort=name&desc=1") == ["cyd", "bob", "ada"]
    assert names("sort=games") == [r.entrant for r in sorted(rows, key=lambda r: -r.games)]
    assert names("q=Y") == ["cyd"]
    page = _as(served, None, f"/t/{tid}?sort=name&desc=1")[2]
    assert page.index('data-entrant="cyd"') < page.index('data-entrant="bob"')
    assert 'data-entrant="ada"' not in page  # page_size 2: ada is on the next page, linked with the same order
    assert f"/t/{tid}?start=2&amp;sort=name&amp;desc=1" in page
    assert _as(served, None, f"/t/{tid}?sort=bogus")[0] == 400


def test_a_refusal_is_listed_for_its_author_with_its_validation_game(served) -> None:
    """Why a submission was refused, with its validation game: on the author's page, for them and organisers only."""
    site = served["site"]
    bot = start_bot("bad:hostile")
    try:
        refusal = submit(stub(site.address), "refusedbot", bot.address, token=ALICE).refusal
    finally:
        bot.stop()
    assert refusal.game_id and refusal.reason
    for who in ("alice", "organiser"):
        page = _as(served, who, "/authors/alice")[2]
        section = page.split('id="refused"')[1]
        assert "refusedbot" in section and f'href="/g/{refusal.game_id}"' in section, who
        assert f"fault {refusal.reason.split('fault ')[1].split(' ')[0]}" in section
        assert _as(served, who, f"/g/{refusal.game_id}")[0] == 200
    for who in ("bob", None):
        page = _as(served, who, "/authors/alice")[2]
        assert 'id="refused"' not in page and refusal.game_id not in page, who
        assert _as(served, who, f"/g/{refusal.game_id}")[0] == 404


def test_an_authors_page_and_the_api_say_whether_each_bot_is_up(served) -> None:
    """The health status (docs/bot-health.md) of each of the author's bots, as the ladder sees it."""
    from referee.store import health as health_store

    v1 = served["v1"]
    with open_store(served["data"]) as store:
        health_store.set_status(store, v1.entrant_id, "down", "unreachable at Hello", 1_800_000_000.0)
    try:
        page = _as(served, "alice", "/authors/alice")[2]
        assert "down since 2027-01-15T08:00:00Z (unreachable at Hello)" in page
        api = {e["version"]: e for e in json.loads(_as(served, None, "/api/bots/alices")[2])["items"]}
        assert api[1]["health"]["status"] == "down" and api[2]["health"]["status"] == "up"
    finally:
        with open_store(served["data"]) as store:
            health_store.set_status(store, v1.entrant_id, "up", "", 1_800_000_001.0)
