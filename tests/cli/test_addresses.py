"""Every address the `abluxx` command (and a bot built on the kit) takes is checked before gRPC sees it: one line on
stderr and exit status 2 (docs/cli.md), never a traceback or gRPC's raw log line, and never a port that wraps
modulo 65536 to dial some other server. Each case runs a real process."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
# A bot written by a user on the kit, exactly as docs/writing-a-bot.md shows it.
USER_BOT = """
import sys
from abluxx_bot import Bot, serve

class First(Bot):
    name = "first"
    def decide(self, d):
        return 0

serve(First, port=int(sys.argv[1]), host=sys.argv[2])
"""


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120)


def one_line_refusal(out: subprocess.CompletedProcess, prefix: str, *words: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stderr)
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr  # no traceback, no "E... add_port.cc" line from gRPC
    assert lines[0].startswith(prefix), lines
    for w in words:
        assert w in lines[0], lines


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something is listening on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.mark.parametrize(
    ("host", "says"),
    [
        ("127.0.0.1", "the port is in use"),
        ("10.255.255.1", "not this machine's"),
        ("nonexistent.invalid", "the host is unknown"),
    ],
)
def test_a_bot_that_cannot_listen_says_why_in_one_line(tmp_path: Path, busy_port: int, host: str, says: str) -> None:
    cli = run([*ABLUXX, "bot", "greedy", "--port", str(busy_port), "--host", host], tmp_path)
    one_line_refusal(cli, "abluxx bot: cannot listen on ", says)
    (tmp_path / "mybot.py").write_text(USER_BOT)
    kit = run([sys.executable, "mybot.py", str(busy_port), host], tmp_path)
    one_line_refusal(kit, "abluxx_bot: cannot listen on ", says)


def test_a_bot_port_past_65535_is_refused_not_wrapped(tmp_path: Path) -> None:
    one_line_refusal(run([*ABLUXX, "bot", "greedy", "--port", "65536"], tmp_path), "abluxx bot: ", "0 to 65535")
    (tmp_path / "mybot.py").write_text(USER_BOT)
    one_line_refusal(run([sys.executable, "mybot.py", "99999", "127.0.0.1"], tmp_path), "abluxx_bot: ", "0 to 65535")


def test_serve_on_a_busy_port_says_so_in_one_line(tmp_path: Path, busy_port: int) -> None:
    out = run([*ABLUXX, "serve", "--data", str(tmp_path / "d"), "--port", str(busy_port)], tmp_path)
    one_line_refusal(out, "abluxx serve: cannot listen on ", "the port is in use")
    assert not (tmp_path / "d").exists()  # nothing was made


@pytest.mark.parametrize(
    ("server", "says"),
    [
        ("127.0.0.1:103563", "port must be 1 to 65535"),  # gRPC would dial 103563 % 65536 = 38027
        ("127.0.0.1:99999", "port must be 1 to 65535"),
        ("127.0.0.1:0", "port must be 1 to 65535"),
        ("127.0.0.1", "expected host:port"),
        ("unix:", "needs a path"),
    ],
)
def test_a_bad_server_address_is_refused_before_dialling(tmp_path: Path, server: str, says: str) -> None:
    out = run([*ABLUXX, "remote", "tournaments", "--server", server], tmp_path)
    one_line_refusal(out, "abluxx remote: --server: bad address ", says)


def test_a_bad_server_in_the_environment_and_a_bad_bot_address_are_refused(tmp_path: Path) -> None:
    env = {"ABLUXX_SERVER": "127.0.0.1:70000", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([*ABLUXX, "remote", "entrants"], cwd=tmp_path, capture_output=True, text=True, env=env,
                         timeout=120)  # fmt: skip
    one_line_refusal(out, "abluxx remote: --server: bad address ", "port must be 1 to 65535")
    out = run([*ABLUXX, "submit", "mine", "127.0.0.1:99999"], tmp_path)
    one_line_refusal(out, "abluxx submit: bad address ", "port must be 1 to 65535")


def test_a_unix_server_address_is_dialled(tmp_path: Path) -> None:
    # accepted, so the failure is the call's: nothing listens there (exit 1, not 2)
    out = run([*ABLUXX, "remote", "tournaments", "--server", f"unix:{tmp_path}/none.sock", "--timeout", "5"], tmp_path)
    assert out.returncode == 1, out.stderr
    assert "bad address" not in out.stderr
