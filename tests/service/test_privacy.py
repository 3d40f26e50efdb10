"""A bot's address is for its owner and the organisers (issue 11 item 9): anyone else could probe or flood a rival's
bot during its games. Nor may an author submit the address another author's live bot is at."""

from __future__ import annotations

import json
from pathlib import Path

import grpc

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

from .helpers import (
    ALICE,
    BOB,
    ORGANISER,
    auth,
    config,
    error_of,
    start_bots,
    start_server,
    stub,
    submit,
    watch_to_end,
    write_settings,
)


def test_addresses_are_shown_to_the_owner_and_organisers_only(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    (bot,) = start_bots(["greedy"])
    try:
        s = stub(srv.address)
        accepted = submit(s, "alices", bot.address, ALICE).entrant
        assert accepted.address == bot.address  # the owner sees it

        def shown(token: str | None) -> tuple[str, set[str]]:
            one = s.GetEntrant(ref_pb.GetEntrantRequest(name="alices"), metadata=auth(token)).address
            listed = {e.address for e in s.ListEntrants(ref_pb.ListEntrantsRequest(), metadata=auth(token)).entrants}
            return one, listed

        assert shown(None) == ("", {""})
        assert shown(BOB) == ("", {""})
        assert shown(ALICE) == (bot.address, {bot.address})
        assert shown(ORGANISER) == (bot.address, {bot.address})

        c = config("private", [{"bot": "alices"}, {"name": "house", "policy": "random"}])
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
        assert json.loads(t.config_json)["entrants"][0]["address"] == bot.address  # the organiser's view
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))
        events = watch_to_end(s, t.tournament_id)
        seen = [e.tournament.config_json for e in events if e.WhichOneof("event") == "tournament"]
        for token in (None, BOB):
            got = s.GetTournament(ref_pb.GetTournamentRequest(tournament_id=t.tournament_id), metadata=auth(token))
            seen += [got.config_json]
            seen += [x.config_json for x in s.ListTournaments(ref_pb.ListTournamentsRequest(),
                                                               metadata=auth(token)).tournaments]  # fmt: skip
        assert seen and all(bot.address not in text and "address" not in text for text in seen)
        # the owner sees her own bot's address in the config, as GetEntrant shows it to her (one rule: visibility.py)
        mine = s.GetTournament(ref_pb.GetTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ALICE))
        assert json.loads(mine.config_json)["entrants"][0]["address"] == bot.address

        game = s.ListGames(ref_pb.ListGamesRequest(tournament_id=t.tournament_id)).games[0].game_id
        own = s.GetGameRecord(ref_pb.GetGameRecordRequest(game_id=game), metadata=auth(ALICE))
        assert sorted(p.address for p in own.header.players) == ["", bot.address]
        assert [p.address for p in s.GetGameRecord(ref_pb.GetGameRecordRequest(game_id=game),
                                                   metadata=auth(BOB)).header.players] == ["", ""]  # fmt: skip

        game = s.ListGames(ref_pb.ListGamesRequest(tournament_id=t.tournament_id)).games[0].game_id
        anyone = s.GetGameRecord(ref_pb.GetGameRecordRequest(game_id=game))
        assert [p.address for p in anyone.header.players] == ["", ""]
        organiser = s.GetGameRecord(ref_pb.GetGameRecordRequest(game_id=game), metadata=auth(ORGANISER))
        assert bot.address in [p.address for p in organiser.header.players]
    finally:
        bot.stop()
        srv.stop()


def test_an_author_cannot_submit_the_address_of_another_authors_bot(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    (bot,) = start_bots(["greedy"])
    try:
        s = stub(srv.address)
        assert submit(s, "alices", bot.address, ALICE).HasField("entrant")
        port = bot.address.rpartition(":")[2]
        for address in (bot.address, f"localhost:{port}", f"0.0.0.0:{port}"):
            err = error_of(submit, s, "bobs-copy", address, BOB)
            assert err.code() == grpc.StatusCode.ALREADY_EXISTS, address
            assert err.details().startswith("address:") and "another author" in err.details()
        assert submit(s, "alices", bot.address, ALICE, force=True).entrant.version == 2  # its owner may, again
    finally:
        bot.stop()
        srv.stop()
