"""The C++ bot (clients/cpp), built with its Makefile from Debian's gRPC, as a real process over real sockets.

The build goes to a temporary folder (the source tree stays clean) once per test session. The bot plays whole
games through `abluxx match` on both transports, and engine games through the driver in bot_driver.py, which
holds it to its README's strategy; with --connect it dials in to a real `abluxx serve` and plays a ladder game.
Without the compiler or Debian's gRPC the tests skip, saying what to install; with CI=true they fail instead
(.ci/run installs them).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.engine import Options
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from tests.builds import CPP_DIR, build_cpp_bot
from tests.service.helpers import ALICE, self_signed, start_server, wait_for, write_settings
from tests.service.test_dialin import Bot, _free_port, faults, games_of, open_ladder, seat

from .bot_driver import (
    BotProcess,
    need,
    no_group_request,
    play_game,
    stops_with_a_stream_open,
    totals_against_random,
)

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
WHAT = "the C++ bot's tests (Debian: libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc pkg-config g++ make)"


@pytest.fixture(scope="session")
def cppbot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bot's binary, built once per run with `make BUILD=...` outside the source tree (tests/builds.py)."""
    for tool in ("make", "g++", "pkg-config", "protoc", "grpc_cpp_plugin"):
        need(tool, WHAT)
    if subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"]).returncode != 0:
        need("pkg-config grpc++ protobuf", WHAT)  # not a tool on the PATH: skips, or fails under CI, saying why
    binary, done = build_cpp_bot(tmp_path_factory)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (CPP_DIR / "build").exists(), "the build wrote into the source tree"
    return binary


@pytest.fixture(scope="module")
def bot(cppbot: Path) -> Iterator[BotProcess]:
    b = BotProcess([str(cppbot), "--port", "0"])
    yield b
    b.stop()


def abluxx(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*ABLUXX, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_hello_names_the_bot_and_both_transports(bot: BotProcess) -> None:
    hello = bot.stub.Hello(bot_pb.HelloRequest(protocol_version=bot_pb.PROTOCOL_VERSION_1), timeout=10)
    assert (hello.name, hello.version, hello.protocol_version) == ("cpp-largest", "0.1.0", bot_pb.PROTOCOL_VERSION_1)
    assert sorted(hello.transports) == [bot_pb.TRANSPORT_UNARY, bot_pb.TRANSPORT_STREAM]


@pytest.mark.parametrize(("transport", "field"), [("stream", ["greedy"]), ("unary", ["counter", "hoard"])])
def test_abluxx_match_plays_a_whole_game_against_it(
    bot: BotProcess, tmp_path: Path, transport: str, field: list[str]
) -> None:
    """What the docs tell an entrant to run first: a game through `abluxx match`, no faults, a record that verifies."""
    out = abluxx(
        "match", bot.address, *field, "--transport", transport, "--seed", "7", "--data", tmp_path, cwd=tmp_path
    )
    assert out.returncode == 0, out.stdout + out.stderr
    ours = next(line for line in out.stdout.splitlines() if "cpp-largest" in line)
    assert "no faults" in ours and "RETIRED" not in ours, out.stdout
    record = re.search(r"^record: (.+)$", out.stdout, flags=re.M).group(1)
    checked = abluxx("verify", record, "--data", tmp_path, cwd=tmp_path)
    assert checked.returncode == 0 and "ok" in checked.stdout, checked.stdout + checked.stderr


@pytest.mark.parametrize("transport", ["unary", "stream"])
@pytest.mark.parametrize(
    ("players", "bot_seats", "seed", "options"),
    [(3, {1}, 12, Options(draw_one=True)), (4, {0, 2}, 13, Options(end_on_empty_pile=True))],
)
def test_its_moves_follow_its_strategy(
    bot: BotProcess, transport: str, players: int, bot_seats: set[int], seed: int, options: Options
) -> None:
    """Every reply is a legal index; it abluxxes when it can, takes, and reclaims (its README's table)."""
    state = play_game(bot, transport, players, bot_seats, seed, options)
    assert state.end_reason is not None
    assert bot.proc.poll() is None, f"the bot died: {bot.errors()}"


def test_it_outscores_random_players(bot: BotProcess) -> None:
    ours, theirs = totals_against_random(bot, range(100, 106))
    assert ours > theirs, (ours, theirs)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_bot_cleanly_with_a_stream_open(cppbot: Path, sig: signal.Signals) -> None:
    assert stops_with_a_stream_open([str(cppbot), "--port", "0"], sig) == 0


def test_a_strategy_failure_answers_no_action_and_its_error_in_words(bot: BotProcess) -> None:
    req = no_group_request("g-bug")
    reply = bot.stub.Decide(req, timeout=10)
    assert reply.seq == 7 and reply.WhichOneof("decision") is None
    assert reply.error == "runtime_error: a play request lists no group"


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--port", "70000"], "--port must be an integer from 0 to 65535"),
        (["--connect", "127.0.0.1:1"], "--connect needs the author's token: --token T"),
        (["--connect", "127.0.0.1:1", "--token", "t", "--games-at-once", "65"], "--games-at-once must be an integer"),
    ],
)
def test_a_bad_argument_exits_2_with_usage(cppbot: Path, args: list[str], why: str) -> None:
    out = subprocess.run([str(cppbot), *args], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and why in out.stderr and "usage: cppbot" in out.stderr, out.stderr


def listening_sockets(pid: int) -> set[str]:
    """The sockets process ``pid`` listens on (TCP, v4 and v6), as inodes."""
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            cols = row.split()
            if cols[3] == "0A":  # LISTEN
                listening.add(cols[9])
    fds = Path(f"/proc/{pid}/fd")
    ours = {os.readlink(fd)[len("socket:[") : -1] for fd in fds.iterdir() if os.readlink(fd).startswith("socket:")}
    return ours & listening


def test_it_dials_in_listening_on_nothing_and_plays_a_ladder_game(cppbot: Path, tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    bot = Bot([str(cppbot), "--connect", srv.address, "--token", ALICE, "--as", "cpp"])
    try:
        tid = open_ladder(srv)
        wait_for("the C++ bot to be entered", lambda: bot.said("dialled in as cpp.v1"), 90)
        played = wait_for("the C++ bot to play in the ladder", lambda: games_of(srv, tid, "cpp.v1"), 120)
        assert not faults(played[0], "cpp.v1") and not seat(played[0], "cpp.v1").retired
        assert bot.proc.poll() is None and not listening_sockets(bot.proc.pid)
        bot.proc.send_signal(signal.SIGTERM)
        assert bot.proc.wait(10) == 0
    finally:
        bot.stop()
        srv.stop()


def test_a_refused_dial_in_exits_1_saying_why(cppbot: Path, tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    try:
        out = subprocess.run([str(cppbot), "--connect", srv.address, "--token", "not-a-token"],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
        assert out.returncode == 1 and "refused the bot: UNAUTHENTICATED" in out.stderr, out.stderr
    finally:
        srv.stop()


def test_over_tls_it_dials_in_and_comes_back_by_itself_after_the_referee_restarts(cppbot: Path, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    serve = [tmp_path / "data", write_settings(tmp_path), "--port", str(_free_port()), "--tls-cert", str(cert),
             "--tls-key", str(key)]  # fmt: skip
    srv = start_server(*serve)
    bot = Bot([str(cppbot), "--connect", srv.address, "--token", ALICE, "--as", "cpptls", "--tls-ca", str(cert)])
    try:
        wait_for("the C++ bot in over TLS", lambda: bot.said("dialled in as cpptls.v1"), 90)
        srv.stop()
        wait_for("the bot to see the referee go", lambda: bot.said("cppbot: the connection to"), 30)
        srv = start_server(*serve)
        wait_for("the bot back", lambda: len(bot.said("dialled in as cpptls.v1")) == 2, 90)
        assert bot.proc.poll() is None
    finally:
        bot.stop()
        srv.stop()
