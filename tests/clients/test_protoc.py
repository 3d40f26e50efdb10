"""The protoc lines of docs/writing-a-bot.md ("In any language") generate a C++ and a Go bot's code.

protoc and the plugins are Debian's (.ci/run installs them). Without one of them the test skips, saying what to
install; with CI=true it fails instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"cpp": ["protoc", "grpc_cpp_plugin"], "go": ["protoc", "protoc-gen-go", "protoc-gen-go-grpc"]}
DEBIAN = "protobuf-compiler protobuf-compiler-grpc protoc-gen-go protoc-gen-go-grpc"  # as .ci/run installs
EXPECTED = {
    "cpp": {"bot.pb.h": "class DecisionReply", "bot.pb.cc": "", "game.pb.h": "class SeatView",
            "bot.grpc.pb.h": "class Service", "bot.grpc.pb.cc": ""},
    "go": {"bot.pb.go": "package abluxxenv1", "game.pb.go": "type SeatView struct", "bot_grpc.pb.go": "BotServer"},
}  # fmt: skip


def doc_lines() -> dict[str, str]:
    doc = (ROOT / "docs" / "writing-a-bot.md").read_text()
    section = doc.split("## In any language", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S).group(1)
    lines = [line for line in block.splitlines() if line.startswith("protoc ")]
    return {"cpp": next(x for x in lines if "--cpp_out" in x), "go": next(x for x in lines if "--go_out" in x)}


@pytest.mark.parametrize("language", ["cpp", "go"])
def test_the_documented_protoc_line_generates_the_bot_service(language, tmp_path):
    missing = [p for p in TOOLS[language] if shutil.which(p) is None]
    if missing:
        why = f"{', '.join(missing)} not on the PATH (Debian: {DEBIAN})"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    (tmp_path / "proto").symlink_to(ROOT / "proto")
    (tmp_path / "gen").mkdir()
    # word for word, in a shell, as a reader would paste it
    done = subprocess.run(["bash", "-c", doc_lines()[language]], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = tmp_path / "gen" / "abluxxen" / "v1"
    for name, holds in EXPECTED[language].items():
        assert (out / name).is_file(), f"{name} not generated: {sorted(p.name for p in out.glob('*'))}"
        assert holds in (out / name).read_text()
