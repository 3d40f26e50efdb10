"""The Referee gRPC service (proto/abluxxen/v1/referee.proto) on grpc.aio, with health, reflection, auth, TLS and a
graceful stop (docs/service.md).

Everything runs on one event loop and one SQLite connection. A call checks its caller and its arguments before it
writes anything; a refused call has no side effect.

The calls live by concern in entrants, tournaments, results and watching, on the state in base; this module puts
them together and serves them.
"""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection

from referee.errors import RefereeError
from referee.fleet import WorkerSettings
from referee.log import get_logger
from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc
from referee.store import open_store

from .addresses import is_loopback
from .gateway import GATEWAY_SERVICE, GatewayCalls, gateway_handler
from .metering import CallCounter
from .settings import Settings
from .tournaments import TournamentCalls
from .watching import WatchCalls

SERVICE_NAME = "abluxxen.v1.Referee"
SERVER_OPTIONS = [
    ("grpc.so_reuseport", 0),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),  # the kit's own keepalive pings are welcome
]


class RefereeService(GatewayCalls, TournamentCalls, WatchCalls):
    """The Referee servicer: its calls by concern (entrants, tournaments, results, watching) on one state (base)."""


# -- serving -------------------------------------------------------------------------------------------------------


class ServeError(RefereeError):
    """The server cannot start: the message says why."""


def _check_listen(host: str, tls: tuple[Path, Path] | None, allow_insecure_remote: bool) -> None:
    if tls is None and not is_loopback(host) and not allow_insecure_remote:
        raise ServeError(
            f"refusing to listen in plaintext on {host}, which is not a loopback address: give "
            "--tls-cert and --tls-key, or --allow-insecure-remote if something else encrypts the "
            "traffic"
        )


async def _start_site(
    site: Callable[[RefereeService], Awaitable[Callable[[], Awaitable[None]]]],
    service: RefereeService,
    server: grpc.aio.Server,
) -> Callable[[], Awaitable[None]]:
    """Start ``site`` beside the service; if it cannot start, the service stops too."""
    try:
        return await site(service)
    except BaseException:
        await server.stop(0)
        service.reader.close()
        service.store.close()
        raise


def _reload_tokens(service: RefereeService, reload: Callable[[], Settings]) -> None:
    """The tokens of the settings as they are now (SIGHUP); a settings file with a mistake changes nothing."""
    log = get_logger(service="referee")
    try:
        service.auth.replace(reload())
    except RefereeError as e:
        log.error("settings not reloaded", reason=str(e))
        return
    log.info("tokens reloaded")


def _grpc_server(service: RefereeService, settings: Settings) -> tuple[grpc.aio.Server, health_aio.HealthServicer]:
    """The gRPC server with the Referee service, the dial-in gateway, health and reflection; not yet listening."""
    # an upload (SubmitBot) may be up to the upload cap; gRPC's own default is 4 MiB a message
    most = settings.uploads.max_mb * 1024 * 1024 + 65536
    options = [*SERVER_OPTIONS, ("grpc.max_receive_message_length", most)]
    # half-open connections (a dial-in bot's machine gone without a FIN): a ping every keepalive_s, answered in time
    # gRPC core (1.85) waits for a keepalive ping's answer as long as ping_timeout (60 s by default), whatever
    # keepalive_timeout says: both are set, or a half-open connection is closed a minute late
    answer_ms = settings.keepalive_timeout_s * 1000
    options += [("grpc.keepalive_time_ms", settings.keepalive_s * 1000), ("grpc.keepalive_timeout_ms", answer_ms),
                ("grpc.http2.ping_timeout_ms", answer_ms)]  # fmt: skip
    server = grpc.aio.server(options=options, interceptors=[CallCounter()])
    ref_grpc.add_RefereeServicer_to_server(service, server)
    server.add_generic_rpc_handlers((gateway_handler(service),))  # dial-in bots (gateway.py)
    health = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    health_name = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
    names = (SERVICE_NAME, GATEWAY_SERVICE, health_name, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    return server, health


async def serve(
    data: Path,
    host: str,
    port: int,
    settings: Settings,
    *,
    tls: tuple[Path, Path] | None = None,
    allow_insecure_remote: bool = False,
    stop: asyncio.Event | None = None,
    workers: WorkerSettings | None = None,
    site: Callable[[RefereeService], Awaitable[Callable[[], Awaitable[None]]]] | None = None,
    reload: Callable[[], Settings] | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT (or ``stop``), then shut down gracefully. Prints ``listening on HOST:PORT``.
    Every tournament's games are played on ``workers`` (default: in this process). ``site`` starts something that
    serves beside the service on its loop (the web site, referee/web) and returns how to stop it: it stops after
    the service has drained (which ends its live streams)."""
    _check_listen(host, tls, allow_insecure_remote)
    log = get_logger(service="referee")
    store = open_store(data)
    service = RefereeService(store, settings, workers)
    server, health = _grpc_server(service, settings)
    address = f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"
    if tls is not None:
        try:
            creds = grpc.ssl_server_credentials([(tls[1].read_bytes(), tls[0].read_bytes())])
        except OSError as e:
            store.close()
            raise ServeError(f"cannot read the TLS certificate or key: {e}") from None
    try:
        bound = server.add_secure_port(address, creds) if tls is not None else server.add_insecure_port(address)
    except RuntimeError:  # grpcio raises where it once returned 0: the port is taken or the host is not ours
        bound = 0
    if bound == 0:
        store.close()
        why = " (or the TLS certificate and key are not a PEM pair that match)" if tls is not None else ""
        raise ServeError(f"cannot listen on {address}: the port is in use or the host is not this machine's{why}")
    service.own_ports.add(bound)
    await server.start()
    for name in ("", SERVICE_NAME):
        await health.set(name, health_pb2.HealthCheckResponse.SERVING)
    stop_site = await _start_site(site, service, server) if site is not None else None
    service.resume_running()
    shown = re.sub(r":\d+$", f":{bound}", address)
    print(f"listening on {shown}", flush=True)
    log.info("referee serving", address=shown, data=str(data), tls=tls is not None)

    loop = asyncio.get_running_loop()
    if stop is None:
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if reload is not None:  # SIGHUP: the settings' tokens again, so that a revoked one stops at once
            loop.add_signal_handler(signal.SIGHUP, _reload_tokens, service, reload)
    try:
        await stop.wait()
    finally:
        log.info(
            "shutting down",
            grace_s=settings.shutdown_grace_s,
            in_flight=sum(len(r.in_flight) for r in service.runs.values()),
        )
        for name in ("", SERVICE_NAME):
            await health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await service.drain(settings.shutdown_grace_s)
        if stop_site is not None:
            await stop_site()
        await server.stop(2.0)
        service.boards.keep_all()  # the standings as they stand, for the next start to show at once
        service.reader.close()
        store.close()
        log.info("stopped")
