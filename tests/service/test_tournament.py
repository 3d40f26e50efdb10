"""Tournaments through the API over real gRPC, with real bot processes: created, started and watched to the end;
results, filters and records; a spectator who never sees a hidden card; the CLI session of docs/service.md."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import threading
from pathlib import Path

import grpc
import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records import verify_record
from referee.tournament.standings import Standing

from .helpers import (
    ABLUXX,
    ALICE,
    BOB,
    ORGANISER,
    auth,
    code_of,
    config,
    start_bot,
    start_bots,
    start_server,
    stub,
    submit,
    write_settings,
)

FINISHED = ref_pb.TOURNAMENT_STATE_FINISHED


def pile_draws(events) -> list:
    return [e.drew for e in events if e.WhichOneof("event") == "drew" and not e.drew.from_market]


def test_a_tournament_created_started_and_watched_to_the_end(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    bots = start_bots(["greedy", "counter"])
    # answers an illegal action on every 10th decision: its games carry faults (it is never submitted)
    flaky = start_bot("bad:illegal", "--every", "10", "--policy", "biggest")
    try:
        s = stub(srv.address)
        assert submit(s, "greedy", bots[0].address, ALICE).HasField("entrant")
        assert submit(s, "counter", bots[1].address, BOB).HasField("entrant")
        c = config("api", [{"bot": "greedy"}, {"bot": "counter"}, {"name": "rnd", "policy": "random"},
                           {"name": "flaky", "address": flaky.address}], concurrency=3, deals=2)  # fmt: skip
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
        tid = t.tournament_id
        assert (t.state, t.games, list(t.entrants)) == (ref_pb.TOURNAMENT_STATE_CREATED, 12,
                                                         ["greedy", "counter", "rnd", "flaky"])  # fmt: skip

        stream = s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=tid), timeout=300)
        first = next(stream)  # the watcher is subscribed once the first event is here
        assert first.tournament.state == ref_pb.TOURNAMENT_STATE_CREATED
        started = s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        assert started.state == ref_pb.TOURNAMENT_STATE_RUNNING
        events = list(stream)

        kinds = [e.WhichOneof("event") for e in events]
        began = [e.started.game_id for e in events if e.started.game_id]
        ended = [e.finished.game.game_id for e in events if e.finished.game.game_id]
        assert len(began) == len(set(began)) == 12 and sorted(began) == sorted(ended)
        standings = [e.standings for e, kind in zip(events, kinds, strict=True) if kind == "standings"]
        counts = [x.games for x in standings]  # standings as games end (a lagging watcher gets only the newest)
        assert counts == sorted(set(counts)) and counts[-1] == 12
        assert events[-1].tournament.state == FINISHED and events[-1].tournament.finished == 12

        final = s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid))
        assert final == standings[-1] and {r.entrant for r in final.rows} == {"greedy", "counter", "rnd", "flaky"}
        flaky_row = next(r for r in final.rows if r.entrant == "flaky")
        assert flaky_row.faults["invalid"] > 0

        games = s.ListGames(ref_pb.ListGamesRequest(tournament_id=tid))
        assert games.total == 12
        assert s.ListGames(ref_pb.ListGamesRequest(tournament_id=tid, entrant="greedy")).total == 6
        faulted = s.ListGames(ref_pb.ListGamesRequest(tournament_id=tid, fault="invalid")).games
        assert faulted and all("flaky" in [x.entrant for x in g.seats] for g in faulted)
        assert {g.game_id for g in faulted} == {
            g.game_id for g in s.ListGames(ref_pb.ListGamesRequest(fault="any")).games
        }
        assert code_of(s.ListGames, ref_pb.ListGamesRequest(fault="bogus")) == grpc.StatusCode.INVALID_ARGUMENT

        record = s.GetGameRecord(ref_pb.GetGameRecordRequest(game_id=games.games[0].game_id))
        assert record.complete
        verify_record(record)  # the record served over the API re-runs exactly

        # A finished game replayed to a spectator: public events only, the record's own events otherwise.
        watched = list(s.WatchGame(ref_pb.WatchGameRequest(game_id=record.header.game_id)))
        assert watched[0].opening.game_id == record.header.game_id and watched[-1].closing.scores == (
            record.footer.scores
        )
        decisions = [w.decision for w in watched[1:-1]]
        assert [d.seq for d in decisions] == [d.seq for d in record.decisions]
        assert all(d.card == 0 for x in decisions for d in pile_draws(x.events))

        # A new version of greedy starts with a fresh rating; the old version keeps its games.
        before = s.GetEntrant(ref_pb.GetEntrantRequest(name="greedy"))
        assert before.games == 6 and before.sigma < 8
        again = submit(s, "greedy", bots[0].address, ALICE, force=True).entrant  # unchanged: forced
        assert (again.version, again.games, round(again.mu, 6), round(again.sigma, 4)) == (2, 0, 25.0, 8.3333)
        old = s.GetEntrant(ref_pb.GetEntrantRequest(name="greedy", version=1))
        assert old.games == 6 and old.state == ref_pb.ENTRANT_STATE_SUPERSEDED
        assert s.ListGames(ref_pb.ListGamesRequest(tournament_id=tid, entrant="greedy")).total == 6
    finally:
        for p in [*bots, flaky, srv]:
            p.stop()


@pytest.mark.parametrize("workers", [(), ("--workers", "2")], ids=["inline", "2-worker-processes"])
def test_a_spectator_of_a_live_game_never_sees_a_hidden_card(tmp_path: Path, workers: tuple[str, ...]) -> None:
    # on worker processes (docs/scale.md) each decision reaches the spectator from the worker as it is made
    srv = start_server(tmp_path / "data", write_settings(tmp_path, delay_ms=150), *workers)
    # A game lasts several seconds: the test reads the first game's record and starts watching the last one while
    # that one plays, even if a loaded machine holds the test up for a few seconds in between (at 30 ms a decision a
    # game lasted a second or two). The bot draws from the pile whenever it may, so the game has hidden draws
    # whatever the (secret) deal.
    slow = start_bot("bad:slow", "--delay-ms", "100", "--policy", "biggest", "--draw", "pile")
    try:
        s = stub(srv.address)
        c = config(
            "live",
            [{"name": "slow", "address": slow.address}, {"policy": "random"}],
            concurrency=1,
            options=ref_pb.OptionsConfig(draw_one=True),
        )  # draw one card most turns: the pile is drawn from
        tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
        stream = s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=tid), timeout=300)
        next(stream)
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        started = (e.started.game_id for e in stream if e.WhichOneof("event") == "started")
        first = next(started)
        # the deal's other game is still to be played: its market refills would show that game's pile
        assert code_of(s.WatchGame(ref_pb.WatchGameRequest(game_id=first)).__next__) == (
            grpc.StatusCode.FAILED_PRECONDITION
        )
        game_id = next(started)  # the deal's last game (concurrency 1: the first is over)
        # the first game's record is served without its deal while the last one plays; the organiser's is whole
        early = ref_pb.GetGameRecordRequest(game_id=first)
        withheld, whole = s.GetGameRecord(early), s.GetGameRecord(early, metadata=auth(ORGANISER))
        assert withheld.deal_withheld and not withheld.header.deck and not withheld.decisions
        assert withheld.header.commitment == whole.header.commitment and len(whole.header.deck) == 109

        seen: list = []
        watcher = threading.Thread(target=lambda: seen.extend(s.WatchGame(ref_pb.WatchGameRequest(game_id=game_id),
                                                                          timeout=120)))  # fmt: skip
        watcher.start()
        watcher.join(120)
        assert not watcher.is_alive()
        assert list(stream)[-1].tournament.state == ref_pb.TOURNAMENT_STATE_FINISHED
        # every game of the deal is over: anyone may read both records whole
        request = ref_pb.GetGameRecordRequest(game_id=game_id)
        record = s.GetGameRecord(request, metadata=auth(ORGANISER))
        for r in (record, whole):
            for player in r.header.players:  # the bots' addresses stay the organiser's (docs/security.md)
                player.address = ""
        assert s.GetGameRecord(request) == record and s.GetGameRecord(early) == whole

        assert seen[0].opening.delay_ms == 150 and seen[-1].WhichOneof("event") == "closing"
        decisions = [x.decision for x in seen[1:-1]]
        assert [d.seq for d in decisions] == [d.seq for d in record.decisions]  # every decision, in order
        # the record knows the cards drawn from the pile; the spectator never does
        hidden = [d for r in record.decisions for d in pile_draws(r.events)]
        assert hidden and all(d.card != 0 for d in hidden)
        shown = [d for x in decisions for d in pile_draws(x.events)]
        assert len(shown) == len(hidden) and all(d.card == 0 for d in shown)
        # everything else is the record's own events
        for mine, theirs in zip(decisions, record.decisions, strict=True):
            for a, b in zip(mine.events, theirs.events, strict=True):
                if not (a.WhichOneof("event") == "drew" and not a.drew.from_market):
                    assert a == b
        # no message carries a hand: the opening shows hand sizes only
        assert list(seen[0].opening.hand_sizes) == [13, 13]
    finally:
        slow.stop()
        srv.stop()


def cli(*args: str, env: dict[str, str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*ABLUXX, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def test_the_cli_session_of_the_docs(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    bots = start_bots(["greedy", "counter"])
    try:
        base = {k: v for k, v in os.environ.items() if not k.startswith("ABLUXX_")}
        env = {**base, "ABLUXX_SERVER": srv.address, "ABLUXX_TOKEN": ALICE}
        out = cli("submit", "my-greedy", bots[0].address, env=env, cwd=tmp_path)
        assert out.returncode == 0 and "accepted: my-greedy.v1" in out.stdout, out.stderr
        refused = cli("submit", "ghost", "127.0.0.1:1", env=env, cwd=tmp_path)
        assert refused.returncode == 1 and "refused (hello check)" in refused.stdout
        out = cli("submit", "my-counter", bots[1].address, "--token", BOB, env=env, cwd=tmp_path)
        assert out.returncode == 0, out.stderr

        (tmp_path / "cup.toml").write_text(
            'name = "cup"\ndeals = 4\n[[entrants]]\nbot = "my-greedy"\n[[entrants]]\nbot = "my-counter"\n'
            '[[entrants]]\nname = "house"\npolicy = "random"\n'
        )
        denied = cli("remote", "tournament", "create", "cup.toml", env=env, cwd=tmp_path)
        assert denied.returncode == 1 and "PERMISSION_DENIED" in denied.stderr
        organiser = {**env, "ABLUXX_TOKEN": ORGANISER}
        out = cli("remote", "tournament", "create", "cup.toml", "--start", env=organiser, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        tid = out.stdout.split()[1].rstrip(":")
        assert tid.startswith("cup-") and "12 games" in out.stdout
        # the server checks the file's values, with the checks of a local file: a wrong one exits 2 (docs/cli.md)
        (tmp_path / "big.toml").write_text('table_size = 9\n[[entrants]]\nbot = "my-greedy"\n[[entrants]]\n'
                                           'policy = "random"\n')  # fmt: skip
        out = cli("remote", "tournament", "create", "big.toml", env=organiser, cwd=tmp_path)
        assert out.returncode == 2 and "config.table_size: 9 is out of range (2 to 5)" in out.stderr, out.stderr

        out = cli("remote", "tournament", "watch", tid, env=env, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert "finished, 12/12 games" in out.stdout and f"tournament {tid}: 12/12 games" in out.stdout
        out = cli("remote", "standings", tid, env=env, cwd=tmp_path)
        assert out.returncode == 0 and all(n in out.stdout for n in ("my-greedy", "my-counter", "house"))
        out = cli("remote", "games", tid, "--entrant", "house", env=env, cwd=tmp_path)
        assert out.returncode == 0 and out.stdout.strip().endswith("8 games")

        # find it: the list, the latest by default, and the name where an id goes
        out = cli("remote", "tournaments", env=env, cwd=tmp_path)
        assert out.returncode == 0 and tid in out.stdout and "finished" in out.stdout, out.stderr
        assert cli("remote", "standings", env=env, cwd=tmp_path).stdout.startswith(f"tournament {tid}:")
        out = cli("remote", "games", "cup", "--entrant", "house", env=env, cwd=tmp_path)
        assert out.returncode == 0 and out.stdout.strip().endswith("8 games"), out.stderr
        out = cli("remote", "standings", "no-such-cup", env=env, cwd=tmp_path)
        assert out.returncode == 1 and "no tournament 'no-such-cup'" in out.stderr

        # one snake_case schema, local and remote (docs/cli.md)
        remote = json.loads(cli("remote", "standings", "cup", "--json", env=env, cwd=tmp_path).stdout)
        assert remote["tournament_id"] == tid and remote["games"] == remote["scheduled"] == 12
        assert {n for n in remote["standings"][0]} == {f.name for f in dataclasses.fields(Standing)}
        csv_head = cli("remote", "standings", "--csv", env=env, cwd=tmp_path).stdout.splitlines()[0]
        assert csv_head.startswith("rank,entrant,mu,sigma,mu_minus_3sigma")
        game = json.loads(cli("remote", "games", "cup", "--json", env=env, cwd=tmp_path).stdout.splitlines()[0])
        # one order for games everywhere, the site's: the latest first, the schedule's order on request
        slots = {flag: [json.loads(x)["slot"] for x in cli("remote", "games", "cup", "--json", *flag, env=env,
                                                            cwd=tmp_path).stdout.splitlines()]
                 for flag in ((), ("--oldest-first",))}  # fmt: skip
        assert slots[()] == sorted(slots[()], reverse=True) and len(slots[()]) == 12
        assert slots[("--oldest-first",)] == slots[()][::-1]
        local = tmp_path / "local.toml"
        local.write_text('name = "here"\n[[entrants]]\nname = "a"\npolicy = "random"\n[[entrants]]\nname = "b"\n'
                         'policy = "greedy"\n')  # fmt: skip
        assert cli("tournament", "run", "local.toml", "--data", "here", env=env, cwd=tmp_path).returncode == 0
        here = json.loads(cli("games", "--json", "--data", "here", env=env, cwd=tmp_path).stdout.splitlines()[0])
        assert set(game) == set(here) and set(game["seats"][0]) == set(here["seats"][0])
        entrant = json.loads(cli("remote", "entrants", "--json", env=env, cwd=tmp_path).stdout.splitlines()[0])
        assert "entrant_id" in entrant and "entrantId" not in entrant

        # open a game: fetch its record and replay it here, and watch it as a spectator
        game_id = cli("remote", "games", tid, env=env, cwd=tmp_path).stdout.split()[0]
        out = cli("remote", "record", game_id, "-o", "g.abluxx", env=env, cwd=tmp_path)
        assert out.returncode == 0 and out.stdout.strip() == "g.abluxx", out.stderr
        assert cli("verify", "g.abluxx", env=env, cwd=tmp_path).stdout.startswith("ok")
        assert cli("replay", "g.abluxx", env=env, cwd=tmp_path).returncode == 0
        out = cli("remote", "watch-game", game_id, env=env, cwd=tmp_path)
        assert out.returncode == 0 and out.stdout.startswith(f"game {game_id} in tournament {tid}"), out.stderr
        assert "turn 1:" in out.stdout and "result:" in out.stdout and "place 1:" in out.stdout
        assert "a card from the pile" in out.stdout or "from the pile" not in out.stdout
        assert not re.search(r"draws (\d+|X) from the pile", out.stdout), "a spectator saw a pile card"

        # and retire a bot of one's own
        out = cli("remote", "retire", "my-greedy", env=env, cwd=tmp_path)
        assert out.returncode == 0 and out.stdout.strip() == "my-greedy.v1: retired", out.stderr
    finally:
        for p in [*bots, srv]:
            p.stop()


@pytest.mark.parametrize("bad", ['[[entrants]]\nname = "x"\ncommand = "python bot.py"\n', "table_size = true\n"])
def test_the_cli_names_a_bad_config_line_before_calling(tmp_path: Path, bad: str) -> None:
    (tmp_path / "bad.toml").write_text(bad)
    env = {**os.environ, "ABLUXX_SERVER": "127.0.0.1:1", "ABLUXX_TOKEN": ORGANISER}
    out = cli("remote", "tournament", "create", "bad.toml", env=env, cwd=tmp_path)
    assert out.returncode == 2 and "bad.toml:" in out.stderr


def test_the_cli_names_a_missing_tls_ca_file_before_calling(tmp_path: Path) -> None:
    env = {**os.environ, "ABLUXX_SERVER": "127.0.0.1:1"}
    out = cli("remote", "entrants", "--tls-ca", "no-such-ca.pem", env=env, cwd=tmp_path)
    assert out.returncode == 2 and "no-such-ca.pem: cannot read the file" in out.stderr
    assert "Traceback" not in out.stderr
