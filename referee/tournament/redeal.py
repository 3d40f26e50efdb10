"""A deal seen is a deal spent: the interrupted duplicate sets of a tournament dealt again (store/void.py).

A game that began and was not stored (the referee was killed, its worker died, a drain abandoned it) may have
shown its bots part of its deck, and its set's finished games may have been read. Each such set gets the next
attempt number, and every game of it a fresh deck from the deal key and that number (deals.deck_seed) and a new
game id; the set's earlier games stay, void, for organisers to see (``abluxx games``), out of the results, the
ratings and the standings. docs/tournaments.md says what this costs the schedule.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from referee.log import get_logger
from referee.records.paths import record_in
from referee.store import SqliteStore
from referee.store.void import VoidGame, interrupted_sets, redeal

from . import deals
from .config import TournamentConfig
from .schedule import game_id


def redeal_interrupted(store: SqliteStore, config: TournamentConfig) -> list[VoidGame]:
    """Deal every interrupted set of the tournament again; returns the games made void (none: nothing to do)."""
    tid = config.tournament_id
    sets = set(interrupted_sets(store, tid))
    if not sets:
        return []
    key: deals.DealKey | None = deals.PublicDeals(config.seed) if config.public_deals else store.deal_key(tid)
    assert key is not None  # play_slots checked the deal key first
    slots = [s for s in store.slots(tid) if s.duplicate_set in sets]
    attempt = {ds: 1 + max(s.attempt for s in slots if s.duplicate_set == ds) for ds in sets}
    fresh = []
    for s in slots:
        a = attempt[s.duplicate_set]
        seed = deals.deck_seed(key, tid, s.table, s.deal, a)
        fresh.append(replace(s, game_id=game_id(tid, s.table, s.deal, s.order, a), deck_seed=seed, attempt=a))
    void = redeal(store, tid, fresh)
    for g in void:
        if not g.finished:  # its partial record: a game that will never end
            with contextlib.suppress(FileNotFoundError):
                record_in(store.records, g.game_id).unlink()
    get_logger(tournament=tid).warning(
        "interrupted deals dealt again with fresh decks; their games are void",
        sets=sorted(sets), void_games=[g.game_id for g in void],
    )  # fmt: skip
    return void
