"""The server as a process: health and reflection answer; TLS works with a certificate; plaintext is refused on
a non-loopback address; SIGTERM mid-tournament drains, and a restart resumes the tournament to its end."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc

from .helpers import (
    ABLUXX,
    ORGANISER,
    auth,
    config,
    self_signed,
    start_bot,
    start_server,
    stub,
    terminate,
    write_settings,
)

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def test_health_and_reflection_answer(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    try:
        channel = grpc.insecure_channel(srv.address)
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "abluxxen.v1.Referee"):
            assert health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status == SERVING

        reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
        (listed,) = reflect.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
        names = {s.name for s in listed.list_services_response.service}
        assert {"abluxxen.v1.Referee", "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= names
        (described,) = reflect.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(file_containing_symbol="abluxxen.v1.Referee")])
        )
        # a generic client gets the service's descriptor, and with it every method
        from google.protobuf import descriptor_pb2

        files = [descriptor_pb2.FileDescriptorProto.FromString(b)
                 for b in described.file_descriptor_response.file_descriptor_proto]  # fmt: skip
        methods = {m.name for f in files for s in f.service if s.name == "Referee" for m in s.method}
        assert {"SubmitBot", "CreateTournament", "WatchTournament", "WatchGame", "GetGameRecord"} <= methods
    finally:
        srv.stop()


def test_tls_with_a_certificate_and_no_plaintext_off_loopback(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    srv = start_server(tmp_path / "data", write_settings(tmp_path), "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        secure = grpc.secure_channel(srv.address, grpc.ssl_channel_credentials(cert.read_bytes()))
        tls_stub = ref_grpc.RefereeStub(secure)
        assert list(tls_stub.ListEntrants(ref_pb.ListEntrantsRequest(), timeout=10).entrants) == []
        try:
            stub(srv.address).ListEntrants(ref_pb.ListEntrantsRequest(), timeout=5)
            raise AssertionError("a plaintext call to a TLS server succeeded")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        srv.stop()

    out = subprocess.run([*ABLUXX, "serve", "--data", str(tmp_path / "d2"), "--port", "0", "--host", "0.0.0.0"],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode != 0 and "refusing to listen in plaintext on 0.0.0.0" in out.stderr


def test_a_port_in_use_is_refused_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = subprocess.run([*ABLUXX, "serve", "--data", str(tmp_path / "d"), "--port", str(port)],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 2  # a bad address (docs/cli.md)
    assert out.stderr == f"abluxx serve: cannot listen on 127.0.0.1:{port}: the port is in use\n"  # one line


def committed(db: Path) -> int:
    with sqlite3.connect(db, timeout=10) as c:
        return c.execute("SELECT COUNT(*) FROM games").fetchone()[0]


def record_times(data: Path) -> dict[str, int]:
    """Each game record's modification time: a game played again would rewrite its record."""
    return {p.stem: p.stat().st_mtime_ns for p in (data / "records").glob("*.abluxx")}


def test_sigterm_mid_tournament_drains_and_a_restart_finishes_it(tmp_path: Path) -> None:
    data, settings = tmp_path / "data", write_settings(tmp_path, grace_s=60)
    slow = start_bot("bad:slow", "--delay-ms", "40", "--policy", "biggest")  # a game takes a second or more
    # its first decision takes 30 s (the rest are quick): the game in flight at a SIGTERM with no grace is still in
    # flight however long the loaded machine takes to deliver the signal
    held = start_bot("bad:slow", "--delay-ms", "30000", "--bad-count", "1", "--policy", "biggest")
    srv = start_server(data, settings)
    try:
        s = stub(srv.address)
        c = config("drain", [{"name": "slow", "address": slow.address}, {"policy": "greedy"}, {"policy": "random"}],
                   deals=2, concurrency=2)  # fmt: skip
        tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        deadline = time.monotonic() + 120
        while True:
            t = s.GetTournament(ref_pb.GetTournamentRequest(tournament_id=tid))
            if t.finished >= 2 and t.in_flight >= 1:
                break
            assert time.monotonic() < deadline and t.finished < t.games, "the tournament ended before the signal"
            time.sleep(0.05)

        # SIGTERM: health turns NOT_SERVING at once, the games in flight still finish, then the server exits
        health = health_pb2_grpc.HealthStub(grpc.insecure_channel(srv.address))
        health.Check(health_pb2.HealthCheckRequest(), timeout=10)  # connected before the signal
        srv.proc.send_signal(15)
        seen = []
        while not seen or seen[-1] == SERVING:  # until the signal is handled
            seen.append(health.Check(health_pb2.HealthCheckRequest(service="abluxxen.v1.Referee"), timeout=10).status)
        assert seen[-1] == NOT_SERVING
        assert srv.proc.wait(90) == 0
        stopped_at = committed(data / "abluxx.db")
        assert t.finished + t.in_flight <= stopped_at < t.games  # in-flight games were let finish; no new ones
        stored_before = record_times(data)

        # restart: the tournament resumes by itself and ends with every game played once
        srv = start_server(data, settings)
        s = stub(srv.address)
        events = list(s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=tid), timeout=300))
        assert events[-1].tournament.state == ref_pb.TOURNAMENT_STATE_FINISHED
        # only the games not yet stored were played: the stored ones kept their records untouched (counting the
        # watch's start events would race with the resume, which begins before the watcher subscribes)
        after = record_times(data)
        assert len(stored_before) == stopped_at and all(after[g] == t_ns for g, t_ns in stored_before.items())
        assert len(after) == t.games
        standings = s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid))
        assert standings.games == standings.scheduled == t.games == committed(data / "abluxx.db")

        # with no grace, a game in flight is abandoned and played again from its deal at the next start
        assert terminate(srv) == 0
        short = write_settings(tmp_path, grace_s=0)
        srv = start_server(data, short)
        s = stub(srv.address)
        c2 = config("abandon", [{"name": "held", "address": held.address}, {"policy": "greedy"}], concurrency=1,
                    time_control=ref_pb.TimeControlConfig(decision_ms=60_000))  # fmt: skip
        tid2 = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c2), metadata=auth(ORGANISER)).tournament_id
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid2), metadata=auth(ORGANISER))
        while s.GetTournament(ref_pb.GetTournamentRequest(tournament_id=tid2)).in_flight == 0:
            time.sleep(0.02)
        assert terminate(srv) == 0
        assert committed(data / "abluxx.db") == t.games  # the abandoned game was not stored
        srv = start_server(data, short)
        s = stub(srv.address)
        events = list(s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=tid2), timeout=300))
        assert events[-1].tournament.state == ref_pb.TOURNAMENT_STATE_FINISHED
        assert s.GetStandings(ref_pb.GetStandingsRequest(tournament_id=tid2)).games == 2
    finally:
        slow.stop()
        held.stop()
        srv.stop()
