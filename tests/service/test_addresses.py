"""SubmitBot is not a port scanner nor a reader of other services' errors (issue 11 item 7): a refusal says only
"unreachable", "not an abluxxen bot" or "Hello refused"; the address policy refuses link-local networks, the
referee's own port and unix sockets; a name is resolved once, and the address dialled is the one stored."""

from __future__ import annotations

import socket
import threading
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from .helpers import ALICE, error_of, start_bots, start_server, stub, submit, write_settings

SECRET = "internal-secret-7f3a: db password rotated"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("addresses")
    srv = start_server(folder / "data", write_settings(folder))
    yield srv
    srv.stop()


class _Internal(grpc.GenericRpcHandler):
    """An internal gRPC service: every call fails with a revealing error text."""

    def __init__(self, code: grpc.StatusCode) -> None:
        self.code = code

    def service(self, handler_call_details):
        def fail(request, context):
            context.abort(self.code, SECRET)

        return grpc.unary_unary_rpc_method_handler(fail)


def _internal_service(code: grpc.StatusCode) -> tuple[grpc.Server, str]:
    server = grpc.server(futures.ThreadPoolExecutor(2), handlers=[_Internal(code)])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


def _not_grpc() -> tuple[socket.socket, str]:
    """An open port that answers every connection with an HTTP/1 text and closes it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nServer: " + SECRET.encode() + b"\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    return listener, f"127.0.0.1:{listener.getsockname()[1]}"


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_refusals_are_generic_and_carry_nothing_the_far_end_said(server) -> None:
    s = stub(server.address)
    failing, failing_at = _internal_service(grpc.StatusCode.PERMISSION_DENIED)
    other, other_at = _internal_service(grpc.StatusCode.UNIMPLEMENTED)
    http, http_at = _not_grpc()
    try:
        reasons = {
            what: submit(s, f"probe-{what}", at, ALICE, timeout=60).refusal.reason
            for what, at in (("closed", _closed_port()), ("http", http_at), ("grpc", failing_at), ("other", other_at))
        }
    finally:
        failing.stop(None)
        other.stop(None)
        http.close()
    assert reasons == {
        "closed": "unreachable",
        "http": "unreachable",  # an open port that does not speak gRPC looks like a closed one
        "grpc": "Hello refused",
        "other": "not an abluxxen bot",
    }
    log = server.log.read_text()
    assert "db password rotated" in log  # the detail is the operator's, in the server log


@pytest.mark.parametrize(
    "address",
    ["169.254.169.254:80", "[fe80::1]:80", "[::ffff:169.254.169.254]:80", "unix:1234", "unix-abstract:bot"],
)
def test_link_local_networks_and_unix_sockets_are_refused_before_any_dial(server, address: str) -> None:
    err = error_of(submit, stub(server.address), "probe", address, ALICE, timeout=60)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details().startswith("address:") and "address policy" in err.details(), err.details()


def test_the_referee_itself_is_refused(server) -> None:
    port = server.address.rpartition(":")[2]
    for address in (server.address, f"localhost:{port}", f"0.0.0.0:{port}"):
        err = error_of(submit, stub(server.address), "myself", address, ALICE, timeout=60)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, address
        assert "the referee itself" in err.details(), err.details()


def test_a_name_is_resolved_once_and_the_address_dialled_is_stored(server) -> None:
    (bot,) = start_bots(["greedy"])
    try:
        port = bot.address.rpartition(":")[2]
        out = submit(stub(server.address), "named", f"localhost:{port}", ALICE)
        assert out.HasField("entrant"), out.refusal.reason
        assert out.entrant.address in (f"127.0.0.1:{port}", f"[::1]:{port}")
    finally:
        bot.stop()


def test_an_allow_list_refuses_every_other_network(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path, extra='[addresses]\nallow = ["10.0.0.0/8"]\n'))
    (bot,) = start_bots(["greedy"])
    try:
        err = error_of(submit, stub(srv.address), "local", bot.address, ALICE, timeout=60)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "address policy" in err.details()
    finally:
        bot.stop()
        srv.stop()


def test_unspecified_addresses_are_the_host_itself_under_a_loopback_deny(tmp_path: Path) -> None:
    """Issue 20 item 7: 0.0.0.0:PORT was accepted under deny = loopback, and it dials loopback."""
    deny = '[addresses]\ndeny = ["127.0.0.0/8", "::1/128"]\n'
    srv = start_server(tmp_path / "data", write_settings(tmp_path, extra=deny))
    (bot,) = start_bots(["greedy"])
    port = bot.address.rpartition(":")[2]
    try:
        for address in (f"0.0.0.0:{port}", f"[::]:{port}", f"[::ffff:0.0.0.0]:{port}", bot.address):
            err = error_of(submit, stub(srv.address), "local", address, ALICE, timeout=60)
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "address policy" in err.details(), address
    finally:
        bot.stop()
        srv.stop()


@pytest.mark.parametrize(
    ("table", "key"),
    [('[addresses]\nallow = ["10.0.0.0/33"]\n', "addresses.allow"), ('[addresses]\ndeny = "all"\n', "addresses.deny"),
     ("[addresses]\nallow_unix = 1\n", "addresses.allow_unix"), ("[addresses]\nblock = []\n", "addresses.block"),
     ("[service]\nmax_watchers = 0\n", "service.max_watchers")],
)  # fmt: skip
def test_a_bad_policy_or_limit_stops_the_server_naming_the_key(tmp_path: Path, table: str, key: str) -> None:
    import tomllib

    from referee.service.settings import parse
    from referee.tournament.config import ConfigError

    with pytest.raises(ConfigError, match=rf": {key}: "):
        parse(tomllib.loads(table), "server.toml", env={})
