"""An open ladder's lifecycle through the API, with a real server and real bot processes (issue 42, items 3 and 4):
created and started with no entrants; a bot submitted before the ladder existed joins it at its start; a bot that
joined by open entry is counted like any entrant, in ListEntrants and GetEntrant."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

from .helpers import ABLUXX, ALICE, BOB, ORGANISER, auth, config, start_bots, start_server, stub, submit, write_settings
from .test_ladder import games, names, tournament, wait_for


def test_an_open_ladder_starts_empty_and_takes_bots_submitted_before_it(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    bots = start_bots(["greedy", "random"])
    try:
        s = stub(srv.address)
        assert submit(s, "early", bots[0].address, ALICE).HasField("entrant")  # before any ladder exists
        c = config("empty", [], table_size=2, concurrency=2, ladder=ref_pb.LadderConfig(open=True, games=8))
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
        assert list(t.entrants) == []
        t = s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))
        tid = t.tournament_id
        assert t.state == ref_pb.TOURNAMENT_STATE_RUNNING
        assert "early.v1" in tournament(s, tid).entrants  # joined at the start, without submitting again
        # alone, it cannot fill a table of 2 owners: the ladder says so, in the API and in the CLI
        waiting = wait_for("the ladder to say what it waits for", lambda: tournament(s, tid).waiting)
        assert "needs 2" in waiting and "1 owners" in waiting
        out = subprocess.run([*ABLUXX, "remote", "tournament", "show", tid, "--server", srv.address],
                             capture_output=True, text=True, timeout=120).stdout  # fmt: skip
        assert f"waiting: {waiting}" in out and "0/8 games" in out  # against its budget
        assert submit(s, "late", bots[1].address, BOB).HasField("entrant")
        both = {"early.v1", "late.v1"}
        wait_for("both bots to play each other", lambda: any(names(g) == both for g in games(s, tid)))
        wait_for("the budget to be played", lambda: tournament(s, tid).state == ref_pb.TOURNAMENT_STATE_FINISHED)
        played = {n: sum(n in names(g) for g in games(s, tid)) for n in ("early.v1", "late.v1")}
        listed = s.ListEntrants(ref_pb.ListEntrantsRequest(), metadata=auth(ORGANISER)).entrants
        assert {e.entrant_id: e.games for e in listed} == played and min(played.values()) > 0
        one = s.GetEntrant(ref_pb.GetEntrantRequest(name="late"), metadata=auth(ORGANISER))
        assert one.games == played["late.v1"] and one.sigma < 8.3  # rated, not the prior
    finally:
        for p in (srv, *bots):
            p.stop()


def test_cancelling_a_ladder_leaves_its_bots_free_for_another(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    bots = start_bots(["greedy", "random"])
    try:
        s = stub(srv.address)
        assert submit(s, "ga", bots[0].address, ALICE).HasField("entrant")
        assert submit(s, "rb", bots[1].address, BOB).HasField("entrant")
        both = {"ga.v1", "rb.v1"}
        c = config("first", [], table_size=2, concurrency=2, ladder=ref_pb.LadderConfig(open=True))
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))
        tids = [t.tournament_id]
        # the second from a file, as an organiser would: created empty, started, and joined by both bots
        (tmp_path / "second.toml").write_text("table_size = 2\nconcurrency = 2\n[ladder]\nopen = true\n")
        out = subprocess.run([*ABLUXX, "remote", "tournament", "create", str(tmp_path / "second.toml"), "--start",
                              "--server", srv.address, "--token", ORGANISER], capture_output=True, text=True,
                             timeout=120)  # fmt: skip
        assert out.returncode == 0, out.stderr
        created = re.search(
            r"created ladder (\S+): no budget \(it runs until stopped\); entrants: none yet", out.stdout
        )
        assert created and f"tournament {created[1]}: running, 0 games played" in out.stdout, out.stdout
        tids.append(created[1])
        for tid in tids:
            wait_for(f"{tid} to play", lambda tid=tid: any(names(g) == both for g in games(s, tid)))
        s.CancelTournament(ref_pb.CancelTournamentRequest(tournament_id=tids[0]), metadata=auth(ORGANISER))
        assert tournament(s, tids[0]).state == ref_pb.TOURNAMENT_STATE_CANCELLED
        seen = len(games(s, tids[1]))
        wait_for("the other ladder to seat both bots again and again",
                 lambda: sum(names(g) == both for g in games(s, tids[1])[seen:]) >= 10)  # fmt: skip
        s.StopTournament(ref_pb.StopTournamentRequest(tournament_id=tids[1]), metadata=auth(ORGANISER))
        wait_for("it to finish", lambda: tournament(s, tids[1]).state == ref_pb.TOURNAMENT_STATE_FINISHED)
    finally:
        for p in (srv, *bots):
            p.stop()
