"""Auth over real gRPC: every call that changes something, with no token, a wrong token and another author's
token, is refused with UNAUTHENTICATED or PERMISSION_DENIED and changes nothing; closed reads need a token."""

from __future__ import annotations

import grpc
import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

from .helpers import (
    ALICE,
    BOB,
    ORGANISER,
    auth,
    code_of,
    config,
    error_of,
    start_bots,
    start_server,
    stub,
    submit,
    write_settings,
)

UNAUTH, DENIED = grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A server with alice's bot submitted and one created tournament."""
    folder = tmp_path_factory.mktemp("auth")
    srv = start_server(folder / "data", write_settings(folder))
    (bot,) = start_bots(["greedy"])
    s = stub(srv.address)
    assert submit(s, "alices-bot", bot.address, ALICE).HasField("entrant")
    t = s.CreateTournament(
        ref_pb.CreateTournamentRequest(config=config("auth", [{"bot": "alices-bot"}, {"policy": "random"}])),
        metadata=auth(ORGANISER),
    )
    yield s, bot.address, t.tournament_id
    bot.stop()
    srv.stop()


def snapshot(s) -> tuple:
    """Everything a mutating call could change, as a reader sees it."""
    entrants = s.ListEntrants(ref_pb.ListEntrantsRequest()).entrants
    tournaments = s.ListTournaments(ref_pb.ListTournamentsRequest()).tournaments
    return (
        sorted((e.entrant_id, e.state, e.owner) for e in entrants),
        sorted((t.tournament_id, t.state, t.finished) for t in tournaments),
    )


def calls(address: str, tid: str) -> dict:
    """Each mutating call, made with the given metadata."""
    return {
        "submit": lambda s, md: s.SubmitBot(ref_pb.SubmitBotRequest(name="alices-bot", address=address), metadata=md),
        "submit-as-alice": lambda s, md: s.SubmitBot(
            ref_pb.SubmitBotRequest(name="sneaky", address=address, owner="alice"), metadata=md
        ),
        "retire": lambda s, md: s.RetireEntrant(ref_pb.RetireEntrantRequest(name="alices-bot"), metadata=md),
        "create": lambda s, md: s.CreateTournament(
            ref_pb.CreateTournamentRequest(config=config("other", [{"policy": "random"}, {"policy": "greedy"}])),
            metadata=md,
        ),
        "start": lambda s, md: s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=md),
        "cancel": lambda s, md: s.CancelTournament(ref_pb.CancelTournamentRequest(tournament_id=tid), metadata=md),
    }


@pytest.mark.parametrize("call", ["submit", "submit-as-alice", "retire", "create", "start", "cancel"])
@pytest.mark.parametrize(
    ("who", "metadata", "expected"),
    [
        ("no token", [], UNAUTH),
        ("a wrong token", auth("not-a-known-token"), UNAUTH),
        ("a malformed header", [("authorization", ORGANISER)], UNAUTH),
        ("another author", auth(BOB), DENIED),
    ],
)
def test_a_mutating_call_without_the_right_token_is_refused_with_no_side_effect(world, call, who, metadata,
                                                                                expected) -> None:  # fmt: skip
    s, address, tid = world
    before = snapshot(s)
    err = error_of(calls(address, tid)[call], s, metadata)
    assert err.code() == expected, (call, who, err.details())
    assert snapshot(s) == before


@pytest.mark.parametrize("header", [ORGANISER, f"Basic {ORGANISER}", f"Token {ORGANISER}", f"{ORGANISER} {ORGANISER}"],
                         ids=["bare", "basic", "token", "token-as-scheme"])  # fmt: skip
def test_only_the_bearer_scheme_carries_a_token(world, header) -> None:
    """The organiser's own token under any scheme but Bearer is refused, and creates nothing."""
    s, address, tid = world
    before = snapshot(s)
    err = error_of(calls(address, tid)["create"], s, [("authorization", header)])
    assert err.code() == UNAUTH and "Bearer" in err.details(), err.details()
    assert snapshot(s) == before


def test_authors_may_not_drive_tournaments_but_organisers_may_do_everything(world) -> None:
    s, address, tid = world
    for name in ("create", "start", "cancel"):
        assert code_of(calls(address, tid)[name], s, auth(ALICE)) == DENIED
    # the owner retires her own bot; an organiser may retire anyone's
    assert s.RetireEntrant(ref_pb.RetireEntrantRequest(name="alices-bot"), metadata=auth(ALICE)).state == (
        ref_pb.ENTRANT_STATE_RETIRED
    )
    t = s.CancelTournament(ref_pb.CancelTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
    assert t.state == ref_pb.TOURNAMENT_STATE_CANCELLED
    assert code_of(s.StartTournament, ref_pb.StartTournamentRequest(tournament_id=tid),
                   metadata=auth(ORGANISER)) == grpc.StatusCode.FAILED_PRECONDITION  # fmt: skip


def test_a_config_out_of_range_is_invalid_argument_naming_the_field_and_nothing_is_created(world) -> None:
    s, _, _ = world
    before = snapshot(s)
    bad = [
        (config("x", [{"policy": "random"}, {"policy": "greedy"}], table_size=9), "config.table_size"),
        (config("x", [{"policy": "random"}, {"policy": "nobody"}]), "config.entrants[1].policy"),
        (config("x", [{"policy": "random"}, {"name": "a", "address": "nowhere"}]), "config.entrants[1].address"),
        (config("", [{"policy": "random"}, {"policy": "greedy"}]), "config.name"),
        (config("x", [{"policy": "random"}]), "config.entrants"),
    ]
    for c, field in bad:
        err = error_of(s.CreateTournament, ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and err.details().startswith(field + ":"), err.details()
    err = error_of(s.CreateTournament, ref_pb.CreateTournamentRequest(config=config("x", [{"bot": "ghost"},
                   {"policy": "random"}])), metadata=auth(ORGANISER))  # fmt: skip
    assert err.code() == grpc.StatusCode.NOT_FOUND and "config.entrants[0].bot" in err.details()
    assert snapshot(s) == before


def test_reads_can_be_closed_by_config(tmp_path) -> None:
    settings = write_settings(tmp_path, extra="")
    settings.write_text(settings.read_text().replace("[auth]\n", "[auth]\nopen_reads = false\n"))
    srv = start_server(tmp_path / "data", settings)
    try:
        s = stub(srv.address)
        assert code_of(s.ListEntrants, ref_pb.ListEntrantsRequest()) == UNAUTH
        assert code_of(s.ListEntrants, ref_pb.ListEntrantsRequest(), metadata=auth("wrong-token")) == UNAUTH
        assert list(s.ListEntrants(ref_pb.ListEntrantsRequest(), metadata=auth(BOB)).entrants) == []
    finally:
        srv.stop()


def test_tokens_from_the_environment(tmp_path) -> None:
    srv = start_server(tmp_path / "data", None, env={"ABLUXX_ORGANISER_TOKENS": "env-organiser-1",
                                                      "ABLUXX_AUTHOR_TOKENS": "carol:carol-token"})  # fmt: skip
    try:
        s = stub(srv.address)
        c = config("env", [{"policy": "random"}, {"policy": "greedy"}])
        assert code_of(s.CreateTournament, ref_pb.CreateTournamentRequest(config=c),
                       metadata=auth("carol-token")) == DENIED  # fmt: skip
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth("env-organiser-1"))
        assert t.state == ref_pb.TOURNAMENT_STATE_CREATED
    finally:
        srv.stop()


@pytest.mark.parametrize(
    "data, env",
    [
        ({"auth": {"organiser_tokens": ["same-token"], "authors": {"alice": "same-token"}}}, {}),
        ({"auth": {"authors": {"alice": "same-token"}}}, {"ABLUXX_ORGANISER_TOKENS": "same-token"}),
        ({"auth": {"organiser_tokens": ["same-token"]}}, {"ABLUXX_AUTHOR_TOKENS": "alice:same-token"}),
        ({"auth": {"authors": {"alice": "same-token", "bob": "same-token"}}}, {}),
        ({"auth": {"organiser_tokens": ["same-token", "same-token"]}}, {}),
    ],
    ids=[
        "organiser-and-author",
        "env-organiser-and-author",
        "organiser-and-env-author",
        "two-authors",
        "two-organisers",
    ],
)
def test_a_token_given_to_two_people_is_refused_organisers_included(data, env) -> None:
    """An organiser token equal to an author's would act as the author alone (the last match wins): the organiser
    would silently lose their rights. The settings refuse it, wherever each token comes from."""
    from referee.service.settings import ConfigError, parse

    with pytest.raises(ConfigError, match="the same token is given twice"):
        parse(data, "server.toml", env=env)
    assert parse({"auth": {"organiser_tokens": ["organiser-token"], "authors": {"alice": "alice-token"}}}, "s", env={})
