"""Who sees what (referee/service/visibility.py), called in this process so that mutation testing sees it
(scripts/mutation.py): the rule every surface asks. The gRPC and site tests check the same rule end to end through a
spawned server (test_privacy.py, tests/web); these check each decision alone: an author sees their own bots'
addresses and fault details and nobody else's, an organiser sees everything, and a deal still in play is withheld
from all but organisers."""

from __future__ import annotations

from dataclasses import dataclass

from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.service.auth import Principal
from referee.service.visibility import config_for, deal_secret, owners, record_for, version_private

ALICE, BOB = Principal("alice", False), Principal("bob", False)
ORGANISER = Principal("organiser", True)


@dataclass(frozen=True)
class Version:
    owner: str


def test_a_versions_details_are_its_owners_and_the_organisers_and_nobody_elses() -> None:
    assert version_private(ALICE, Version("alice"))
    assert not version_private(BOB, Version("alice"))
    assert not version_private(None, Version("alice"))
    assert version_private(ORGANISER, Version("alice"))
    assert version_private(Principal("organiser2", True), Version("bob"))


def test_a_bot_nobody_submitted_is_private_to_organisers_alone() -> None:
    """A config file's entrant has no owner: no author, whatever their name, may see its details."""
    entrant = {"name": "house", "address": "10.0.0.1:5000"}
    assert config_for(ALICE, {"entrants": [entrant]})["entrants"] == [{"name": "house"}]
    assert config_for(Principal("", False), {"entrants": [entrant]})["entrants"] == [{"name": "house"}]
    assert config_for(ORGANISER, {"entrants": [entrant]})["entrants"] == [entrant]


def test_a_deal_is_secret_while_another_game_has_it_to_play_except_to_organisers() -> None:
    assert deal_secret(ALICE, 1) and deal_secret(None, 3)
    assert not deal_secret(ALICE, 0) and not deal_secret(None, 0)
    assert not deal_secret(ORGANISER, 1)


CONFIG = {
    "name": "cup",
    "games": 4,
    "entrants": [
        {"name": "a", "owner": "alice", "address": "10.0.0.1:5000"},
        {"name": "b", "owner": "bob", "address": "10.0.0.2:5000"},
        {"name": "r", "policy": "random"},
    ],
}


def test_a_config_shows_each_address_to_its_owner_and_organisers_and_keeps_the_rest() -> None:
    seen = config_for(ALICE, CONFIG)
    assert seen["name"] == "cup" and seen["games"] == 4
    assert seen["entrants"] == [
        {"name": "a", "owner": "alice", "address": "10.0.0.1:5000"},
        {"name": "b", "owner": "bob"},
        {"name": "r", "policy": "random"},
    ]
    assert config_for(None, CONFIG)["entrants"][0] == {"name": "a", "owner": "alice"}
    assert config_for(ORGANISER, CONFIG) == CONFIG
    assert CONFIG["entrants"][1]["address"] == "10.0.0.2:5000"  # the stored config is left as it was


def test_owners_names_the_submitted_entrants_alone() -> None:
    assert owners(CONFIG) == {"a": "alice", "b": "bob"}
    assert owners({"entrants": [{"name": "x", "owner": ""}]}) == {}
    assert owners({}) == {}


def record() -> rec_pb.GameRecord:
    out = rec_pb.GameRecord(complete=True)
    out.header.game_id = "g1"
    out.header.deck.extend([3, 5, 7])
    out.header.seed = 99
    for seat, (name, address) in enumerate([("a", "10.0.0.1:5000"), ("b", "10.0.0.2:5000"), ("r", "")]):
        out.header.players.add(seat=seat, name=name, address=address)
    out.decisions.add(seat=0, fault_detail="alice's error shows her hand")
    out.decisions.add(seat=1, fault_detail="bob's error")
    out.decisions.add(seat=2)
    out.decisions.add(seat=7, fault_detail="a seat not in the header")
    out.footer.salt = b"salt"
    out.footer.final_digest = b"digest"
    return out


SEATS = {"a": "alice", "b": "bob"}


def _addresses(r: rec_pb.GameRecord) -> list[str]:
    return [p.address for p in r.header.players]


def _details(r: rec_pb.GameRecord) -> list[str]:
    return [d.fault_detail for d in r.decisions]


def test_a_record_shows_each_players_address_and_faults_to_its_owner_alone() -> None:
    mine = record_for(ALICE, record(), SEATS, 0)
    assert _addresses(mine) == ["10.0.0.1:5000", "", ""]
    assert _details(mine) == ["alice's error shows her hand", "", "", ""]
    assert list(mine.header.deck) == [3, 5, 7] and mine.footer.salt == b"salt" and not mine.deal_withheld
    anyone = record_for(None, record(), SEATS, 0)
    assert _addresses(anyone) == ["", "", ""] and _details(anyone) == ["", "", "", ""]
    whole = record_for(ORGANISER, record(), SEATS, 3)  # everything, the deal in play too
    assert _details(whole) == [*_details(record())[:3], ""]  # but a detail of a seat the header does not name
    whole.decisions[3].fault_detail = "a seat not in the header"
    assert whole == record()


def test_a_record_whose_deal_is_in_play_is_withheld_but_from_organisers() -> None:
    original = record()
    seen = record_for(ALICE, original, SEATS, 1)
    assert seen.deal_withheld and not seen.header.deck and not seen.header.seed and not seen.decisions
    assert seen.footer.salt == b"" and seen.header.game_id == "g1"
    assert _addresses(seen) == ["10.0.0.1:5000", "", ""]
    assert original == record()  # the stored record is not changed
