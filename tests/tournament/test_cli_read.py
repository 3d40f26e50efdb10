"""Read-only commands on a data folder that holds no tournament."""

from __future__ import annotations

import json
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


def test_resuming_a_mistyped_tournament_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = tmp_path / "abluxx-data"
    assert main(["tournament", "resume", "nosuch", "--data", str(data)]) == 1
    assert f"no abluxx data in {data}" in capsys.readouterr().err
    assert not data.exists()
    _tournament(tmp_path, data, "alpha", 1)
    capsys.readouterr()
    assert main(["tournament", "resume", "nosuch", "--data", str(data)]) == 1
    assert "no tournament 'nosuch'" in capsys.readouterr().err


def test_the_games_log_has_a_line_per_finished_game(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text(config_text(["rnd", "greedy", "counter"], name="log", seed=3, deals=2, table_size=2))
    data = tmp_path / "d"
    assert main(["tournament", "run", str(cfg), "--data", str(data), "--no-progress", "--games-log"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("finished game ")]
    assert main(["games", "--json", "--data", str(data)]) == 0
    games = {g["game_id"]: g for g in map(json.loads, capsys.readouterr().out.splitlines())}
    assert len(lines) == len(games) == 6
    assert [x.split()[2] for x in lines] == [f"{i}/6" for i in range(1, 7)]
    for line in lines:
        game = games[line.split()[3].rstrip(":")]
        best = sorted(game["seats"], key=lambda s: s["place"])
        assert line.endswith(": " + "  ".join(f"{s['place']}. {s['entrant']} {s['score']:+d}" for s in best))
    assert main(["tournament", "run", str(cfg), "--data", str(tmp_path / "e"), "--no-progress"]) == 0
    assert "finished game" not in capsys.readouterr().out  # only when asked


def test_games_lists_the_latest_first_as_the_site_does_and_the_schedule_order_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text(config_text(["rnd", "greedy", "counter"], name="order", seed=3, deals=2, table_size=2))
    data = tmp_path / "d"
    assert main(["tournament", "run", str(cfg), "--data", str(data), "--no-progress"]) == 0
    capsys.readouterr()
    slots = {}
    for flags in ([], ["--oldest-first"]):
        assert main(["games", "--json", "--data", str(data), *flags]) == 0
        slots[bool(flags)] = [json.loads(x)["slot"] for x in capsys.readouterr().out.splitlines()]
    assert slots[True] == sorted(slots[True]) and len(slots[True]) == 6
    assert slots[False] == slots[True][::-1]


def test_games_marks_faults_and_retirements_in_text_as_json_has_them(tmp_path: Path, capsys) -> None:
    from tests.match.helpers import bot_process

    with bot_process("--mode", "out-of-range", "--bad-count", "1", "--after", "1") as faulty:
        cfg = tmp_path / "t.toml"
        cfg.write_text(config_text(["rnd", "greedy"], name="marks", seed=1, deals=1, table_size=3)
                       + f'[[entrants]]\nname = "oor"\naddress = "{faulty}"\n')  # fmt: skip
        data = tmp_path / "d"
        assert main(["tournament", "run", str(cfg), "--data", str(data), "--no-progress", "--games-log"]) == 0
    finished = [x for x in capsys.readouterr().out.splitlines() if x.startswith("finished game")]
    assert main(["games", "--data", str(data)]) == 0
    listed = capsys.readouterr().out.splitlines()[:-1]
    assert len(listed) == len(finished) == 3  # one table of 3, its seat rotations; the bot faults once in all
    marked = [x for x in listed if x.split()[2] == "!"]
    assert len(marked) == 1 and "oor" in marked[0] and " (invalid 1)" in marked[0], listed
    assert [" (invalid 1)" in x for x in finished].count(True) == 1
