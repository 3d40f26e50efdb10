"""`abluxx match` and the records it writes."""

from __future__ import annotations

from referee.cli import main


def test_match_refuses_a_game_id_whose_record_exists(tmp_path, capsys):
    args = ["match", "greedy", "counter", "--data", str(tmp_path), "--game-id", "mine"]
    assert main([*args, "--seed", "1"]) == 0
    record = tmp_path / "records" / "mine.abluxx"
    before = record.read_bytes()
    capsys.readouterr()
    assert main([*args, "--seed", "2"]) == 2
    err = capsys.readouterr().err
    assert "mine" in err and "exists" in err
    assert record.read_bytes() == before  # the first game's record is kept
