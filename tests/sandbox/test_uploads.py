"""Uploaded bots (SubmitBot's ``upload``, ``abluxx submit --upload``): the archive checks, with real tar and zip
archives, and the whole path through a real server: an uploaded Python bot and an uploaded compiled (C++) bot
pass their checks in the sandbox and play an open ladder's games there, each at its own address."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
import zipfile
from pathlib import Path

import grpc
import pytest

from referee.errors import BadInput
from referee.fleet.sandbox import Limits
from referee.proto.abluxxen.v1 import bot_pb2, bot_pb2_grpc
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.service.hosted import HostedBots
from referee.service.uploads import UploadSettings, unpack
from tests.builds import build_cpp_bot
from tests.sandbox.conftest import needs_sandbox
from tests.service.helpers import (
    ABLUXX,
    ALICE,
    BOB,
    ORGANISER,
    auth,
    code_of,
    config,
    start_server,
    stub,
    terminate,
    write_settings,
)
from tests.service.test_ladder import games, names, tournament, wait_for

PY_BOT = """from abluxx_bot import serve
from abluxx_bot.examples import factory

make = factory("greedy")
print("starting up", flush=True)


def made():
    print("a game begins", flush=True)
    return make(0)


serve(made, 0)
"""


def _tar(members: list[tarfile.TarInfo], data: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    # gzip's header time fixed: the same archive, and so the same test id, in every pytest-xdist worker
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for m in members:
            body = (data or {}).get(m.name)
            if body is not None:
                m.size = len(body)
            tar.addfile(m, io.BytesIO(body) if body is not None else None)
    return buf.getvalue()


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    m = tarfile.TarInfo(name)
    m.type, m.linkname = kind, target
    return m


def _dev(name: str) -> tarfile.TarInfo:
    m = tarfile.TarInfo(name)
    m.type, m.devmajor, m.devminor = tarfile.CHRTYPE, 1, 3
    return m


def _zip_bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("zeros", b"\0" * (64 << 20))  # 64 MiB of zeros: about 64 KiB packed
    return buf.getvalue()


@pytest.mark.parametrize(
    ("archive", "why"),
    [
        (_tar([tarfile.TarInfo("/etc/passwd")], {"/etc/passwd": b"x"}), "absolute path"),
        (_tar([tarfile.TarInfo("a/../../x")], {"a/../../x": b"x"}), "'..'"),
        (_tar([_link("etc", "/etc")]), "points outside"),
        (_tar([_link("data", "../../../data")]), "points outside"),
        (
            _tar(
                [
                    _link("up", "d/../.."),
                ]
            ),
            "points outside",
        ),
        (_tar([_link("d", "."), _link("e", "d/..")]), "points outside"),
        (_tar([_link("hard", "../../abluxx.db", tarfile.LNKTYPE)]), "'..'"),
        (_tar([_dev("null")]), "device file"),
        (_zip_bomb(), "more than 1 MiB unpacked"),
        (_tar([tarfile.TarInfo(f"f{i}") for i in range(5)], {f"f{i}": b"x" for i in range(5)}), "more than 3 files"),
        (b"\0" * (2 << 20), "more than the 1 MiB"),
        (b"not an archive", "not a tar or zip"),
    ],
)
def test_a_bad_upload_is_refused_naming_the_problem_and_leaves_nothing(tmp_path: Path, archive: bytes,
                                                                       why: str) -> None:  # fmt: skip
    dest = tmp_path / "uploads" / "bot" / "1"
    with pytest.raises(BadInput, match=why.replace("(", r"\(").replace(".", r"\.")):
        unpack(archive, dest, UploadSettings(max_mb=1, unpacked_mb=1, max_files=3))
    assert not dest.exists()
    assert not (tmp_path / "etc").exists()


def test_a_good_upload_keeps_its_files_links_and_execute_bits_under_an_owner_only_folder(tmp_path: Path) -> None:
    run = tarfile.TarInfo("bin/run")
    run.mode = 0o755
    dest = tmp_path / "uploads" / "bot" / "1"
    unpack(_tar([run, tarfile.TarInfo("bot.py"), _link("main.py", "bot.py")], {"bin/run": b"#!/bin/sh\n",
           "bot.py": b"print(1)\n"}), dest, UploadSettings())  # fmt: skip
    assert (dest / "main.py").read_text() == "print(1)\n"
    assert (dest / "bin/run").stat().st_mode & 0o777 == 0o755
    assert (dest / "bot.py").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "uploads").stat().st_mode & 0o777 == 0o700


def _hello(hello) -> bot_pb2.HelloReply | None:
    try:
        return hello(bot_pb2.HelloRequest(protocol_version=bot_pb2.PROTOCOL_VERSION_1), timeout=5)
    except grpc.RpcError:
        return None


@pytest.fixture(scope="module")
def cppbot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    binary, done = build_cpp_bot(tmp_path_factory)  # once per run, shared with tests/clients (tests/builds.py)
    if done.returncode != 0 and os.environ.get("CI") != "true":  # .ci/run installs Debian's gRPC C++
        pytest.skip(f"the C++ bot does not build here: {done.stderr[-500:]}")
    assert done.returncode == 0, done.stderr[-3000:]
    return binary


@needs_sandbox()
def test_uploaded_python_and_cpp_bots_play_a_ladder_in_their_sandboxes(tmp_path: Path, cppbot: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    try:
        s = stub(srv.address)
        folder = tmp_path / "pybot"
        folder.mkdir()
        (folder / "bot.py").write_text(PY_BOT)
        out = subprocess.run([*ABLUXX, "submit", "pybot", "--upload", str(folder), "--command", "python3 bot.py",
                              "--server", srv.address, "--token", ALICE], capture_output=True, text=True,
                             timeout=300)  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
        assert "accepted: pybot.v1" in out.stdout
        assert "starting up" in out.stderr and "listening on unix:/run/abluxx/bot.sock" in out.stderr  # its output
        archive = _tar([tarfile.TarInfo("cppbot")], {"cppbot": cppbot.read_bytes()})
        reply = s.SubmitBot(ref_pb.SubmitBotRequest(name="cppbot", upload=archive, command="sh -c 'exec ./cppbot'"),
                            metadata=auth(BOB), timeout=300)  # fmt: skip
        assert reply.HasField("refusal")  # a tar member's mode was 0644: not executable, so it never served
        assert "did not start" in reply.refusal.reason and "Permission denied" in reply.output
        run = tarfile.TarInfo("cppbot")
        run.mode = 0o755
        reply = s.SubmitBot(ref_pb.SubmitBotRequest(name="cppbot", upload=_tar([run], {"cppbot": cppbot.read_bytes()}),
                            command="./cppbot"), metadata=auth(BOB), timeout=300)  # fmt: skip
        assert reply.HasField("entrant"), reply
        assert reply.entrant.address.startswith("unix:")
        c = config("up", [], table_size=2, concurrency=2, ladder=ref_pb.LadderConfig(open=True, games=6))
        t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
        tid = t.tournament_id
        s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
        wait_for("the budget to be played", lambda: tournament(s, tid).state == ref_pb.TOURNAMENT_STATE_FINISHED,
                 timeout=600)  # fmt: skip
        played = games(s, tid)
        assert len(played) == 6 and all(names(g) == {"pybot.v1", "cppbot.v1"} for g in played)
        assert all(not seat.faults and not seat.retired for g in played for seat in g.seats)
        # its own output in each game and in its validation game: its author's, and nobody else's
        first = ref_pb.GetBotOutputRequest(game_id=played[0].game_id, entrant="pybot.v1")
        assert "a game begins" in s.GetBotOutput(first, metadata=auth(ALICE), timeout=30).output
        assert code_of(s.GetBotOutput, first, metadata=auth(BOB), timeout=30) == grpc.StatusCode.NOT_FOUND
        mine = s.GetEntrant(ref_pb.GetEntrantRequest(name="pybot"), metadata=auth(ALICE)).validation_game_id
        validation = ref_pb.GetBotOutputRequest(game_id=mine)
        assert "starting up" in s.GetBotOutput(validation, metadata=auth(ORGANISER), timeout=30).output
        assert code_of(s.GetBotOutput, validation, timeout=30) == grpc.StatusCode.NOT_FOUND
        # a restarted server runs its uploaded bots again, at the addresses it stored
        assert terminate(srv) == 0
        assert not HostedBots(tmp_path / "data", Limits(), 0).links.exists()  # the links' folder went with it
        srv = start_server(tmp_path / "data", write_settings(tmp_path))
        hello = bot_pb2_grpc.BotStub(grpc.insecure_channel(reply.entrant.address)).Hello
        said = wait_for("the C++ bot to serve again", lambda: _hello(hello), timeout=120)
        assert said.name == "cpp-largest"
        assert terminate(srv) == 0
    finally:
        srv.stop()
