"""What the remote commands say when the server is not what the user thinks: in words, not gRPC's text, and
before any line that promises work. Real `abluxx` processes, a real referee service, a real HTTP/1 server."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.service.helpers import ALICE, start_server, write_settings

from .test_bad_input import abluxx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("words")
    srv = start_server(folder / "data", write_settings(folder))
    yield srv.address
    srv.stop()


@pytest.fixture
def http1() -> Iterator[str]:
    """An HTTP/1 server, such as the site's port (`abluxx serve --http-port`)."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def said(out, *words: str) -> None:
    assert out.returncode == 1, (out.returncode, out.stdout, out.stderr)
    for w in words:
        assert w in out.stderr, out.stderr
    for raw in ("UNAVAILABLE", "failed to connect to all addresses", "Failed parsing HTTP/2", "Traceback"):
        assert raw not in out.stderr, out.stderr


def test_a_port_where_nothing_listens_is_said_in_words(tmp_path: Path) -> None:
    where = f"127.0.0.1:{free_port()}"
    said(abluxx("remote", "tournaments", "--server", where, cwd=tmp_path), f"nothing answers at {where}")


def test_the_sites_http_port_is_recognised(tmp_path: Path, http1: str) -> None:
    out = abluxx("remote", "games", "--server", http1, "--timeout", "30", cwd=tmp_path)
    said(out, "that port speaks HTTP/1, not gRPC: is it the site's port?")


def test_submit_with_a_refused_token_says_so_before_promising_a_validation_game(tmp_path: Path, server: str) -> None:
    out = abluxx("submit", "mybot", "127.0.0.1:50071", "--server", server, "--token", "not-a-token", cwd=tmp_path)
    said(out, "unknown token")
    assert "validation game" not in out.stderr + out.stdout


def test_submit_without_a_token_says_it_needs_one(tmp_path: Path, server: str) -> None:
    out = abluxx("submit", "mybot", "127.0.0.1:50071", "--server", server, cwd=tmp_path)
    said(out, "submitting a bot needs a token")
    assert "validation game" not in out.stderr + out.stdout


def test_submit_to_nothing_says_so_before_promising_a_validation_game(tmp_path: Path) -> None:
    where = f"127.0.0.1:{free_port()}"
    out = abluxx("submit", "mybot", "127.0.0.1:50071", "--server", where, "--token", ALICE, cwd=tmp_path)
    said(out, f"nothing answers at {where}")
    assert "validation game" not in out.stderr + out.stdout
