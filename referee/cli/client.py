"""The remote commands' connection to a Referee service: flags, channel, calls and pages, and how a failed call
becomes an error; and the few ways they show a tournament or a game."""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from referee.errors import BadInput, RefereeError, from_status
from referee.netaddr import dial_problem

if TYPE_CHECKING:
    pass

DEFAULT_SERVER = "127.0.0.1:50050"


def connection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--server",
        default=os.environ.get("ABLUXX_SERVER", DEFAULT_SERVER),
        help=f"the referee's HOST:PORT (default $ABLUXX_SERVER or {DEFAULT_SERVER})",
    )
    p.add_argument("--token", default=os.environ.get("ABLUXX_TOKEN"), help="bearer token (default $ABLUXX_TOKEN)")
    p.add_argument("--tls", action="store_true", help="connect with TLS, trusting the system's roots")
    p.add_argument("--tls-ca", type=Path, help="connect with TLS, trusting this PEM certificate")
    p.add_argument("--tls-name", help="the name the server's certificate is for, when not the --server host")
    p.add_argument(
        "--insecure",
        action="store_true",
        help="send the token in plaintext to a server that is not on loopback (something else must protect it)",
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for an answer (default 600)")


def stub(args: argparse.Namespace):
    from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc

    if problem := dial_problem(args.server, unix=True):  # gRPC would wrap a port past 65535 and dial another
        raise BadInput(f"--server: {problem}")
    options = [("grpc.ssl_target_name_override", args.tls_name)] if args.tls_name else []
    if args.tls or args.tls_ca:
        try:
            root = args.tls_ca.read_bytes() if args.tls_ca else None
        except OSError as e:
            raise BadInput(f"{args.tls_ca}: cannot read the file ({e.strerror})") from None
        channel = grpc.secure_channel(args.server, grpc.ssl_channel_credentials(root), options=options)
    else:
        from referee.service.addresses import is_loopback

        host = args.server.rpartition(":")[0] or args.server
        if args.token and not is_loopback(host) and not args.insecure:
            raise BadInput(
                f"refusing to send a token in plaintext to {args.server}, which is not a loopback address: use "
                "--tls or --tls-ca FILE, or --insecure if something else encrypts the traffic"
            )
        channel = grpc.insecure_channel(args.server)
    return ref_grpc.RefereeStub(channel)


def metadata(args: argparse.Namespace) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {args.token}")] if args.token else []


def call(args: argparse.Namespace, method: str, request: Any, stream: bool = False) -> Any:
    try:
        fn = getattr(stub(args), method)
        return fn(request, metadata=metadata(args), timeout=None if stream else args.timeout)
    except grpc.RpcError as e:
        raise refused(e, args.server, f"{method}: ") from None


# What gRPC says when it cannot reach a Referee service at all, and the words a user needs instead. The first
# match wins; the text is gRPC's own (C core), so each is a fragment it has said for years.
_UNREACHABLE = (
    ("Failed parsing HTTP/2", "that port speaks HTTP/1, not gRPC: is it the site's port? --server takes the port "
     "of `abluxx serve --port`, not --http-port"),
    ("Connection refused", "nothing answers at {server}: is abluxx serve running there, on that port?"),
    ("DNS resolution failed", "{server}: the host name does not resolve"),
)  # fmt: skip


def unreachable(e: grpc.RpcError, server: str) -> str | None:
    """What an UNAVAILABLE error means in words, or None when it is not one of those above."""
    if e.code() != grpc.StatusCode.UNAVAILABLE:
        return None
    details = e.details() or ""
    for fragment, words in _UNREACHABLE:
        if fragment in details:
            return words.format(server=server)
    return None


def refused(e: grpc.RpcError, server: str, method: str = "") -> RefereeError:
    """A failed call as the error of its kind (``errors.from_status``), exiting as docs/cli.md says: 2 for
    INVALID_ARGUMENT (the request was wrong) and DATA_LOSS (a record the server cannot read), 1 for the others.
    A server that cannot be reached is said in words (``unreachable``) instead of gRPC's text."""
    if words := unreachable(e, server):
        return from_status(e.code(), words)
    return from_status(e.code(), f"{method}{e.code().name}: {e.details()}")


def pages(args: argparse.Namespace, method: str, request: Any, field: str) -> Iterator[Any]:
    """Every item of a paged List* call, page after page until the server says there is no next one."""
    while True:
        out = call(args, method, request)
        yield from getattr(out, field)
        if not out.next_page_token:
            return
        request.page_token = out.next_page_token


def handled(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command whose stream, failing while it is read, ends as a failed call does."""

    @functools.wraps(fn)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except grpc.RpcError as e:  # raised while reading a stream
            raise refused(e, args.server) from None

    return wrapped


def state_name(t) -> str:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    return ref_pb.TournamentState.Name(t.state).removeprefix("TOURNAMENT_STATE_").lower()


def tournament_line(t) -> str:
    """A tournament's state and progress: games played against its schedule, or a ladder's budget, or for a ladder
    without one the games played alone; and what a ladder waits for, when it cannot seat a table."""
    import json

    ladder = "ladder" in json.loads(t.config_json or "{}")
    total = t.budget if ladder else t.games
    played = f"{t.finished}/{total} games" if total else f"{t.finished} games played"
    waiting = f"; waiting: {t.waiting}" if t.waiting else ""
    return f"tournament {t.tournament_id}: {state_name(t)}, {played}, {t.in_flight} in flight{waiting}"


# The keys of a local tournament file that a server has no use for, and why.


def game_line(g) -> str:
    seats = "  ".join(
        f"{s.place}.{s.entrant} {s.score:+d}{'(retired)' if s.retired else ''}"
        for s in sorted(g.seats, key=lambda s: s.place)
    )
    return f"{g.game_id}  {seats}  [{g.end_reason}]"


def tournament_id(args: argparse.Namespace, wanted: str | None) -> str:
    """The id of the tournament ``wanted`` names (an id, or a name one tournament has; None: the latest)."""
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    from .lookup import pick_tournament

    known = list(pages(args, "ListTournaments", ref_pb.ListTournamentsRequest(), "tournaments"))
    return pick_tournament([(t.tournament_id, t.name) for t in known], wanted, f"on {args.server}")


def message_json(message) -> dict:
    """A protobuf message as snake_case JSON, every field present (the schema the local commands print)."""
    from google.protobuf import json_format

    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
