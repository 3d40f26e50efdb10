"""Issue 42's try of a ladder, end to end, as a new entrant would make it: a real ``abluxx serve --http-port``, real
bot processes, real SQLite.

The try's steps, a test each (they share no server, so each can fail alone): an open ladder created and started
with no entrants, a bot submitted before it existed, bots of other owners joining, a new version, a stop, and then
every surface (the API, ``abluxx remote entrants``, ``abluxx remote standings``, local ``abluxx standings``, the
site) showing the same rows and the same games for every version; a killed bot that stops being seated (the
server's Health stands in for the ladder's presence), nobody else retired, and the bot back when restarted; and a
slow but legal bot whose games go on while the others' games start and finish beside them.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from tests.web.site import get, start_site

from .helpers import ABLUXX, ALICE, BOB, ORGANISER, auth, config, start_bot, start_bots, stub, submit
from .test_ladder import games, names, tournament, wait_for

ROW = re.compile(r'<tr data-entrant="([^"]+)" data-games="(\d+)">')


def cli(*args: str) -> str:
    out = subprocess.run([*ABLUXX, *args], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def open_ladder(s, name: str) -> str:
    c = config(name, [], table_size=3, concurrency=2, ladder=ref_pb.LadderConfig(open=True))
    t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
    s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t.tournament_id), metadata=auth(ORGANISER))
    return t.tournament_id


def test_every_surface_shows_the_same_games_for_every_version(tmp_path: Path) -> None:
    data = tmp_path / "data"
    site = start_site(data, tmp_path)
    bots = start_bots(["greedy", "random", "counter", "greedy"])
    try:
        s = stub(site.address)
        assert submit(s, "early", bots[0].address, ALICE).HasField("entrant")  # before the ladder exists
        tid = open_ladder(s, "walk")
        assert submit(s, "rb", bots[1].address, BOB).HasField("entrant")
        assert submit(s, "cc", bots[2].address, owner="carol").HasField("entrant")
        wait_for("every bot to play", lambda: {"early.v1", "rb.v1", "cc.v1"} <= set().union(*map(names, games(s, tid))))
        assert submit(s, "early", bots[3].address, ALICE).entrant.version == 2  # a new version: v1 is superseded
        wait_for("early.v2 to play", lambda: any("early.v2" in names(g) for g in games(s, tid)))
        s.StopTournament(ref_pb.StopTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        wait_for("the ladder to finish", lambda: tournament(s, tid).state == ref_pb.TOURNAMENT_STATE_FINISHED)

        played = Counter(n for g in games(s, tid) for n in names(g))  # the games themselves
        assert set(played) == {"early.v1", "early.v2", "rb.v1", "cc.v1"}
        api = s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid, all_versions=True), metadata=auth(ALICE))
        assert {r.entrant: r.games for r in api.rows} == played
        assert {r.entrant: r.state for r in api.rows}["early.v1"] == "superseded"
        listed = s.ListEntrants(ref_pb.ListEntrantsRequest(all_versions=True), metadata=auth(ORGANISER)).entrants
        assert {e.entrant_id: e.games for e in listed} == played
        # one ladder on the server: a version's rating over its games is its rating in the ladder
        rated = {r.entrant: (round(r.mu, 6), round(r.sigma, 6)) for r in api.rows}
        assert {e.entrant_id: (round(e.mu, 6), round(e.sigma, 6)) for e in listed} == rated
        remote = json.loads(cli("remote", "standings", tid, "--all", "--json", "--server", site.address))
        local = json.loads(cli("standings", tid, "--all", "--json", "--data", str(data)))
        for shown in (remote, local):
            assert {r["entrant"]: r["games"] for r in shown["standings"]} == played
            assert {r["entrant"]: (round(r["mu"], 6), round(r["sigma"], 6)) for r in shown["standings"]} == rated
            assert {r["entrant"]: r["state"] for r in shown["standings"]}["early.v1"] == "superseded"
            assert shown["games"] == sum(played.values()) // 3 and shown["scheduled"] == 0  # no budget
        assert "early.v2" not in local["head_to_head"]["early.v1"]  # one owner's versions never meet
        lines = cli("remote", "entrants", "--all", "--server", site.address, "--token", ORGANISER).splitlines()
        for e in listed:
            line = next(x for x in lines if x.startswith(e.entrant_id + " "))
            assert f"games {played[e.entrant_id]}" in line and f"({e.bot_version})" in line
        _, _, board = get(f"{site.url}/t/{tid}?all=1")
        assert {n: int(k) for n, k in ROW.findall(board)} == played
        assert f"{sum(played.values()) // 3} games played" in board and " of " not in board.split("</caption>")[0]
        assert '<span class="mark">superseded</span>' in board and "early.v1 (superseded)" in board  # row, legend
        # latest versions by default, everywhere
        latest = {"early.v2", "rb.v1", "cc.v1"}
        _, _, board = get(f"{site.url}/t/{tid}")
        assert {n for n, _ in ROW.findall(board)} == latest
        local = json.loads(cli("standings", tid, "--json", "--data", str(data)))
        assert {r["entrant"] for r in local["standings"]} == latest
        api = s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid), metadata=auth(ALICE))
        assert {r.entrant for r in api.rows} == latest
        listed = s.ListEntrants(ref_pb.ListEntrantsRequest(), metadata=auth(ORGANISER)).entrants
        assert {e.entrant_id for e in listed} == latest
        lines = cli("remote", "entrants", "--server", site.address, "--token", ORGANISER).splitlines()
        assert {x.split()[0] for x in lines} == latest
        _, _, rb = get(f"{site.url}/bots/rb")  # an open-entry bot's page names the ladder it plays in
        assert f"{tid}</a> as rb.v1" in rb and "No tournament yet" not in rb
        _, _, bots_page = get(f"{site.url}/bots")
        assert bots_page.count('href="/bots/early"') == 1  # one row: its latest version
    finally:
        site.stop()
        for b in bots:
            b.stop()


def test_a_killed_bot_stands_aside_and_comes_back(tmp_path: Path) -> None:
    data = tmp_path / "data"
    site = start_site(data, tmp_path, "[health]\nfirst_probe_s = 1\nmax_probe_s = 2\n")
    bots = start_bots(["greedy", "random", "counter", "greedy"])
    try:
        s = stub(site.address)
        tid = open_ladder(s, "dead")
        for (name, owner), bot in zip([("a", "alice"), ("b", "bob"), ("c", "carol"), ("d", "dave")], bots, strict=True):
            assert submit(s, name, bot.address, owner=owner).HasField("entrant")
        wait_for(
            "every bot to play", lambda: {"a.v1", "b.v1", "c.v1", "d.v1"} <= set().union(*map(names, games(s, tid)))
        )
        port = bots[3].address.rsplit(":", 1)[1]
        bots[3].stop()
        killed_at = max(g.slot for g in games(s, tid))  # slots follow the choices: later ones were chosen after
        wait_for("d.v1 down", lambda: s.GetEntrant(ref_pb.GetEntrantRequest(name="d")).health.status == "down")
        wait_for("the others to play on", lambda: sum(g.slot > killed_at for g in games(s, tid)) > 20)
        late = [g for g in games(s, tid) if g.slot > killed_at]
        with_d = [g for g in late if "d.v1" in names(g)]
        assert len(with_d) <= 3  # only games already under way when it died: no table chosen since seats it
        assert not any(seat.retired for g in late if g not in with_d for seat in g.seats)  # nobody else retired
        again = start_bot("greedy", "--port", port)
        bots[3] = again
        wait_for("d.v1 up", lambda: s.GetEntrant(ref_pb.GetEntrantRequest(name="d")).health.status == "up")
        back_at = max(g.slot for g in games(s, tid))
        wait_for("d.v1 to play again", lambda: any("d.v1" in names(g) for g in games(s, tid) if g.slot > back_at))
        assert tournament(s, tid).state == ref_pb.TOURNAMENT_STATE_RUNNING
    finally:
        site.stop()
        for b in bots:
            b.stop()


def test_a_slow_bot_delays_only_its_own_games(tmp_path: Path) -> None:
    """A legal bot that takes 0.9 s on every second decision (within its 5 s, after a quick validation game):
    while one of its games is played, the others' games go on starting and finishing beside it."""
    site = start_site(tmp_path / "data", tmp_path)
    # five quick bots: while the slow one and its opponent play, four are left to pair in new ways (the ladder seats
    # no table of one ended table's entrants again while games play)
    bots = start_bots(["greedy", "random", "counter", "greedy", "random"])
    bots.append(start_bot("bad:slow", "--delay-ms", "900", "--every", "2", "--after", "80"))
    try:
        s = stub(site.address)
        # 0.9 s is well within its time however busy the machine (the service's 1 s would leave the bot 0.1 s, and
        # a loaded machine's delays could spend its bank and fault it out of the ladder)
        c = config("slow", [], table_size=2, concurrency=2, ladder=ref_pb.LadderConfig(open=True),
                   time_control=ref_pb.TimeControlConfig(decision_ms=5000))  # fmt: skip
        tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        names_ = [("a", "alice"), ("b", "bob"), ("c", "carol"), ("d", "dave"), ("e", "erin"), ("slow", "sam")]
        for (name, owner), bot in zip(names_, bots, strict=True):
            assert submit(s, name, bot.address, owner=owner).HasField("entrant")
        beside, slow_game = 0, None
        for ev in s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=tid), timeout=300):
            which = ev.WhichOneof("event")
            if which == "started" and slow_game is None and "slow.v1" in ev.started.entrants:
                slow_game = ev.started.game_id
            elif which == "finished" and slow_game is not None:
                if ev.finished.game.game_id == slow_game:
                    if beside >= 5:
                        break
                    slow_game, beside = None, 0  # a quick one (its validation decisions still fast): the next
                else:
                    beside += 1
        assert beside >= 5  # games of the others finished while the slow bot's game went on
    finally:
        site.stop()
        for b in bots:
            b.stop()
