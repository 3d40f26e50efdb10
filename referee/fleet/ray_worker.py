"""The Ray backend (docs/scale.md): each worker is an async Ray actor, one event loop, running a GameWorker.

Imported only when ``--backend ray`` is asked for, since Ray is an optional extra (``pip install -e ".[ray]"``).
Every node of a cluster needs the referee installed in the Python its Ray workers run. A game's decisions stream
back to the coordinator as they are made (a Ray generator) when a spectator wants them; otherwise one reply
carries the result and the record's bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import NodeDiedError, ObjectLostError, RayActorError, WorkerCrashedError

from referee.errors import SeatsAbsent
from referee.gc_policy import tune_gc
from referee.log import configure, get_logger, json_lines
from referee.match.spec import GameResult, GameSpec

from . import ray_private
from .errors import EntrantError, FleetError, WorkerError, WorkerLost
from .lineup import Lineup
from .ray_private import PrivateRoot
from .settings import WorkerSettings, check_ray_address
from .worker import GameWorker

# What a dead actor, its worker process or its node looks like to the caller.
_LOST = (RayActorError, ObjectLostError, NodeDiedError, WorkerCrashedError)


@ray.remote(num_cpus=1)  # one actor per core: Ray spreads them over a cluster's nodes
class GameActor:
    def __init__(self, lineup: Lineup, log_dir: str, prefix: str, json_logs: bool) -> None:
        configure(json=json_logs)
        tune_gc()
        self.worker = GameWorker(lineup, Path(log_dir), prefix)

    def pid(self) -> int:
        return os.getpid()

    async def open(self) -> str | None:
        """Start the command entrants and check every entrant: None, or why one cannot take part."""
        try:
            await self.worker.open()
        except EntrantError as e:
            return str(e)
        return None

    async def close(self) -> list[Any]:
        """Stop the command bots; their processes that ended mid-run (bots.Crash), for the run's summary."""
        await self.worker.close()
        return self.worker.crashes()

    async def play(self, spec: GameSpec, want: bool) -> AsyncIterator[tuple[Any, ...]]:
        """("decision", bytes) for each decision when ``want``, then ("done", result, record), ("absent", who) or
        ("failed", why)."""
        decisions: asyncio.Queue[bytes] = asyncio.Queue()
        game = asyncio.ensure_future(self.worker.play(spec, decisions.put_nowait if want else None))
        try:
            while not game.done():
                waiting = asyncio.ensure_future(decisions.get())
                await asyncio.wait({waiting, game}, return_when=asyncio.FIRST_COMPLETED)
                if waiting.done():
                    yield ("decision", waiting.result())
                else:
                    waiting.cancel()
            while not decisions.empty():
                yield ("decision", decisions.get_nowait())
            if isinstance(e := game.exception(), SeatsAbsent):
                yield ("absent", e.absent)
                return
            if e is not None:
                yield ("failed", repr(e))
                return
            result, record = game.result()
            yield ("done", result, record)
        finally:
            game.cancel()


class RayWorker:
    """The coordinator's handle on one GameActor."""

    def __init__(self, name: str, actor: Any) -> None:
        self.name = name
        self.actor = actor
        self.load = 0
        self.crashes: list[Any] = []  # its command bots' crashes (bots.Crash), told as it closes

    async def play(self, spec: GameSpec, on_decision: Any) -> tuple[GameResult, bytes]:
        self.load += 1
        try:
            async for ref in self.actor.play.remote(spec, on_decision is not None):
                message = await ref
                if message[0] == "decision":
                    on_decision(message[1])
                elif message[0] == "done":
                    return message[1], message[2]
                elif message[0] == "absent":
                    raise SeatsAbsent(message[1])
                else:
                    raise FleetError(f"failed in worker {self.name}: {message[1]}")
        except _LOST as e:
            raise WorkerLost(f"Ray actor {self.name} died: {type(e).__name__}") from None
        finally:
            self.load -= 1
        raise WorkerLost(f"Ray actor {self.name} ended a game without its result")

    async def close(self) -> None:
        with contextlib.suppress(*_LOST):
            async with asyncio.timeout(30):
                self.crashes = await self.actor.close.remote()
        ray.kill(self.actor)


async def start(lineup: Lineup, log_dir: Path, prefix: str) -> RayWorker:
    actor = GameActor.options(name=None).remote(lineup, str(log_dir), prefix, json_lines())  # type: ignore[attr-defined]
    worker = RayWorker(prefix, actor)
    try:
        problem = await actor.open.remote()
    except _LOST as e:
        ray.kill(actor)
        raise WorkerError(f"Ray actor {prefix} died at start: {type(e).__name__}") from None
    if problem is not None:
        ray.kill(actor)
        raise EntrantError(f"worker {prefix}: {problem}")
    return worker


_users = 0  # pools using the Ray this process joined; the last one out shuts it down
_owned = False  # whether this process called ray.init (a test or a driver script may have done so itself)
_root: PrivateRoot | None = None  # the local Ray's private temp root, while it runs
_lock = threading.Lock()  # connect and disconnect run in threads, off the event loop


def connect(settings: WorkerSettings) -> None:
    """Join the cluster at ``settings.ray_address``, or start a local Ray sized to the machine with the node
    address 127.0.0.1 (once per process: the service's tournaments share it), as private as Ray allows
    (ray_private.py)."""
    global _users, _owned, _root
    with _lock:
        if not ray.is_initialized():
            # ERROR: Ray's warnings here are for its own drivers (no SIGTERM handler off the main thread: the
            # referee handles its signals itself)
            quiet: dict[str, Any] = {"logging_level": logging.ERROR}
            ray_private.quiet()
            ray_private.tighten_default_token()
            if settings.ray_address:
                check_ray_address(settings.ray_address)
                try:
                    ray.init(address=settings.ray_address, **quiet)
                except (ConnectionError, RuntimeError, ValueError) as e:
                    raise WorkerError(f"cannot join the Ray cluster at {settings.ray_address}: {e}") from None
            else:
                _root = _start_local(max(os.cpu_count() or 1, settings.count), quiet)
            _owned = True
        _users += 1


# A local Ray's start: Ray waits 30 s for its GCS server to write its port, and 30 s (fixed) for its raylet to
# register, which a loaded machine has been seen to miss, each (docs/scale.md "Ray"); the port wait is longer unless
# the user set it, and a start that fails is tried again from nothing, after its processes are killed. Not longer
# than 60 s: in a loaded run a Ray test of 4.5 s took 128 s, which fits a first try that used all of a 120 s wait and
# a second that started at once.
GCS_PORT_WAIT = "RAY_gcs_server_port_wait_time_s"
GCS_PORT_WAIT_S = 60
LOCAL_START_ATTEMPTS = 3


def _start_local(cpus: int, quiet: dict[str, Any]) -> PrivateRoot:
    """Start a local Ray in a fresh private root, up to LOCAL_START_ATTEMPTS times; the root it runs in."""
    os.environ.setdefault(GCS_PORT_WAIT, str(GCS_PORT_WAIT_S))
    why = ""
    for _ in range(LOCAL_START_ATTEMPTS):
        root = PrivateRoot()
        try:
            with root.starting():
                ray.init(num_cpus=cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
                         _temp_dir=str(root.temp_dir), **quiet)  # fmt: skip
            return root
        except Exception as e:  # Ray's own start failures: RuntimeError (a port file not written in time, a process
            # gone), or a bare Exception (Ray 2.60's raylet not registered within its fixed 30 s)
            why = f"{e}{_gcs_log_tail(root)}"
            _abandon(root)
            get_logger().warning("the local Ray did not start", error=why)
        except BaseException:
            _abandon(root)
            raise
    raise WorkerError(f"the local Ray did not start ({LOCAL_START_ATTEMPTS} attempts); the last: {why}")


def _gcs_log_tail(root: PrivateRoot, chars: int = 600) -> str:
    """The end of the GCS server's logs in ``root``, for the error a failed start gives."""
    logs = root.temp_dir / "session_latest" / "logs"
    tails = []
    for name in ("gcs_server.err", "gcs_server.out"):
        with contextlib.suppress(OSError):
            text = (logs / name).read_text(errors="replace").strip()
            if text:
                tails.append(f"\n{name}: ...{text[-chars:]}")
    return "".join(tails)


def _abandon(root: PrivateRoot) -> None:
    """After a failed start: Ray's driver state reset, and every process Ray started in ``root`` killed (their
    command lines name it), then the root removed."""
    with contextlib.suppress(Exception):
        ray.shutdown()
    root.kill_processes()
    root.close()


def disconnect() -> None:
    global _users, _owned, _root
    with _lock:
        _users -= 1
        if _users == 0 and _owned:
            ray.shutdown()
            _owned = False
            if _root is not None:
                _root.close()
                _root = None
