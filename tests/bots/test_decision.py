"""What docs/writing-a-bot.md says a bot's ``d`` holds, checked over whole games played through the kit."""

from __future__ import annotations

import pytest
from abluxx_bot import Bot, BotSession
from abluxx_bot.local import play_local

from referee.engine import Abluxxed, Choice, Group


class Checker(Bot):
    """Plays the biggest group and checks every decision of a settled abluxx against the docs."""

    name = "checker"

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.abluxxed: Abluxxed | None = None

    def decide(self, d):
        self.seen[d.kind.value] = self.seen.get(d.kind.value, 0) + 1
        assert d.seat == d.request.seat and d.seat not in d.opponents
        for e in d.events:
            if isinstance(e, Abluxxed):
                self.abluxxed = e
        if d.kind.value == "take_or_decline":  # I played; the group is the victim's top group
            assert d.active_seat == d.seat and d.victim != d.seat
            assert d.top_groups[d.victim] == self.abluxxed.group and self.abluxxed.victim == d.victim
            assert d.victim in d.victims_of(d.played) and d.victim_group == self.abluxxed.group
            return Choice.DECLINE if d.seq % 2 else Choice.TAKE
        if d.kind.value == "reclaim_or_discard":  # I am the victim; the group is my own top group
            assert d.victim == d.seat and d.active_seat != d.seat
            assert d.top_groups[d.seat] == self.abluxxed.group and self.abluxxed.victim == d.seat
            assert d.victim_group == self.abluxxed.group
            return Choice.DISCARD if d.seq % 3 else Choice.RECLAIM
        with pytest.raises(ValueError, match="about no abluxxed group"):
            d.victim_group  # noqa: B018 (a play or a draw is about no abluxxed group, even a victim's draw)
        plays = [a for a in d.legal if isinstance(a, Group)]
        return max(plays, key=lambda g: (g.count, g.value)) if plays else 0


def test_take_or_decline_and_reclaim_or_discard_are_about_the_groups_the_docs_name() -> None:
    seen: dict[str, int] = {}
    for seed in range(6):
        bots = [Checker() for _ in range(3)]
        play_local([BotSession(b) for b in bots], seed)
        for b in bots:
            for kind, n in b.seen.items():
                seen[kind] = seen.get(kind, 0) + n
    assert seen.get("take_or_decline", 0) > 5 and seen.get("reclaim_or_discard", 0) > 2, seen
