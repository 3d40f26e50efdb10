"""A bot whose Hello reply does not decode (garbage, a string that is not UTF-8, a field that runs past the end) is
refused by name with the reason, before any game: `abluxx match` exits 1 and the tournament's start-up check
refuses it; neither dies with a traceback (issue 20 item 3: AttributeError on a None reply in ask_hello)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.service.helpers import ABLUXX, start_bot

MODES = ["hello-garbage", "hello-utf8", "hello-nested"]


@pytest.mark.parametrize("mode", MODES)
def test_match_refuses_a_bot_whose_hello_does_not_decode(tmp_path: Path, mode: str) -> None:
    bot = start_bot(f"bad:{mode}")
    try:
        out = subprocess.run([*ABLUXX, "match", bot.address, "greedy", "--data", str(tmp_path / "d")],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    finally:
        bot.stop()
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr and "AttributeError" not in out.stderr
    assert bot.address in out.stderr and "do not decode" in out.stderr, out.stderr


@pytest.mark.parametrize("mode", MODES)
def test_a_tournament_does_not_start_with_a_bot_whose_hello_does_not_decode(tmp_path: Path, mode: str) -> None:
    bot = start_bot(f"bad:{mode}")
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'name = "bh"\ntable_size = 2\n[[entrants]]\nname = "liar"\naddress = "{bot.address}"\n'
                   '[[entrants]]\nname = "g"\npolicy = "greedy"\n')  # fmt: skip
    try:
        out = subprocess.run([*ABLUXX, "tournament", "run", str(cfg), "--data", str(tmp_path / "d"), "--no-progress"],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path)  # fmt: skip
    finally:
        bot.stop()
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr and "AttributeError" not in out.stderr
    assert "liar" in out.stderr and "do not decode" in out.stderr and "did not start" in out.stderr, out.stderr
