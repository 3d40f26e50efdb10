"""``abluxx serve --metrics-port``: /metrics in Prometheus' text format, scraped during a real ladder (real gRPC, real
bot processes, a live site stream) and parsed with prometheus_client's own parser."""

from __future__ import annotations

import http.client
import socket
import threading
import urllib.request
from pathlib import Path

import grpc
from prometheus_client.parser import text_string_to_metric_families

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

from .helpers import (
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
    terminate,
    wait_for,
    write_settings,
)

REFEREE = "/abluxxen.v1.Referee/"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics, by name and labels, as prometheus_client's parser reads it."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}  # fmt: skip


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def total(samples: dict, name: str) -> float:
    return sum(v for (n, _), v in samples.items() if n == name)


def hold_stream(port: int, tid: str, opened: threading.Event, done: threading.Event) -> None:
    """A browser's live-update stream of the leaderboard, held open until ``done``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", f"/t/{tid}/events")
    response = conn.getresponse()
    assert response.status == 200
    response.readline()  # the first event: the stream is admitted
    opened.set()
    done.wait(120)
    conn.close()


def test_metrics_during_a_ladder(tmp_path: Path) -> None:
    metrics, site = free_port(), free_port()
    srv = start_server(tmp_path / "data", write_settings(tmp_path, grace_s=60), "--metrics-port", str(metrics),
                       "--http-port", str(site))  # fmt: skip
    bots = start_bots(["greedy", "random"])
    flaky = start_bot("bad:illegal", "--every", "10", "--policy", "biggest")  # its games carry faults
    done = threading.Event()
    try:
        s = stub(srv.address)
        assert code_of(s.GetTournament, ref_pb.GetTournamentRequest(tournament_id="nope"),
                       metadata=auth(ORGANISER)) == grpc.StatusCode.NOT_FOUND  # fmt: skip
        c = config("lad", [{"name": "house", "policy": "greedy"}, {"name": "flaky", "address": flaky.address}],
                   table_size=3, concurrency=2, ladder=ref_pb.LadderConfig(open=True, games=400))  # fmt: skip
        tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
        assert submit(s, "ag", bots[0].address, BOB).HasField("entrant")
        assert submit(s, "ar", bots[1].address, ALICE).HasField("entrant")
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        opened = threading.Event()
        threading.Thread(target=hold_stream, args=(site, tid, opened, done), daemon=True).start()
        assert opened.wait(60)
        wait_for("games in the metrics", lambda: total(scrape(metrics), "abluxx_games_finished_total") >= 6)
        s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid), metadata=auth(ORGANISER))
        now = scrape(metrics)
        state = s.GetTournament(ref_pb.GetTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        assert state.state == ref_pb.TOURNAMENT_STATE_RUNNING  # scraped during the ladder
        finished = total(now, "abluxx_games_finished_total")
        assert 6 <= finished <= state.finished
        assert total(now, "abluxx_decisions_total") >= 20 * finished  # a game takes dozens of decisions
        assert value(now, "abluxx_decision_seconds_count", transport="stream") > 0  # the bot processes
        assert value(now, "abluxx_decision_seconds_count", transport="builtin") > 0  # the house policy
        assert value(now, "abluxx_faults_total", kind="invalid") > 0  # the flaky bot's illegal answers
        assert value(now, "abluxx_games_in_flight") in (0, 1, 2)  # concurrency 2
        assert value(now, "abluxx_site_streams_open") == 1
        assert value(now, "abluxx_grpc_calls_total", method=REFEREE + "SubmitBot", code="OK") == 2
        assert value(now, "abluxx_grpc_calls_total", method=REFEREE + "GetTournament", code="NOT_FOUND") == 1
        assert value(now, "abluxx_grpc_calls_total", method=REFEREE + "StartTournament", code="OK") == 1
        assert value(now, "abluxx_rating_fit_seconds_count") > 0
        # the four entrants the ladder seats (house, flaky, ag.v1, ar.v1), by health: none was absent
        assert value(now, "abluxx_entrants", status="up") == 4 and value(now, "abluxx_entrants", status="down") == 0
        done.set()
        wait_for("the stream to close", lambda: value(scrape(metrics), "abluxx_site_streams_open") == 0, 60)
    finally:
        done.set()
        terminate(srv)
        for b in (*bots, flaky):
            b.stop()
