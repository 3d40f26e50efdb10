"""Read-only commands on a data folder that holds no tournament."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.cli import main


@pytest.mark.parametrize("command", ["standings", "games"])
def test_reading_a_mistyped_data_folder_says_so_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture, command: str
) -> None:
    data = tmp_path / "no-such-data"
    assert main([command, "--data", str(data)]) == 1
    assert f"no abluxx data in {data}" in capsys.readouterr().err
    assert not data.exists()
