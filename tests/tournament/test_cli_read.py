"""Read-only commands on a data folder that holds no tournament."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.cli import main
from referee.tournament.config import load

from .helpers import config_text


@pytest.mark.parametrize("command", ["standings", "games"])
def test_reading_a_mistyped_data_folder_says_so_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture, command: str
) -> None:
    data = tmp_path / "no-such-data"
    assert main([command, "--data", str(data)]) == 1
    assert f"no abluxx data in {data}" in capsys.readouterr().err
    assert not data.exists()


def _tournament(tmp_path: Path, data: Path, name: str, seed: int) -> str:
    cfg = tmp_path / f"{name}-{seed}.toml"
    cfg.write_text(config_text(["rnd", "greedy"], name=name, seed=seed, deals=1))
    assert main(["tournament", "run", str(cfg), "--data", str(data), "--no-progress"]) == 0
    return load(cfg).tournament_id


def test_a_tournament_is_found_by_id_by_unique_name_or_as_the_latest(tmp_path: Path, capsys) -> None:
    data = tmp_path / "d"
    alpha = _tournament(tmp_path, data, "alpha", 1)
    beta1 = _tournament(tmp_path, data, "beta", 1)
    beta2 = _tournament(tmp_path, data, "beta", 2)
    capsys.readouterr()
    for command in ("standings", "games"):
        for wanted, tid in (("alpha", alpha), (alpha, alpha), (beta1, beta1), (None, beta2)):
            assert main([command, *([wanted] if wanted else []), "--data", str(data)]) == 0
            assert tid in capsys.readouterr().out, (command, wanted)
        # two tournaments share the name beta: the name alone cannot say which, so the ids are listed
        assert main([command, "beta", "--data", str(data)]) == 1
        err = capsys.readouterr().err
        assert "2 tournaments are named 'beta'" in err and beta1 in err and beta2 in err
        assert main([command, "gamma", "--data", str(data)]) == 1
        assert "no tournament 'gamma'" in capsys.readouterr().err
    report = tmp_path / "r.html"
    assert main(["report", "alpha", "--data", str(data), "-o", str(report)]) == 0
    assert alpha in report.read_text()
    assert main(["report", "beta", "--data", str(data), "-o", str(report)]) == 1
    assert main(["report", "gamma", "--data", str(data), "-o", str(report)]) == 1
