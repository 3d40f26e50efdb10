"""Bot health through a real server (docs/bot-health.md): what a ladder marks down is kept in the store
and probed with Hello after a restart of the server; a bot that answers is up again, one down too long is
suspended; every surface (the API, ``abluxx remote entrants``, the site's bot page) says so; and its author brings
a suspended bot back by submitting it again unchanged, without a new version."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.store import health as health_store
from referee.store import open_store
from tests.web.site import get, start_site

from .helpers import ABLUXX, ALICE, BOB, ORGANISER, auth, config, start_bot, start_bots, stub, submit, terminate
from .test_ladder import wait_for

HEALTH = """
[health]
first_probe_s = 1
max_probe_s = 2
suspend_after_s = 60
"""


def healths(s) -> dict[str, ref_pb.EntrantHealth]:
    listed = s.ListEntrants(ref_pb.ListEntrantsRequest(), metadata=auth(ORGANISER)).entrants
    return {e.entrant_id: e.health for e in listed}


def test_down_bots_are_probed_after_a_restart_and_shown_everywhere(tmp_path: Path) -> None:
    data = tmp_path / "data"
    site = start_site(data, tmp_path, HEALTH)
    alive, gone = start_bots(["greedy", "random"])
    try:
        s = stub(site.address)
        c = config("board", [], table_size=2, ladder=ref_pb.LadderConfig(open=True))  # created, not started
        tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
        assert submit(s, "a", alive.address, ALICE).HasField("entrant")
        assert submit(s, "b", gone.address, BOB).HasField("entrant")
        assert {n: h.status for n, h in healths(s).items()} == {"a.v1": "up", "b.v1": "up"}
        assert terminate(site.proc) == 0
        gone.stop()
        # what a ladder would have stored when their games could not start: a.v1 just now, b.v1 long ago
        with open_store(data) as store:
            health_store.set_status(store, "a.v1", "down", "no connection", time.time())
            health_store.set_status(store, "b.v1", "down", "no connection", time.time() - 100)
            health_store.add_missed(store, "b.v1", 3)

        site = start_site(data, tmp_path, HEALTH)
        s = stub(site.address)
        wait_for("a.v1 up and b.v1 suspended", lambda: (healths(s)["a.v1"].status, healths(s)["b.v1"].status)
                 == ("up", "suspended"), timeout=60)  # fmt: skip
        b = healths(s)["b.v1"]
        assert b.missed == 3 and b.since and "down for more than 60 s" in b.reason
        out = subprocess.run([*ABLUXX, "remote", "entrants", "--server", site.address, "--token", ORGANISER],
                             capture_output=True, text=True, timeout=120).stdout  # fmt: skip
        line = next(x for x in out.splitlines() if x.startswith("b.v1"))
        assert "suspended since" in line and "missed 3" in line
        status, _, page = get(f"{site.url}/bots/b")
        assert status == 200 and "suspended" in page and "missed 3" in page
        status, _, board = get(f"{site.url}/t/{tid}")  # the leaderboard marks it, with since when and games missed
        row = next(r for r in board.split("<tr ") if 'data-entrant="b.v1"' in r)
        assert status == 200 and ">suspended</span>" in row and "since" in row and "missed 3" in row
        api = s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid), metadata=auth(ORGANISER))
        assert {r.entrant: r.health for r in api.rows} == {"a.v1": "up", "b.v1": "suspended"}

        # its author restarts it at the same address and submits it again unchanged: up, still version 1
        again = start_bot("random", "--port", gone.address.rsplit(":", 1)[1])
        try:
            back = submit(s, "b", again.address, BOB).entrant
            assert (back.entrant_id, back.health.status) == ("b.v1", "up")
        finally:
            again.stop()
    finally:
        site.stop()
        alive.stop()
        gone.stop()


def test_a_change_of_health_is_a_tournament_event_of_the_ladders_that_have_it(tmp_path: Path) -> None:
    """In the service's own process, on a real store: the ladder's watchers hear of its entrant going down; the
    watchers of a ladder without it hear nothing."""
    from referee.service.server import RefereeService
    from referee.service.settings import Settings
    from referee.store import SqliteStore
    from referee.tournament.config import parse
    from referee.tournament.ladder_run import open_ladder

    async def main() -> list[list[ref_pb.TournamentEvent]]:
        service = RefereeService(SqliteStore(tmp_path / "data"), Settings())
        heard = []
        for name, who in (("with", "p1"), ("without", "q1")):
            entrants = [{"name": who, "policy": "greedy"}, {"name": f"{who}x", "policy": "random"}]
            c = parse({"name": name, "entrants": entrants, "ladder": {"games": 1}}, "test")
            open_ladder(service.store, c, "test")
            service.registry.set_state(c.tournament_id, "running")
            run = service._start_run(c)
            await run.cancel()  # the run stays listed, as a running ladder's does, but plays nothing here
            watcher = service.hub.subscribe(c.tournament_id)
            heard.append(watcher)
        service.health.absent("p1", "no connection")
        return [[w.queue.get_nowait() for _ in range(w.queue.qsize())] for w in heard]

    with_p1, without = asyncio.run(main())
    assert [(e.health.entrant, e.health.health.status, e.health.health.reason) for e in with_p1] == [
        ("p1", "down", "no connection")
    ]
    assert without == []
