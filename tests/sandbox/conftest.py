"""The sandbox's tests need bubblewrap and unprivileged namespaces: without them they skip, saying what is missing,
except under CI=true (``.ci/run`` installs bubblewrap), where they run and fail."""

from __future__ import annotations

import os

import pytest

from referee.fleet import sandbox


def needs_sandbox() -> pytest.MarkDecorator:
    why = sandbox.problem()
    return pytest.mark.skipif(why is not None and os.environ.get("CI") != "true", reason=f"no sandbox here: {why}")
