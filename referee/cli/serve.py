"""``abluxx serve``: run the Referee gRPC service (docs/service.md)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from referee.errors import BadInput, RefereeError
from referee.event_loop import run as run_games
from referee.gc_policy import tune_gc
from referee.store import StoreError
from referee.terminal import say

from .args import add_data_arg


def register(sub) -> None:
    p = sub.add_parser("serve", help="run the referee as a gRPC service (submit bots, run and watch tournaments)")
    add_data_arg(p)
    p.add_argument("--port", type=int, required=True, help="port to listen on; 0 picks a free one")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--config", type=Path, help="the server's TOML settings: tokens, delays (docs/service.md)")
    p.add_argument("--tls-cert", type=Path, help="PEM certificate chain: serve TLS (with --tls-key)")
    p.add_argument("--tls-key", type=Path, help="PEM private key for --tls-cert")
    p.add_argument(
        "--allow-insecure-remote",
        action="store_true",
        help="allow plaintext on a non-loopback address (only behind something that encrypts)",
    )
    p.add_argument(
        "--http-port", type=int, help="also serve the web site on this port (0 picks a free one; docs/web.md)"
    )
    p.add_argument("--open", action="store_true", help="open the site in a web browser once it serves")
    p.add_argument("--http-host", help="address the site listens on (default: [http] host, or 127.0.0.1)")
    p.add_argument("--metrics-port", type=int, help="serve Prometheus metrics at /metrics on this port (0 picks a "
                   "free one; docs/operations.md)")  # fmt: skip
    p.add_argument("--metrics-host", default="127.0.0.1", help="address the metrics listen on (default 127.0.0.1)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    from .args import add_worker_args

    add_worker_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from referee.log import configure
    from referee.netaddr import listen_problem
    from referee.service import load, serve

    if problem := listen_problem(args.host, args.port):  # before gRPC, which would log its own raw line first
        raise BadInput(problem)
    if (args.tls_cert is None) != (args.tls_key is None):
        raise BadInput("give both --tls-cert and --tls-key, or neither")
    settings = load(args.config)
    if args.http_port is not None and not 0 <= args.http_port <= 65535:
        raise BadInput(f"--http-port must be 0 to 65535, got {args.http_port}")
    http = dataclasses.replace(
        settings.http,
        port=settings.http.port if args.http_port is None else args.http_port,
        host=args.http_host or settings.http.host,
    )
    site = None
    if http.port is not None:
        _check_site_host(http.host, args.allow_insecure_remote)
        from referee.web import starter

        site = starter(http, open_browser=args.open)
    from referee.fleet import WorkerSettings, settings_from

    workers = settings_from(WorkerSettings(), args.workers, args.backend, args.ray_address)
    if not settings.organiser_tokens:
        say(
            "abluxx serve: warning: no organiser token (set ABLUXX_ORGANISER_TOKENS or [auth] organiser_tokens); "
            "nobody can create tournaments",
            file=sys.stderr,
        )
    configure(level=args.log_level)
    if args.metrics_port is not None:
        _serve_metrics(args.metrics_host, args.metrics_port)
    tls = (args.tls_cert, args.tls_key) if args.tls_cert else None
    tune_gc()
    try:
        run_games(
            serve(
                args.data,
                args.host,
                args.port,
                settings,
                tls=tls,
                allow_insecure_remote=args.allow_insecure_remote,
                workers=workers,
                site=site,
                reload=lambda: load(args.config),
            )
        )
    except StoreError as e:  # the data folder: found once the server starts, so it did not serve
        raise RefereeError(str(e)) from None
    return 0


def _serve_metrics(host: str, port: int) -> None:
    """Prometheus' text format on ``host:port``, from a thread of its own (prometheus_client's server), so that a
    scrape never waits on the event loop. Prints ``metrics on http://HOST:PORT/metrics``."""
    from prometheus_client import start_http_server

    from referee.netaddr import listen_problem

    if problem := listen_problem(host, port):
        raise BadInput(f"--metrics-port/--metrics-host: {problem}")
    try:
        server, _ = start_http_server(port, host.strip("[]"))
    except OSError as e:
        raise BadInput(f"cannot serve metrics on {host}:{port}: {e.strerror}") from None
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    say(f"metrics on http://{shown}:{server.server_port}/metrics", flush=True)


def _check_site_host(host: str, allow_insecure_remote: bool) -> None:
    """The site speaks plain HTTP (its sign-in carries tokens): only on loopback, unless something in front
    encrypts it."""
    from referee.service.addresses import is_loopback

    if not is_loopback(host.strip("[]")) and not allow_insecure_remote:
        raise BadInput(
            f"refusing to serve the site in plain HTTP on {host}, which is not a loopback address: put an HTTPS "
            "proxy in front and give --allow-insecure-remote"
        )
