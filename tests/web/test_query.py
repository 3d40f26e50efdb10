"""The site's address parameters (referee/web/query.py), the games' filters in a real store (GameFilter) and our
docs as HTML (referee/web/markdown.py), in the test's own process: the pieces behind the site's sorting, search,
filters and rules page, each checked alone (the whole site is checked over HTTP and in Chromium beside this)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest
from starlette.exceptions import HTTPException
from starlette.requests import Request

from referee.service.auth import Principal
from referee.service.registry import BotVersion
from referee.service.visibility import version_private
from referee.store import GameFilter, open_store
from referee.tournament.standings import Standing
from referee.web import query
from referee.web.markdown import doc, how_to_enter, rules, to_html

from .conftest import save_tournament


def _request(**params: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/x", "query_string": urlencode(params).encode(),
                    "headers": []})  # fmt: skip


def _refused(call, *args) -> str:
    with pytest.raises(HTTPException) as e:
        call(*args)
    assert e.value.status_code == 400
    return str(e.value.detail)


def test_paging_numbers_take_ascii_digits_only() -> None:
    assert query.number(_request(), "start") is None and query.number(_request(start=""), "start") is None
    assert query.number(_request(start="0"), "start") == 0 and query.number(_request(start="120"), "start") == 120
    assert query.number(_request(start="9" * 12), "start") == int("9" * 12)
    for bad in ("-1", "1.5", "\u00b2", "\u0661", "x", "9" * 13):  # a superscript two, an Arabic-Indic one
        assert _refused(query.number, _request(start=bad), "start") == "start must be a whole number"


def test_a_page_of_a_list_says_where_the_next_starts() -> None:
    items = list(range(7))
    assert query.paged(_request(), items, 3) == ([0, 1, 2], 0, 3)
    assert query.paged(_request(start="3"), items, 3) == ([3, 4, 5], 3, 6)
    assert query.paged(_request(start="6"), items, 3) == ([6], 6, None)
    assert query.paged(_request(start="4"), items[:7], 3) == ([4, 5, 6], 4, None)


def test_texts_are_bounded() -> None:
    assert query.text(_request(), "q") is None and query.text(_request(q=""), "q") is None
    assert query.text(_request(q="x" * query.MAX_TEXT), "q") == "x" * query.MAX_TEXT
    assert _refused(query.text, _request(q="x" * (query.MAX_TEXT + 1)), "q") == "q must be at most 100 characters"


def test_the_games_filter_is_checked_and_carried_to_the_next_page() -> None:
    assert query.game_filter(_request(), "ada") is None
    only = query.game_filter(_request(opponent="bob", result="won", fault="timeout"), "ada")
    assert only == GameFilter("bob", "won", "timeout")
    assert query.filter_query(only) == "&opponent=bob&result=won&fault=timeout"
    assert query.filter_query(GameFilter(fault="any")) == "&fault=any" and query.filter_query(None) == ""
    assert query.game_filter(_request(result="lost"), "ada") == GameFilter(None, "lost", "")
    assert query.game_filter(_request(fault="any"), None) == GameFilter(None, "", "any")
    assert _refused(query.game_filter, _request(result="drawn"), "ada") == "result must be won or lost"
    assert _refused(query.game_filter, _request(result="won"), None) == (
        "result needs an entrant: filter one entrant's games (entrant=NAME)"
    )
    kinds = _refused(query.game_filter, _request(fault="bogus"), None)
    assert kinds.startswith("fault must be any or one of: ") and ", invalid, malformed, " in kinds
    assert query.kept(_request(sort="name", q="", desc="1"), "all", "sort", "desc", "q") == "&sort=name&desc=1"
    assert query.kept(_request(), "sort") == ""


def _row(rank: int, name: str, rating: float, games: int, faults: int = 0) -> Standing:
    return Standing(rank=rank, entrant=name, mu=rating + 3, sigma=1.0, conservative=rating, games=games, wins=rank,
                    avg_score=0.0, dup_avg_score=-rating, faults={"timeout": faults} if faults else {})  # fmt: skip


def test_the_leaderboard_sorts_and_searches() -> None:
    rows = [_row(1, "Zed", 9.0, 5), _row(2, "amy", 7.0, 9, faults=2), _row(3, "Bea", 3.0, 7, faults=1)]

    def names(**params: str) -> list[str]:
        return [r.entrant for r in query.board_rows(_request(**params), rows)]

    assert names() == ["Zed", "amy", "Bea"] == names(sort="rank") == names(sort="")
    assert names(sort="name") == ["amy", "Bea", "Zed"] and names(sort="name", desc="1") == ["Zed", "Bea", "amy"]
    assert names(sort="games") == ["amy", "Bea", "Zed"] and names(sort="games", desc="1") == ["Zed", "Bea", "amy"]
    assert names(sort="rating") == ["Zed", "amy", "Bea"] and names(sort="mu") == ["Zed", "amy", "Bea"]
    assert names(sort="score") == ["Bea", "amy", "Zed"] and names(sort="wins") == ["Bea", "amy", "Zed"]
    assert names(sort="faults") == ["amy", "Bea", "Zed"] and names(desc="1") == ["Bea", "amy", "Zed"]
    assert names(q="E") == ["Zed", "Bea"] and names(q="zz") == [] and names(q="") == names()
    assert [r.rank for r in query.board_rows(_request(q="a"), rows)] == [2, 3]  # each keeps its rank
    assert _refused(query.board_rows, _request(sort="bogus"), rows).startswith("sort must be one of: rank, rating")


def test_the_store_filters_games_before_paging(tmp_path: Path) -> None:
    data, tid = save_tournament(tmp_path / "data", ("ada", "bob", "cyd"))
    with open_store(data) as store:
        every = store.games(tid)

        def got(entrant: str | None, only: GameFilter | None, limit: int = 100) -> list[str]:
            return [g.game_id for g in store.recent_games(tid, None, limit, entrant, only)]

        def want(keep) -> list[str]:
            return [g.game_id for g in sorted(every, key=lambda g: -g.slot) if keep(g)]

        def seat(g, name):
            return next(s for s in g.seats if s.entrant == name)

        assert got("ada", GameFilter(result="won")) == want(lambda g: seat(g, "ada").place == 1)
        assert got("ada", GameFilter(result="lost")) == want(lambda g: seat(g, "ada").place > 1)
        assert got("ada", GameFilter(fault="timeout")) == want(lambda g: seat(g, "ada").faults.get("timeout"))
        assert got(None, GameFilter(fault="any")) == want(lambda g: any(s.faults for s in g.seats))
        assert got("bob", GameFilter(fault="any")) == want(lambda g: bool(seat(g, "bob").faults))
        assert got(None, GameFilter(opponent="cyd")) == want(lambda g: "cyd" in g.names)
        assert got("ada", GameFilter(opponent="nobody")) == []
        assert got("ada", None) == want(lambda g: "ada" in g.names) and len(got(None, None)) == len(every)
        cut = sorted(g.slot for g in every)[3]
        older = [g.game_id for g in store.recent_games(tid, cut, 100, None, GameFilter(opponent="bob"))]
        assert older == want(lambda g: g.slot < cut and "bob" in g.names)
        assert got("ada", GameFilter(result="won", fault="timeout")) == want(
            lambda g: seat(g, "ada").place == 1 and seat(g, "ada").faults.get("timeout")
        )
        assert (
            got(None, GameFilter(fault="timeout"), limit=1)
            == want(lambda g: any(s.faults.get("timeout") for s in g.seats))[:1]
        )
        firsts = [got("ada", GameFilter(result=r)) for r in ("won", "lost")]
        assert sorted(firsts[0] + firsts[1]) == sorted(g.game_id for g in every)  # won and lost split them
        assert got(None, GameFilter(fault="timeout")) and got(None, GameFilter(fault="any"))  # the data has faults


def test_each_bot_version_is_private_to_its_own_owner() -> None:
    def version(owner: str) -> BotVersion:
        return BotVersion("b", 1, "127.0.0.1:1", owner, "1", "x", "active", 0.0, "validate-b-1")

    alice, bob = Principal("alice", False), Principal("bob", False)
    organiser = Principal("organiser", True)
    assert version_private(alice, version("alice")) and not version_private(bob, version("alice"))
    assert version_private(bob, version("bob")) and not version_private(alice, version("bob"))
    assert version_private(organiser, version("alice")) and not version_private(None, version("alice"))


def test_docs_render_tables_as_tables_and_no_markup_of_their_own() -> None:
    html = to_html(
        "# Title\n\n## Part\n\n| a | b |\n| --- | --- |\n| `x` <b>y</b> | [r](rules.md#moves) |\n\n"
        "See [bots](bots.md), [guide](writing-a-bot.md), [web](https://example.org/a), [js](javascript:alert(1)), "
        "[file](../proto/x.proto) and <script>alert(1)</script>.\n"
    )
    assert "<h2>Title</h2>" in html and "<h3>Part</h3>" in html  # one level down: the page's title is its h1
    assert to_html("###### deep") == "<h6>deep</h6>\n"  # as far down as HTML goes
    dropped = to_html("[b](bots.md#part), [up](../a/b.md), [bare](foo) and [w](writing-a-bot.md#in-python)")
    assert dropped == ('<p>b (docs/bots.md), up, bare and <a href="/how-to-enter#in-python">w</a></p>\n')
    assert '<div class="scroll"><table>' in html and "<th>a</th>" in html and "</table></div>" in html
    assert "<td><code>x</code> &lt;b&gt;y&lt;/b&gt;</td>" in html
    assert '<a href="/rules#moves">r</a>' in html and '<a href="/how-to-enter">guide</a>' in html
    assert "bots (docs/bots.md)" in html and 'href="bots.md"' not in html
    assert '<a href="https://example.org/a" rel="noreferrer">web</a>' in html
    assert "javascript:" not in html.replace("[js](javascript:alert(1))", "") and "<script>" not in html
    assert "file," not in html and " file and " in html  # a link to no page of the site is its text
    page = doc("rules.md")
    assert page is not None and page.count("<table>") == 2 and "| ---" not in page
    assert doc("no-such.md") is None
    assert rules() == page and how_to_enter() == doc("writing-a-bot.md") and "<table>" in (how_to_enter() or "")


def test_the_json_api_writes_every_character_outside_ascii_as_an_escape() -> None:
    from referee.web.api import JsonResponse

    body = JsonResponse({"name": "a\u202eb\x1b[2J</script>", "n": 1}).body
    assert body == b'{"n": 1, "name": "a\\u202eb\\u001b[2J</script>"}'
