"""An open ladder through the API over real gRPC, with real bot processes: bots submitted before and during it join
at the next round and play; a new version replaces the old one, which keeps its games; standings show the latest
versions unless asked for all; two bots of one author never share a table; an author withdraws a bot; an organiser
pauses, resumes and stops it, and every finished game stays."""

from __future__ import annotations

import time
from pathlib import Path

import grpc

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

from .helpers import (
    ALICE,
    BOB,
    ORGANISER,
    auth,
    code_of,
    config,
    start_bots,
    start_server,
    stub,
    submit,
    wait_for,
    write_settings,
)

PAUSED, RUNNING = ref_pb.TOURNAMENT_STATE_PAUSED, ref_pb.TOURNAMENT_STATE_RUNNING


def games(s, tid: str) -> list[ref_pb.GameSummary]:
    out, token = [], ""
    while True:
        page = s.ListGames(ref_pb.ListGamesRequest(tournament_id=tid, page_size=1000, page_token=token),
                           metadata=auth(ORGANISER))  # fmt: skip
        out += list(page.games)
        if not (token := page.next_page_token):
            return out


def names(g: ref_pb.GameSummary) -> set[str]:
    return {seat.entrant for seat in g.seats}


def tournament(s, tid: str) -> ref_pb.Tournament:
    return s.GetTournament(ref_pb.GetTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))


def test_an_open_ladder_takes_submissions_versions_withdrawals_pause_and_stop(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path, grace_s=60))
    bots = start_bots(["greedy", "random", "counter", "greedy"])
    try:
        s = stub(srv.address)
        c = config("open", [{"name": "house-greedy", "policy": "greedy"}, {"name": "house-random", "policy": "random"}],
                   table_size=3, concurrency=2, ladder=ref_pb.LadderConfig(open=True))  # fmt: skip
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
        tid = t.tournament_id
        # alice's two bots (an author's bots never share a table), before the ladder starts
        assert submit(s, "ag", bots[0].address, ALICE).HasField("entrant")
        assert submit(s, "ar", bots[1].address, ALICE).HasField("entrant")
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        wait_for("alice's bots to play", lambda: {"ag.v1", "ar.v1"} <= set().union(*map(names, games(s, tid))))
        # bob submits mid-ladder: validated (SubmitBot's checks), it joins at a later round and plays
        started = max(g.deal for g in games(s, tid))
        assert submit(s, "bc", bots[2].address, BOB).HasField("entrant")
        first = wait_for("bob's bot to play", lambda: [g for g in games(s, tid) if "bc.v1" in names(g)])
        assert min(g.deal for g in first) > started  # a round chosen after it joined
        assert "bc.v1" in tournament(s, tid).entrants

        # a new version of alice's ag: the old one is seated no more, keeps its games and its standing on request
        assert submit(s, "ag", bots[3].address, ALICE).entrant.version == 2
        v2 = wait_for("ag.v2 to play", lambda: [g for g in games(s, tid) if "ag.v2" in names(g)])
        joined = min(g.deal for g in v2)
        old = [g for g in games(s, tid) if "ag.v1" in names(g)]
        assert old and all(g.deal < joined for g in old)
        latest = s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid), metadata=auth(ALICE))
        every = s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid, all_versions=True), metadata=auth(ALICE))
        assert "ag.v1" not in {r.entrant for r in latest.rows} and "ag.v2" in {r.entrant for r in latest.rows}
        assert {"ag.v1", "ag.v2"} <= {r.entrant for r in every.rows}
        assert [r.rank for r in latest.rows] == list(range(1, len(latest.rows) + 1))

        # pause: no new game starts; the games stay; resume: they go on
        t = s.PauseTournament(ref_pb.PauseTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        assert t.state == PAUSED and t.in_flight == 0
        held = len(games(s, tid))
        time.sleep(3)
        assert len(games(s, tid)) == held and tournament(s, tid).state == PAUSED
        assert s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid),
                                 metadata=auth(ORGANISER)).state == RUNNING  # fmt: skip
        wait_for("games after the resume", lambda: len(games(s, tid)) > held)

        # alice withdraws ar: it is seated in no later round
        s.RetireEntrant(ref_pb.RetireEntrantRequest(name="ar"), metadata=auth(ALICE))
        after = max(g.deal for g in games(s, tid)) + 3  # rounds chosen before the withdrawal may still seat it
        wait_for("rounds after the withdrawal", lambda: max(g.deal for g in games(s, tid)) > after)
        assert not [g for g in games(s, tid) if "ar.v1" in names(g) and g.deal > after]

        # an author cannot stop it; an organiser can: the chosen rounds finish, then the ladder is finished
        denied = code_of(s.StopTournament, ref_pb.StopTournamentRequest(tournament_id=tid), metadata=auth(BOB))
        assert denied == grpc.StatusCode.PERMISSION_DENIED
        before_stop = {g.game_id for g in games(s, tid)}
        s.StopTournament(ref_pb.StopTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        wait_for("the ladder to finish", lambda: tournament(s, tid).state == ref_pb.TOURNAMENT_STATE_FINISHED)
        final = games(s, tid)
        assert before_stop <= {g.game_id for g in final}  # finished games always stay
        assert tournament(s, tid).finished == len(final)

        # never two of alice's bots at one table
        alice = {"ag.v1", "ag.v2", "ar.v1"}
        assert all(len(names(g) & alice) <= 1 for g in final)
    finally:
        for b in bots:
            b.stop()
        srv.stop()
