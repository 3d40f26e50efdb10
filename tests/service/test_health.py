"""Bot health through a real server (docs/service.md, "Bot health"): what a ladder marks down is kept in the store
and probed with Hello after a restart of the server; a bot that answers is up again, one down too long is
suspended; every surface (the API, ``abluxx remote entrants``, the site's bot page) says so; and its author brings
a suspended bot back by submitting it again unchanged, without a new version."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.store import health as health_store
from referee.store import open_store
from tests.web.site import get, start_site

from .helpers import ABLUXX, ALICE, BOB, ORGANISER, auth, start_bot, start_bots, stub, submit, terminate
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
