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


def test_the_gopath_section_generates_the_package_where_it_says(tmp_path):
    """docs/other-languages.md's GOPATH-mode protoc line puts package abluxxenv1 in $HOME/go/src/abluxxen/v1, the
    folder the section says a bot imports as "abluxxen/v1"."""
    missing = [p for p in TOOLS["go"] if shutil.which(p) is None]
    if missing:
        why = f"{', '.join(missing)} not on the PATH (Debian: {DEBIAN})"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    doc = (ROOT / "docs" / "other-languages.md").read_text()
    section = doc.split("## Go from Debian's packages", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S).group(1)
    for package in ("golang-google-grpc-dev", "golang-google-protobuf-dev", "golang-github-golang-protobuf-1-5-dev"):
        assert package in block
    assert "GO111MODULE=off" in block
    line = next(x for x in block.splitlines() if x.startswith("protoc "))
    (tmp_path / "proto").symlink_to(ROOT / "proto")
    home = tmp_path / "home"
    (home / "go" / "src").mkdir(parents=True)
    done = subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(home)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    package = home / "go" / "src" / "abluxxen" / "v1"
    assert sorted(p.name for p in package.iterdir()) == ["bot.pb.go", "bot_grpc.pb.go", "game.pb.go"]
    assert all("package abluxxenv1" in p.read_text() for p in package.iterdir())
    served = (package / "bot_grpc.pb.go").read_text()
    assert "func RegisterBotServer(" in served and "type UnimplementedBotServer struct" in served
