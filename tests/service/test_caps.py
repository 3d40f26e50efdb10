"""One author cannot bloat what everyone reads (issue 11 item 8): a bot's Hello texts are capped alike by SubmitBot,
a tournament's start-up check and the match; bots per author and open tournaments per organiser are capped; every
List* call comes in pages, and the remote CLI follows them."""

from __future__ import annotations

import subprocess
from concurrent import futures

import grpc
import pytest

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

from .helpers import (
    ABLUXX,
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

HOUSE = [{"name": f"p{i}", "policy": p} for i, p in enumerate(["random", "greedy", "counter", "random"])]
LIMITS = "max_bots_per_author = 2\nmax_open_tournaments = 3\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("caps")
    settings = write_settings(folder)
    settings.write_text(settings.read_text().replace("[service]\n", "[service]\n" + LIMITS))
    srv = start_server(folder / "data", settings)
    yield srv
    srv.stop()


class _Boastful(grpc.GenericRpcHandler):
    """A bot whose Hello carries a 60 KB version string (it plays nothing: Hello is as far as it should get)."""

    def service(self, handler_call_details):
        if handler_call_details.method != "/abluxxen.v1.Bot/Hello":
            return None
        reply = bot_pb.HelloReply(name="boast", version="v" * 60_000, author="me", protocol_version=1,
                                  transports=[bot_pb.TRANSPORT_STREAM])  # fmt: skip
        return grpc.unary_unary_rpc_method_handler(lambda request, context: reply,
                                                   response_serializer=bot_pb.HelloReply.SerializeToString)  # fmt: skip


def test_hello_texts_are_capped_by_submit_and_by_the_start_up_check(server) -> None:
    bot = grpc.server(futures.ThreadPoolExecutor(2), handlers=[_Boastful()])
    address = f"127.0.0.1:{bot.add_insecure_port('127.0.0.1:0')}"
    bot.start()
    try:
        s = stub(server.address)
        refusal = submit(s, "boast", address, ALICE).refusal
        assert refusal.check == ref_pb.COMPLIANCE_CHECK_HELLO
        assert refusal.reason == "not an abluxxen bot: its Hello version is over 200 bytes", refusal.reason

        c = config("boasting", [{"name": "boast", "address": address}, HOUSE[0]])
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
        err = error_of(s.StartTournament, ref_pb.StartTournamentRequest(tournament_id=t.tournament_id),
                       metadata=auth(ORGANISER))  # fmt: skip
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and "over 200 bytes" in err.details(), err.details()
        s.CancelTournament(ref_pb.CancelTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))
    finally:
        bot.stop(None)


def test_bots_per_author_and_open_tournaments_per_organiser_are_capped(server) -> None:
    s = stub(server.address)
    (bot,) = start_bots(["greedy"])
    try:
        for name in ("one", "two"):
            assert submit(s, name, bot.address, ALICE).HasField("entrant")
        err = error_of(submit, s, "three", bot.address, ALICE)
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "limit per author" in err.details()
        assert submit(s, "two", bot.address, ALICE, force=True).entrant.version == 2  # a new version is no new bot
    finally:
        bot.stop()

    made = []
    for seed in range(1, 10):
        try:
            c = config("open", HOUSE, seed=seed)
            made.append(s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)))
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "limit per organiser" in e.details()
            break
    else:
        raise AssertionError("no cap on open tournaments")
    s.CancelTournament(ref_pb.CancelTournamentRequest(tournament_id=made[0].tournament_id), metadata=auth(ORGANISER))
    c = config("open", HOUSE, seed=99)
    again = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
    for t in (again, made[1]):  # room for the next test's tournament
        s.CancelTournament(ref_pb.CancelTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))


def test_every_list_comes_in_pages_and_the_cli_follows_them(server) -> None:
    s = stub(server.address)  # the versions submitted above (one.v1, two.v1, two.v2) and tournaments made above

    def every(method, request, field: str) -> list:
        items, pages = [], 0
        while True:
            out = method(request)
            got = list(getattr(out, field))
            assert len(got) <= request.page_size
            items += got
            pages += 1
            if not out.next_page_token:
                return items, pages
            request.page_token = out.next_page_token

    everyone = list(s.ListEntrants(ref_pb.ListEntrantsRequest(all_versions=True)).entrants)
    paged, pages = every(s.ListEntrants, ref_pb.ListEntrantsRequest(page_size=2, all_versions=True), "entrants")
    assert len(everyone) >= 3 and [e.entrant_id for e in paged] == [e.entrant_id for e in everyone]
    assert pages == -(-len(everyone) // 2)
    tournaments, _ = every(s.ListTournaments, ref_pb.ListTournamentsRequest(page_size=1), "tournaments")
    assert [t.tournament_id for t in tournaments] == [
        t.tournament_id for t in s.ListTournaments(ref_pb.ListTournamentsRequest()).tournaments
    ] and len(tournaments) >= 2

    c = config("many", HOUSE, deals=20, seed=1234)  # 6 tables x 20 deals = 120 games: two pages of 100
    t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
    s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))
    watch_to_end(s, t.tournament_id)
    first = s.ListGames(ref_pb.ListGamesRequest(tournament_id=t.tournament_id))
    assert (len(first.games), first.total) == (100, 120) and first.next_page_token
    games, pages = every(s.ListGames, ref_pb.ListGamesRequest(tournament_id=t.tournament_id, page_size=50), "games")
    assert len({g.game_id for g in games}) == 120 and pages == 3
    err = error_of(s.ListGames, ref_pb.ListGamesRequest(page_token="not-a-token"))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and err.details().startswith("page_token:")

    run = subprocess.run([*ABLUXX, "remote", "games", t.tournament_id, "--server", server.address],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[-1] == "120 games" and len(lines) == 121
    run = subprocess.run([*ABLUXX, "remote", "entrants", "--all", "--server", server.address],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0 and len(run.stdout.splitlines()) == len(everyone), run.stderr


def test_a_retired_bot_submitted_again_counts_against_the_bots_per_author_cap(server) -> None:
    """Bringing a retired bot back is a new active bot: at the cap, it is refused like a new name would be."""
    s = stub(server.address)
    (bot,) = start_bots(["random"])
    try:
        for name in ("bob-one", "bob-two"):
            assert submit(s, name, bot.address, BOB).HasField("entrant")
        s.RetireEntrant(ref_pb.RetireEntrantRequest(name="bob-one"), metadata=auth(BOB))
        assert submit(s, "bob-three", bot.address, BOB).HasField("entrant")  # the retired one left room
        err = error_of(submit, s, "bob-one", bot.address, BOB)
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "limit per author" in err.details()
        assert s.GetEntrant(ref_pb.GetEntrantRequest(name="bob-one")).state == ref_pb.ENTRANT_STATE_RETIRED
        s.RetireEntrant(ref_pb.RetireEntrantRequest(name="bob-two"), metadata=auth(BOB))
        assert submit(s, "bob-one", bot.address, BOB).entrant.version == 2  # with room again, it comes back
    finally:
        bot.stop()
