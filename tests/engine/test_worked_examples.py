"""The worked examples of docs/rules.md, replayed through the engine from docs/worked-examples.toml.

The page states each outcome in words and the data states it as checks, so a change to the rules engine that
breaks an example, or an example added to one and not the other, fails here.
"""

from __future__ import annotations

import random
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from referee.engine import (
    DECK_SIZE,
    Abluxxed,
    Choice,
    Draw,
    GameOver,
    Refilled,
    State,
    apply,
    deck_from_seed,
    new_game,
    placings,
    scores,
)

from .helpers import FULL_COUNTS, card_counts, cards, group, make_state

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLES = tomllib.loads((DOCS / "worked-examples.toml").read_text())["example"]
SEATS = "ABCDE"
CHOICES = {"takes": Choice.TAKE, "declines": Choice.DECLINE, "reclaims": Choice.RECLAIM,
           "discards": Choice.DISCARD, "skips": Choice.SKIP}  # fmt: skip


def seat(name: str) -> int:
    return SEATS.index(name)


def action(verb: str, rest: str):
    """One step's action in the examples' words: ``plays 7,7,7``, ``takes``, ``draws 2``, ``draws from the pile``."""
    if verb == "plays":
        return group(rest)
    if verb == "draws":
        return Draw(None) if rest == "from the pile" else Draw(cards(rest)[0])
    return CHOICES[verb]


def replay(position: dict[str, Any]) -> None:
    s: State = make_state(
        position["hands"],
        position.get("stacks"),
        position.get("market"),
        position.get("pile_top", ""),
        pile=position.get("pile"),
        active=seat(position.get("active", "A")),
    )
    for step in position["steps"]:
        who, verb, rest = re.fullmatch(r"([A-E]) (\w+) ?(.*)", step["do"]).groups()
        assert s.seat == seat(who), f"{step['do']}: it is {SEATS[s.seat]}'s decision"
        s, events = apply(s, action(verb, rest))
        check(step, s, events)


def check(step: dict[str, Any], s: State, events: list) -> None:
    what = step["do"]
    if "abluxxed" in step:
        victims = [SEATS[e.victim] for e in events if isinstance(e, Abluxxed)]
        assert victims == step["abluxxed"], what
    if "next" in step:
        assert not s.over, what
        assert f"{SEATS[s.seat]} {s.kind.value}" == step["next"], what
    if "ends" in step:
        assert s.over and s.end_reason.value == step["ends"], what
        assert isinstance(events[-1], GameOver), what
    else:
        assert not s.over, f"{what}: the game ended ({s.end_reason})"
    for name, groups in step.get("stacks", {}).items():
        assert s.stacks[seat(name)] == tuple(group(g) for g in groups), what
    for name, held in step.get("holds", {}).items():
        for card in cards(held):
            assert s.hands[seat(name)][card] >= 1, f"{what}: {name} holds no {card}"
    if "scores" in step:
        assert list(scores(s)) == step["scores"], what
    if "market" in step:
        assert sum(s.market) == step["market"], what
    if "refilled" in step:
        refills = [e.cards for e in events if isinstance(e, Refilled)]
        if isinstance(step["refilled"], str):  # the cards, in the pile's order
            assert refills == [tuple(cards(step["refilled"]))], what
        else:
            assert bool(refills) is step["refilled"], what


def check_card_total(example: dict[str, Any]) -> None:
    for players in example["players"]:
        for game in range(example["games"]):
            rng = random.Random(game)
            s = new_game(deck_from_seed(game), players)
            while True:
                assert card_counts(s) == FULL_COUNTS and sum(card_counts(s)) == DECK_SIZE
                if s.over:
                    break
                s, _ = apply(s, rng.choice(s.legal))


def check_deal(example: dict[str, Any]) -> None:
    for players, pile in example["pile"].items():
        s = new_game(deck_from_seed(1), int(players))
        assert s.pile_size == pile
        assert [sum(h) for h in s.hands] == [13] * int(players) and sum(s.market) == 6


def check_places(example: dict[str, Any]) -> None:
    for case in example["cases"]:
        assert list(placings(case["scores"], case["hands"])) == case["places"]


CHECKS = {"card_total": check_card_total, "deal": check_deal, "places": check_places}


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"example-{e['number']}" for e in EXAMPLES])
def test_worked_example_replays_as_the_rules_page_says(example: dict[str, Any]) -> None:
    if "check" in example:
        CHECKS[example["check"]](example)
    else:
        for position in example["position"]:
            replay(position)


def test_the_rules_page_and_the_data_hold_the_same_examples() -> None:
    page = (DOCS / "rules.md").read_text().split("## Worked examples", 1)[1]
    on_page = re.findall(r"^(\d+)\. \*\*(.+?)\*\*", page, flags=re.M)
    assert on_page == [(str(e["number"]), e["title"]) for e in EXAMPLES]
