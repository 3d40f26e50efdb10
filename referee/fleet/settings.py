"""Where games are played (docs/scale.md): the backend, how many workers, and the Ray cluster to join."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from referee.errors import BadInput

from .errors import WorkerError

BACKENDS = ("inline", "processes", "ray")
MAX_WORKERS = 256
RAY_CONNECT_TIMEOUT_S = 5.0  # how long to wait for a --ray-address to accept a connection
RAY_INSTALL = 'pip install -e ".[ray]" (from a checkout) or pip install "abluxxen-referee[ray]"'


@dataclass(frozen=True)
class WorkerSettings:
    """Where games are played: ``inline`` in the coordinator's loop, or on ``count`` local worker ``processes``
    or ``ray`` actors (on the cluster at ``ray_address``, else a local Ray). How, not what: it is never part of a
    tournament's or a duel's identity."""

    backend: str = "inline"
    count: int = 1
    ray_address: str | None = None


def default_workers() -> int:
    """Workers when none are counted: one per core of this machine."""
    return max(1, os.cpu_count() or 1)


def settings_from(
    base: WorkerSettings, count: int | None = None, backend: str | None = None, ray_address: str | None = None
) -> WorkerSettings:
    """``base`` (a config's ``[workers]``) with the command line's ``--workers``, ``--backend`` and
    ``--ray-address`` over it; BadInput names a bad one (or says how to install Ray). ``--workers N`` alone
    means local processes, and ``--ray-address`` alone the Ray backend."""
    if count is not None and not 1 <= count <= MAX_WORKERS:
        raise BadInput(f"--workers must be 1 to {MAX_WORKERS}, got {count}")
    if backend is not None and backend not in BACKENDS:
        raise BadInput(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend is None:
        backend = "ray" if ray_address else "processes" if count is not None and base.backend == "inline" else None
    chosen = backend or base.backend
    address = ray_address or (base.ray_address if chosen == "ray" else None)
    if ray_address and chosen != "ray":
        raise BadInput(f"--ray-address is for --backend ray, not {chosen}")
    if chosen == "inline":
        return WorkerSettings()
    if count is None:
        count = base.count if base.backend == chosen else default_workers()
    if chosen == "ray" and (problem := ray_missing()):
        raise BadInput(problem)
    return WorkerSettings(chosen, count, address)


def ray_missing() -> str | None:
    """Why ``--backend ray`` cannot run here (Ray is not installed), or None."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return f"the ray backend needs Ray, which is not installed: {RAY_INSTALL}"
    return None


def check_ray_address(address: str) -> None:
    """WorkerError unless something accepts connections at ``address`` (``host:port`` or ``ray://host:port``)
    within RAY_CONNECT_TIMEOUT_S: ray.init would otherwise wait a long time before it says so."""
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise WorkerError(f"--ray-address {address!r}: expected host:port or ray://host:port")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=RAY_CONNECT_TIMEOUT_S):
            pass
    except OSError as e:
        raise WorkerError(f"cannot reach the Ray cluster at {address}: {e.strerror or e}") from None
