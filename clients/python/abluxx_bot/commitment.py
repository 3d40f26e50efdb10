"""Checking the deck commitment a bot was sent at the start of a game against the deal revealed later."""

from __future__ import annotations

import hmac

from referee.proto.abluxxen.v1 import record_pb2
from referee.records import commitment as deck_commitment


class DealNotRevealed(ValueError):
    """The record was served with its deal withheld: other games still had the deal to play. Not a mismatch."""


def verify_commitment(record: record_pb2.GameRecord, commitment: bytes | None = None) -> bool:
    """True when the record's revealed deck and salt hash to its commitment, SHA-256(salt || deck), and, given
    ``commitment`` (the ``GameStart.deck_commitment`` your bot was sent), when that is the same commitment: the
    deal you played was fixed before the game began. False on any difference.

    Raises DealNotRevealed for a record served before every game on its deal was over (``deal_withheld``):
    ask ``GetGameRecord`` again later."""
    h, f = record.header, record.footer
    if record.deal_withheld or not h.deck or not f.salt:
        raise DealNotRevealed(f"game {h.game_id}: deal not yet revealed; fetch its record again later")
    digest = deck_commitment(f.salt, h.deck)
    if not hmac.compare_digest(digest, h.commitment):
        return False
    return commitment is None or hmac.compare_digest(digest, commitment)
