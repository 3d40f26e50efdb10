"""A local Ray started by the fleet is as private as Ray 2.60 allows (docs/security.md): usage stats off, its temp
root a fresh 0700 folder whose files are owner-only, its auth token a 0600 file of ours there (no
~/.ray/auth_token written, and an existing one that others could read made 0600), all gone once the fleet leaves.
A real local Ray, started by the fleet's own ``connect``."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from referee.fleet import WorkerSettings

if os.environ.get("CI") == "true":
    import ray  # under CI a missing Ray is a failure, not a skip
else:
    ray = pytest.importorskip("ray", reason='Ray is an optional extra: pip install -e ".[ray]"')


def test_a_local_ray_is_private_and_reports_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ray._common.usage import usage_lib

    from referee.fleet import ray_private, ray_worker

    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    old_token = home / ".ray" / "auth_token"
    old_token.write_text("a cluster's token")
    old_token.chmod(0o644)
    monkeypatch.setenv("HOME", str(home))
    for name in (ray_private.USAGE_STATS, ray_private.AUTH_TOKEN, ray_private.AUTH_TOKEN_PATH, "RAY_AUTH_MODE"):
        monkeypatch.delenv(name, raising=False)
    assert not ray.is_initialized()
    ray_worker.connect(WorkerSettings("ray", 1))
    try:
        root = ray_worker._root
        assert root is not None and root.path.parent == Path(tempfile.gettempdir())
        assert stat.S_IMODE(root.path.stat().st_mode) == 0o700  # nobody else enters the root
        sessions = [p for p in root.temp_dir.iterdir() if p.name.startswith("session_") and not p.is_symlink()]
        assert sessions, list(root.temp_dir.iterdir())  # Ray's session is inside it
        logs = [p for p in (sessions[0] / "logs").iterdir() if p.is_file()]
        assert logs and all(not stat.S_IMODE(p.stat().st_mode) & 0o077 for p in logs)  # 0600, not 0644
        token = Path(os.environ[ray_private.AUTH_TOKEN_PATH])
        assert token.parent == root.path and stat.S_IMODE(token.stat().st_mode) == 0o600
        assert len(token.read_text()) == 64
        assert os.environ[ray_private.USAGE_STATS] == "0" and not usage_lib.usage_stats_enabled()
        assert stat.S_IMODE(old_token.stat().st_mode) == 0o600 and old_token.read_text() == "a cluster's token"

        @ray.remote
        def where() -> str:
            return os.environ.get(ray_private.AUTH_TOKEN_PATH, "")

        assert ray.get(where.remote()) == str(token)  # Ray's workers authenticate with our token
    finally:
        ray_worker.disconnect()
    assert not ray.is_initialized() and not root.path.exists()
    assert ray_private.AUTH_TOKEN_PATH not in os.environ
    assert sorted(p.name for p in (home / ".ray").iterdir()) == ["auth_token"]  # Ray wrote no token of its own
