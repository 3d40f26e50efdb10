"""Bots that dial in (BotGateway), as real processes that listen on nothing, against a real server: one joins an
open ladder and plays, several games at once; one drops mid-game (the fault policy plays its seat, it is down) and
comes back (up, the same version); a wrong token, a SubmitBot of a dial-in address and the connection cap are
refused; hostile clients (garbage, no DialIn, a flood on Connect, a game never read, a game flooded) cost only
themselves; a half-open connection is found by keepalive; SIGTERM of the referee with dial-in bots connected stops it
cleanly, and they come back by themselves; with worker processes their games play in the service; the Node bot
dials in too."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest

from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import gateway_pb2 as gw_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from tests.builds import node_packages

from .helpers import (
    ABLUXX,
    ALICE,
    BOB,
    CAROL,
    ORGANISER,
    Proc,
    auth,
    config,
    error_of,
    self_signed,
    start_server,
    stub,
    submit,
    wait_for,
    write_settings,
)

DIALIN_BOT = Path(__file__).resolve().parents[1] / "fixtures" / "dialin_bot.py"
FAULT_DISCONNECTED, FAULT_TIMEOUT, FAULT_INVALID, FAULT_MALFORMED = "disconnected", "timeout", "invalid", "malformed"


class Bot:
    """A dial-in bot process (tests/fixtures/dialin_bot.py, or ``abluxx bot``), its output read as it comes."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def said(self, text: str) -> list[str]:
        return [line for line in self.lines if text in line]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def fixture_bot(server: str, name: str, token: str = ALICE, mode: str = "good", at_once: int = 1) -> Bot:
    return Bot([sys.executable, str(DIALIN_BOT), server, token, name, "--mode", mode, "--games-at-once", str(at_once)])


def open_ladder(srv: Proc, table_size: int = 2, concurrency: int = 4) -> str:
    s = stub(srv.address)
    c = config("open", [{"name": "house-greedy", "policy": "greedy"}, {"name": "house-random", "policy": "random"}],
               table_size=table_size, concurrency=concurrency, ladder=ref_pb.LadderConfig(open=True))  # fmt: skip
    tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
    s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
    return tid


def games_of(srv: Proc, tid: str, entrant: str) -> list[ref_pb.GameSummary]:
    page = stub(srv.address).ListGames(ref_pb.ListGamesRequest(tournament_id=tid, page_size=1000),
                                       metadata=auth(ORGANISER))  # fmt: skip
    return [g for g in page.games if entrant in {s.entrant for s in g.seats}]


def seat(g: ref_pb.GameSummary, entrant: str) -> ref_pb.SeatResult:
    return next(s for s in g.seats if s.entrant == entrant)


def health(srv: Proc, name: str) -> str:
    return stub(srv.address).GetEntrant(ref_pb.GetEntrantRequest(name=name), metadata=auth(ALICE)).health.status


def faults(g: ref_pb.GameSummary, entrant: str) -> dict[str, int]:
    return dict(seat(g, entrant).faults)


def test_a_bot_that_listens_on_nothing_joins_an_open_ladder_and_plays_games_at_once(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    bots: list[Bot] = []
    try:
        tid = open_ladder(srv)
        # the example bot through the CLI, as an author would run it
        bots.append(Bot([*ABLUXX, "bot", "greedy", "--connect", srv.address, "--token", ALICE, "--as", "dg"]))
        wait_for("dg to be entered", lambda: bots[0].said("dialled in as dg.v1 (a new version; validation game"), 90)
        played = wait_for("dg to play in the ladder", lambda: games_of(srv, tid, "dg.v1"), 120)
        assert not faults(played[0], "dg.v1") and not seat(played[0], "dg.v1").retired
        entrant = stub(srv.address).GetEntrant(ref_pb.GetEntrantRequest(name="dg"), metadata=auth(ALICE))
        assert entrant.owner == "alice" and entrant.health.status == "up"
        # one that takes 3 games at once is given several at once, each on a call of its own
        bots.append(fixture_bot(srv.address, "many", at_once=3))
        wait_for("games at once", lambda: bots[1].said("open 2") or bots[1].said("open 3"), 180)
        many = wait_for("'many' to finish games", lambda: len(games_of(srv, tid, "many.v1")) >= 3 and
                        games_of(srv, tid, "many.v1"), 180)  # fmt: skip
        assert not any(faults(g, "many.v1") for g in many)
    finally:
        for b in bots:
            b.stop()
        srv.stop()


def test_a_bot_that_drops_mid_game_is_down_and_comes_back_up_as_the_same_version(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    bots: list[Bot] = []
    try:
        tid = open_ladder(srv)
        bots.append(fixture_bot(srv.address, "dg", mode="die"))
        bots[0].proc.wait(180)  # it exits at the 5th decision of its first ladder game
        assert bots[0].proc.returncode == 3
        lost = wait_for("the game it left to finish", lambda: games_of(srv, tid, "dg.v1"), 120)[0]
        assert seat(lost, "dg.v1").retired and faults(lost, "dg.v1").get(FAULT_DISCONNECTED) == 1
        assert lost.decisions > 10  # the fallback played its seat to the end
        assert wait_for("dg to be down", lambda: health(srv, "dg") == "down", 30)
        bots.append(fixture_bot(srv.address, "dg"))  # the same bot, the same Hello: the same version, up again
        wait_for("dg back", lambda: bots[1].said("dialled in as dg.v1"), 90)
        assert not bots[1].said("a new version")
        assert wait_for("dg up", lambda: health(srv, "dg") == "up", 30)
        again = wait_for("dg to play again", lambda: [g for g in games_of(srv, tid, "dg.v1") if not faults(g, "dg.v1")])
        assert again and not seat(again[0], "dg.v1").retired
    finally:
        for b in bots:
            b.stop()
        srv.stop()


def _connect(address: str, token: str | None, messages: list[bytes], hold: bool = False) -> grpc.RpcError:
    """A raw Connect that sends ``messages`` (bytes), keeps its side open with ``hold``, and reads to its end: the
    status it ends with."""
    done = threading.Event()

    def requests():
        yield from messages
        if hold:
            done.wait(60)

    channel = grpc.insecure_channel(address)
    call = channel.stream_stream("/abluxxen.v1.BotGateway/Connect")(requests(), metadata=auth(token), timeout=60)
    try:
        for _ in call:
            pass
    except grpc.RpcError as e:
        return e
    finally:
        done.set()
        channel.close()
    pytest.fail("Connect ended without an error")


def dial_in(name: str) -> bytes:
    hello = bot_pb.HelloReply(name="x", version="1", author="a", protocol_version=bot_pb.PROTOCOL_VERSION_1)
    return gw_pb.DialIn(name=name, hello=hello).SerializeToString()


def test_tokens_caps_and_hostile_clients_are_refused_and_cost_only_themselves(tmp_path: Path) -> None:
    settings = write_settings(tmp_path)
    # 10 s for a DialIn (the default): the clients that do send one, this test's raw ones among them, are told
    # apart from the silent one by what they send, which a loaded machine may hold up for seconds
    limits = "[service]\nmax_dialins_per_author = 1\ndialin_hello_s = 10\n"
    settings.write_text(settings.read_text().replace("[service]\n", limits))
    srv = start_server(tmp_path / "data", settings)
    bots: list[Bot] = []
    try:
        tid = open_ladder(srv)
        # a wrong token: the kit stops at once and says why
        wrong = subprocess.run([*ABLUXX, "bot", "greedy", "--connect", srv.address, "--token", "not-a-token"],
                               capture_output=True, text=True, timeout=60)  # fmt: skip
        assert wrong.returncode == 1 and "UNAUTHENTICATED" in wrong.stderr, wrong.stderr
        env = {k: v for k, v in os.environ.items() if k != "ABLUXX_TOKEN"}
        tokenless = subprocess.run([*ABLUXX, "bot", "greedy", "--connect", srv.address], capture_output=True,
                                   text=True, timeout=60, env=env)  # fmt: skip
        assert tokenless.returncode == 2 and "--token" in tokenless.stderr, tokenless.stderr
        # SubmitBot cannot name a dial-in address; garbage, no DialIn, a flood on Connect
        e = error_of(submit, stub(srv.address), "x", "dialin:x", ALICE)
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "BotGateway.Connect" in e.details()
        e = _connect(srv.address, BOB, [b"\xff\xfe not a DialIn"])
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "undecodable DialIn" in e.details(), e.details()
        e = _connect(srv.address, BOB, [])
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "closed Connect before its DialIn" in e.details()
        t0 = time.monotonic()
        e = _connect(srv.address, BOB, [], hold=True)  # connects and says nothing: the Hello deadline
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION and "no DialIn within 10 s" in e.details(), e.details()
        e = _connect(srv.address, BOB, [dial_in("flood")] + [b"x"] * 20)
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "more than 8 messages" in e.details(), e.details()
        assert time.monotonic() - t0 < 50
        # the cap: alice's second bot dialled in at once is refused, and retries
        bots.append(fixture_bot(srv.address, "good"))
        wait_for("good in", lambda: bots[0].said("dialled in as good.v1"), 90)
        e = _connect(srv.address, BOB, [dial_in("good")], hold=True)  # alice's name: not another author's
        assert e.code() == grpc.StatusCode.PERMISSION_DENIED and "belongs to 'alice'" in e.details(), e.details()
        e = _connect(srv.address, ORGANISER, [dial_in("house")], hold=True)  # author tokens only
        assert e.code() == grpc.StatusCode.PERMISSION_DENIED and "an organiser's token" in e.details(), e.details()
        assert bots[0].proc.poll() is None and not bots[0].said("ended")  # alice's connection is untouched
        bots.append(fixture_bot(srv.address, "second"))
        wait_for("the cap", lambda: bots[1].said("ended RESOURCE_EXHAUSTED"), 60)
        assert "1 dial-in connections open already" in bots[1].said("RESOURCE_EXHAUSTED")[0]
        bots[1].stop()
        # hostile games (bob's and carol's, one bot each at most): one never read, one flooded with garbage; each
        # costs its own seat only
        bots.append(fixture_bot(srv.address, "deaf", CAROL, mode="never-read"))
        bots.append(fixture_bot(srv.address, "loud", BOB, mode="flood"))
        deaf = wait_for("deaf's game", lambda: games_of(srv, tid, "deaf.v1"), 180)[0]
        assert seat(deaf, "deaf.v1").retired and faults(deaf, "deaf.v1").get(FAULT_TIMEOUT, 0) >= 1
        loud = wait_for("loud's game", lambda: games_of(srv, tid, "loud.v1"), 180)[0]
        assert seat(loud, "loud.v1").retired and {FAULT_MALFORMED, FAULT_INVALID} & set(faults(loud, "loud.v1"))
        n = len(games_of(srv, tid, "good.v1"))
        wait_for("good to play on", lambda: len(games_of(srv, tid, "good.v1")) > n + 1, 180)
        assert not any(faults(g, "good.v1") for g in games_of(srv, tid, "good.v1"))
    finally:
        for b in bots:
            b.stop()
        srv.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sigterm_with_dial_in_bots_connected_stops_cleanly_and_they_come_back(tmp_path: Path) -> None:
    port = _free_port()
    settings = write_settings(tmp_path, grace_s=20)
    srv = start_server(tmp_path / "data", settings, "--port", str(port))
    bots: list[Bot] = []
    try:
        tid = open_ladder(srv)
        # one through the kit (abluxx_bot.connect, which connects again by itself), one the test's fixture
        kit = Bot([*ABLUXX, "bot", "greedy", "--connect", srv.address, "--token", ALICE, "--as", "one"])
        bots = [kit, fixture_bot(srv.address, "two", BOB)]
        wait_for("both to play", lambda: games_of(srv, tid, "one.v1") and games_of(srv, tid, "two.v1"), 180)
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(60) == 0
        assert all(b.proc.poll() is None for b in bots)  # the bots wait for the referee to come back
        wait_for("the bots to see it go", lambda: all(b.said("ended ") for b in bots), 30)
        srv = start_server(tmp_path / "data", settings, "--port", str(port))
        for b, name in zip(bots, ("one", "two"), strict=True):
            wait_for(f"{name} back", lambda b=b, name=name: len(b.said(f"dialled in as {name}.v1")) >= 2, 90)
        n = len(games_of(srv, tid, "one.v1"))
        wait_for("one to play after the restart", lambda: len(games_of(srv, tid, "one.v1")) > n, 180)
        assert health(srv, "one") == "up"
    finally:
        for b in bots:
            b.stop()
        srv.stop()


def test_with_worker_processes_a_dial_in_bot_plays_in_the_service_process(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path), "--workers", "1")
    bot = fixture_bot(srv.address, "dg")
    try:
        tid = open_ladder(srv)
        played = wait_for("dg to play", lambda: games_of(srv, tid, "dg.v1"), 180)
        assert not faults(played[0], "dg.v1") and health(srv, "dg") == "up"
        wait_for("house games on the worker too", lambda: len(games_of(srv, tid, "house-greedy")) > len(played), 120)
    finally:
        bot.stop()
        srv.stop()


def test_the_node_bot_dials_in_and_plays(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    node_dir = Path(__file__).resolve().parents[2] / "clients" / "node"
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("needs node and npm")
    node_packages(tmp_path_factory, npm)
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    bot = Bot([node, str(node_dir / "bot.js"), "--connect", srv.address, "--token", ALICE, "--as", "nd"])
    try:
        tid = open_ladder(srv)
        wait_for("the Node bot to be entered", lambda: bot.said("dialled in as nd.v1"), 90)
        played = wait_for("the Node bot to play", lambda: games_of(srv, tid, "nd.v1"), 120)
        assert not faults(played[0], "nd.v1") and not seat(played[0], "nd.v1").retired
    finally:
        bot.stop()
        srv.stop()


def test_a_half_open_connection_is_found_by_keepalive_and_the_bot_is_down_until_it_answers_again(
    tmp_path: Path,
) -> None:
    """SIGSTOP: the bot's socket stays open (its kernel still acknowledges) but nothing answers the referee's
    keepalive pings, as with a machine gone without a word. The referee closes the connection (here a ping every
    3 s, 2 s for its answer: the defaults' 30 and 10 s cost the suite 40 s) and the bot is down; SIGCONT, and it
    connects again and is up."""
    settings = write_settings(tmp_path)
    keepalive = "[service]\nkeepalive_s = 3\nkeepalive_timeout_s = 2\n"
    settings.write_text(settings.read_text().replace("[service]\n", keepalive))
    srv = start_server(tmp_path / "data", settings)
    bot = fixture_bot(srv.address, "dg")
    try:
        tid = open_ladder(srv)
        wait_for("dg to play", lambda: games_of(srv, tid, "dg.v1"), 180)
        bot.proc.send_signal(signal.SIGSTOP)
        # found in 3 + 2 s; gRPC's own ping timeout (60 s) would take longer than the 40 s allowed here
        assert wait_for("dg to be down", lambda: health(srv, "dg") == "down", 40)
        entrant = stub(srv.address).GetEntrant(ref_pb.GetEntrantRequest(name="dg"), metadata=auth(ALICE))
        assert entrant.health.reason == "its dial-in connection closed"
        bot.proc.send_signal(signal.SIGCONT)
        assert wait_for("dg to be up again", lambda: health(srv, "dg") == "up", 120)
    finally:
        bot.proc.send_signal(signal.SIGCONT)
        bot.stop()
        srv.stop()


def test_bots_dial_in_over_tls(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    srv = start_server(tmp_path / "data", write_settings(tmp_path), "--tls-cert", str(cert), "--tls-key", str(key))
    bots = [Bot([*ABLUXX, "bot", "greedy", "--connect", srv.address, "--token", ALICE, "--as", "py", "--tls-ca",
                 str(cert)])]  # fmt: skip
    node_dir = Path(__file__).resolve().parents[2] / "clients" / "node"
    if shutil.which("node") and (node_dir / "node_modules").is_dir():
        bots.append(Bot(["node", str(node_dir / "bot.js"), "--connect", srv.address, "--token", BOB, "--as", "js",
                         "--tls-ca", str(cert)]))  # fmt: skip
    try:
        for bot, name in zip(bots, ("py", "js"), strict=False):
            wait_for(f"{name} in over TLS", lambda bot=bot, name=name: bot.said(f"dialled in as {name}.v1"), 90)
    finally:
        for b in bots:
            b.stop()
        srv.stop()
