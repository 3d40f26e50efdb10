"""What a caller may see: decided here, once, for the gRPC API (server.py) and the web site (referee/web) alike.

Three kinds of caller (docs/security.md, "Who sees what"):

- **anyone** (no token, when reads are open): names, results, standings, public game events, and a finished
  game's record once no other game still has its deal to play;
- **an author** (an author's token, or the site's sign-in with it): the same, plus their own bots' private
  details: the address, the validation game and its record, and fault details (whose text is the bot's own error
  and can describe its hand);
- **an organiser**: everything, including decks still in play.

A card is never shown before the deal's reveal: while another game still has a game's deal to play, everyone but
an organiser gets the record without the deck (``withhold_deal``) and may not watch the game.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records import withhold_deal

from .auth import Principal


def organiser(who: Principal | None) -> bool:
    return who is not None and who.organiser


def private_to(who: Principal | None, owner: str | None) -> bool:
    """Whether ``who`` may see the private details of a bot owned by ``owner`` (None: a bot nobody submitted, such
    as a tournament entrant from a config file): its address, validation game and record, and fault details. Anyone
    else could probe or flood the address during games, or read another author's errors."""
    return organiser(who) or (who is not None and owner is not None and who.name == owner)


class Version(Protocol):
    """One submitted version of a bot (registry.BotVersion): the owner it was submitted under."""

    @property
    def owner(self) -> str: ...


def version_private(who: Principal | None, version: Version) -> bool:
    """Whether ``who`` may see the private details of one bot version: its address, validation game and record.
    Decided for each version from the owner that version was submitted under, never from another version's: an
    organiser may submit a new version of alice's bot for bob (SubmitBot's ``owner``), and then bob sees his
    version's details and alice keeps hers. The one rule for the gRPC API, the site's pages, its JSON API and its
    downloads."""
    return private_to(who, version.owner)


def deal_secret(who: Principal | None, left: int) -> bool:
    """Whether a game's deck, decisions and live events are hidden from ``who`` while ``left`` other games still
    have its deal to play: from everyone but organisers."""
    return left > 0 and not organiser(who)


def config_for(who: Principal | None, config: dict[str, Any]) -> dict[str, Any]:
    """A tournament's stored config as ``who`` may read it: each entrant's address only for its owner or an
    organiser."""
    return {
        **config,
        "entrants": [
            {k: v for k, v in e.items() if k != "address" or private_to(who, e.get("owner"))}
            for e in config["entrants"]
        ],
    }


def owners(config: Mapping[str, Any]) -> dict[str, str]:
    """Entrant name -> owner for the entrants of a tournament's config that were submitted bots."""
    return {e["name"]: e["owner"] for e in config.get("entrants", []) if e.get("owner")}


def record_for(
    who: Principal | None, record: rec_pb.GameRecord, seat_owners: Mapping[str, str], deal_left: int
) -> rec_pb.GameRecord:
    """A game record as ``who`` may read it: each player's address and fault details only for its owner (by name
    in ``seat_owners``) or an organiser; and without the deal while ``deal_left`` other games still have it to
    play (``deal_secret``)."""
    out = rec_pb.GameRecord()
    out.CopyFrom(record)
    private = {p.seat: private_to(who, seat_owners.get(p.name)) for p in out.header.players}
    for player in out.header.players:
        if not private[player.seat]:
            player.address = ""  # not the game's content: verify does not need it
    for decision in out.decisions:
        if decision.fault_detail and not private.get(decision.seat, False):
            decision.fault_detail = ""
    return withhold_deal(out) if deal_secret(who, deal_left) else out
