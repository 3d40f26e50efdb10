"""The referee service and bots as real processes over real sockets, for the service tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
BAD_BOTS = Path(__file__).resolve().parents[1] / "fixtures" / "bad_bots.py"
ORGANISER = "organiser-secret"
ALICE = "alice-secret"
BOB = "bob-secret"
CAROL = "carol-secret"
LISTENING = re.compile(r"listening on (\S+:\d+)")

# Short enough that a hanging bot is found out in seconds, long enough that a good bot on a busy 2-core machine
# (3.5 s before its first timeout) is never late.
SETTINGS = """
[auth]
organiser_tokens = ["organiser-secret"]
[auth.authors]
alice = "alice-secret"
bob = "bob-secret"
carol = "carol-secret"
[service]
spectator_delay_ms = {delay}
shutdown_grace_s = {grace}
[time_control]
decision_ms = 1000
bank_ms = 2000
grace_ms = 500
"""


@dataclass
class Proc:
    proc: subprocess.Popen
    address: str
    log: Path | None = None
    lines: list[str] = field(default_factory=list)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def _wait_listening(proc: subprocess.Popen, what: str, timeout: float = 60) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{what} exited with code {proc.wait()} before listening")
        if m := LISTENING.search(line):
            return m[1]
    raise RuntimeError(f"{what} did not listen within {timeout} s")


def start_bot(kind: str = "greedy", *extra: str) -> Proc:
    """An example bot (random, greedy, counter), or a misbehaving one: ``bad:MODE``."""
    if kind.startswith("bad:"):
        argv = [sys.executable, str(BAD_BOTS), "--mode", kind[4:], *extra]
    else:
        argv = [*ABLUXX, "bot", kind, "--port", "0", *extra]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return Proc(proc, _wait_listening(proc, f"bot {kind}"))


def start_bots(kinds: list[str]) -> list[Proc]:
    """Several bots started at once (each Python start takes a while)."""
    procs = []
    for kind in kinds:
        if kind.startswith("bad:"):
            argv = [sys.executable, str(BAD_BOTS), "--mode", kind[4:]]
            if kind == "bad:slow":
                argv += ["--delay-ms", "4000"]  # past the 3.5 s allowance of SETTINGS
        else:
            argv = [*ABLUXX, "bot", kind, "--port", "0"]
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
    return [Proc(p, _wait_listening(p, k)) for p, k in zip(procs, kinds, strict=True)]


def write_settings(folder: Path, delay_ms: int = 0, grace_s: float = 30, extra: str = "") -> Path:
    path = folder / "server.toml"
    path.write_text(SETTINGS.format(delay=delay_ms, grace=grace_s) + extra)
    return path


def start_server(data: Path, settings: Path | None, *extra: str, env: dict[str, str] | None = None) -> Proc:
    log = data.parent / f"{data.name}-serve.log"
    argv = [*ABLUXX, "serve", "--data", str(data), "--port", "0", *extra]
    if settings is not None:
        argv += ["--config", str(settings)]
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ABLUXX_")}
    full_env.update(env or {})
    with open(log, "ab") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True, env=full_env)
    try:
        address = _wait_listening(proc, f"abluxx serve (log: {log})")
    except RuntimeError:
        proc.kill()
        raise RuntimeError(f"abluxx serve did not start:\n{log.read_text()}") from None
    return Proc(proc, address, log)


def stub(address: str) -> ref_grpc.RefereeStub:
    return ref_grpc.RefereeStub(grpc.insecure_channel(address))


def auth(token: str | None) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")] if token else []


def code_of(call, *args, **kwargs) -> grpc.StatusCode:
    """The status code a call fails with (pytest.fail if it succeeds)."""
    try:
        call(*args, **kwargs)
    except grpc.RpcError as e:
        return e.code()
    pytest.fail(f"{call} succeeded; an error was expected")


def error_of(call, *args, **kwargs) -> grpc.RpcError:
    try:
        call(*args, **kwargs)
    except grpc.RpcError as e:
        return e
    pytest.fail(f"{call} succeeded; an error was expected")


def submit(s: ref_grpc.RefereeStub, name: str, address: str, token: str = ORGANISER, owner: str = "",
           timeout: float = 120, force: bool = False) -> ref_pb.SubmitBotResponse:  # fmt: skip
    return s.SubmitBot(ref_pb.SubmitBotRequest(name=name, address=address, owner=owner, force=force),
                       metadata=auth(token), timeout=timeout)  # fmt: skip


def config(name: str, entrants: list[dict], **fields) -> ref_pb.TournamentConfig:
    c = ref_pb.TournamentConfig(name=name, **fields)
    for e in entrants:
        c.entrants.add(**e)
    return c


def watch_to_end(s: ref_grpc.RefereeStub, tid: str, timeout: float = 300) -> list[ref_pb.TournamentEvent]:
    return list(s.WatchTournament(ref_pb.WatchTournamentRequest(tournament_id=tid), timeout=timeout))


def terminate(p: Proc, timeout: float = 60) -> int:
    p.proc.send_signal(signal.SIGTERM)
    return p.proc.wait(timeout)


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for localhost and 127.0.0.1, good for a day, and its key, written into ``folder``."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def wait_for(what: str, check, timeout: float = 240):
    """``check()``'s first true value, asked every 0.2 s; AssertionError naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")
