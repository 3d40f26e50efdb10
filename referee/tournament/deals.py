"""Where a tournament's decks come from (docs/security.md, "The threat model").

Every tournament gets a secret deal key when it is created: 256 random bits from ``secrets``, kept only in the
store. A deal's deck is ``deck_from_seed`` of a 63-bit seed taken from HMAC-SHA-256(key, "tid/table/deal"), so
nothing public (the config, its seed, the tournament id) predicts a deck, and the same seed in two tournaments
gives unrelated decks. The engine's shuffle is unchanged: only where its seed comes from is.

``public_deals = true`` in the config opts in to the old, public derivation (a hash of the config's seed, table
and deal, the same in every tournament with that seed), so a research run can be reproduced from its config
alone. Anyone who reads the config can then compute every deck: never use it with untrusted bots.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

KEY_BYTES = 32  # 256 bits; the issue asks for at least 128


@dataclass(frozen=True)
class PublicDeals:
    """The key of a ``public_deals`` tournament: its config's seed, which anyone reading the config knows."""

    seed: int


DealKey = bytes | PublicDeals


@dataclass
class DealSet:
    """A ladder's deal set that more tables may join (``ladder_run.LadderHooks``): its tables share one deck. Its
    deck's seed, the owners at its tables, its tables, its games unfinished."""

    deal: int
    deck_seed: int
    owners: set[str]
    tables: int = 0
    playing: int = 0


def new_key() -> bytes:
    """A fresh secret deal key for one tournament."""
    return secrets.token_bytes(KEY_BYTES)


def deck_seed(key: DealKey, tournament_id: str, table: int, deal: int, attempt: int = 0) -> int:
    """The seed of the deck of ``deal`` at ``table`` (the deck is ``deck_from_seed`` of it): the one place a
    tournament's decks come from. Every game of that deal (its seat orders, or its other tables) plays it.

    A secret key gives the first 8 bytes of HMAC-SHA-256(key, "tournament_id/table/deal"); ``PublicDeals`` gives
    the derivation of referees before deal keys, SHA-256("seed/deck/table/deal"), which ignores the tournament id.
    Either way the top bit is cleared, so the seed fits SQLite's signed INTEGER.

    ``attempt`` counts how often the deal was dealt again because a game of it was interrupted (a deal seen is a
    deal spent: tournament/redeal.py); attempt n > 0 appends "/n" to the message, so its deck is unrelated to every
    other attempt's and, with a secret key, as unpredictable."""
    suffix = f"/{attempt}" if attempt else ""
    if isinstance(key, PublicDeals):
        digest = hashlib.sha256(f"{key.seed}/deck/{table}/{deal}{suffix}".encode()).digest()
    else:
        if len(key) < 16:
            raise ValueError(f"a deal key has at least 128 bits; got {len(key) * 8}")
        digest = hmac.new(key, f"{tournament_id}/{table}/{deal}{suffix}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def fresh_seed() -> int:
    """A deck seed nobody can guess, for a game outside any tournament (a validation game, ``abluxx match``):
    63 random bits, as many as a tournament's, so a bot cannot search the seeds its hand allows."""
    return secrets.randbits(63)
