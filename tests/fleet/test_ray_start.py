"""A local Ray whose start fails (its GCS server does not write its port in time, as a loaded CI machine once saw)
is started again from nothing, and a start that keeps failing says why and leaves no Ray process or folder behind.
A real local Ray, started by the fleet's own ``connect``; the failure is Ray's own, made by a port wait of 0 s."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from referee.fleet import WorkerError, WorkerSettings

if os.environ.get("CI") == "true":
    import ray  # under CI a missing Ray is a failure, not a skip
else:
    ray = pytest.importorskip("ray", reason='Ray is an optional extra: pip install -e ".[ray]"')

# after the guard: ray_worker imports Ray
from referee.fleet import ray_private, ray_worker


def _processes_naming(path: Path) -> list[str]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if str(path).encode() in cmdline:
                found.append(cmdline.replace(b"\0", b" ").decode(errors="replace")[:120])
    return found


@pytest.fixture
def roots(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The private roots the fleet makes, in order."""
    made: list[Path] = []
    real_init = ray_private.PrivateRoot.__init__

    def init(self: ray_private.PrivateRoot) -> None:
        real_init(self)
        made.append(self.path)

    monkeypatch.setattr(ray_private.PrivateRoot, "__init__", init)
    return made


@pytest.mark.usefixtures("every_log_level")
def test_a_start_that_fails_once_is_made_again_from_nothing(roots: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    real_init = ray.init
    waits: list[str] = []

    def init(*args: Any, **kwargs: Any) -> Any:
        # the first start gets no time at all for the GCS port (Ray's own failure); the second the fleet's wait
        os.environ[ray_worker.GCS_PORT_WAIT] = "0" if not waits else str(ray_worker.GCS_PORT_WAIT_S)
        waits.append(os.environ[ray_worker.GCS_PORT_WAIT])
        return real_init(*args, **kwargs)

    monkeypatch.delenv(ray_worker.GCS_PORT_WAIT, raising=False)
    monkeypatch.setattr(ray, "init", init)
    assert not ray.is_initialized()
    with capture_logs() as logs:
        ray_worker.connect(WorkerSettings("ray", 1))
    try:
        failed = [e["error"] for e in logs if e["event"] == "the local Ray did not start"]
        assert failed and "gcs_server_port" in failed[0], logs  # the first try's failure, logged
        # the next try waits the fleet's 60 s; on a loaded machine Ray's own fixed raylet wait may fail it too (the
        # test below), and the third try starts
        assert waits[0] == "0" and waits[1:] == [str(ray_worker.GCS_PORT_WAIT_S)] * (len(waits) - 1)
        assert ray.is_initialized() and len(roots) == len(waits) == len(failed) + 1
        assert ray_worker._root is not None and ray_worker._root.path == roots[-1]
        for root in roots[:-1]:
            assert not root.exists() and _processes_naming(root) == []  # a failed start left nothing
        assert ray.get(ray.put(7)) == 7  # the Ray that started works
    finally:
        ray_worker.disconnect()
    assert not ray.is_initialized() and not roots[-1].exists()


@pytest.mark.usefixtures("every_log_level")
def test_a_start_whose_raylet_does_not_register_in_time_is_made_again(
    roots: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray 2.60 gives its raylet a fixed 30 s to register with the GCS and then raises a bare Exception, not a
    RuntimeError: a loaded machine saw it. The first start here fails so, before it starts anything; the next is
    real."""
    real_init = ray.init
    calls = []

    def init(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["_temp_dir"])
        if len(calls) == 1:
            raise Exception("The current node timed out during startup.")  # Ray's own words and type
        return real_init(*args, **kwargs)

    monkeypatch.setattr(ray, "init", init)
    with capture_logs() as logs:
        ray_worker.connect(WorkerSettings("ray", 1))
    try:
        failed = [e["error"] for e in logs if e["event"] == "the local Ray did not start"]
        assert failed[0].startswith("The current node timed out during startup."), logs
        assert ray.is_initialized() and len(roots) >= 2 and not roots[0].exists()
        assert ray.get(ray.put(7)) == 7
    finally:
        ray_worker.disconnect()


def test_a_start_that_keeps_failing_says_why_and_leaves_nothing(
    roots: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ray_worker.GCS_PORT_WAIT, "0")  # the user's own setting wins over the fleet's 60 s
    with pytest.raises(WorkerError, match=r"^the local Ray did not start \(3 attempts\); the last: .*gcs_server_port"):
        ray_worker.connect(WorkerSettings("ray", 1))
    assert not ray.is_initialized() and ray_worker._users == 0
    assert len(roots) == 3
    for root in roots:
        assert not root.exists() and _processes_naming(root) == []
