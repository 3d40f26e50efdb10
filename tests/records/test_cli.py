"""`abluxx verify`, `abluxx export` and `abluxx replay`, run as a user runs them."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format

from referee.cli import main
from referee.engine import Options
from referee.proto.abluxxen.v1 import record_pb2 as rpb
from referee.records import read_record, record_bytes, record_path, record_selfplay

from .helpers import SECRET_DETAIL, faulty_record

NAMES = ("ann", "bob", "cyd")


@pytest.fixture
def data(tmp_path) -> Path:
    """A data folder (named like the default one) with two records: "faulty" (faults, a retired seat) and
    "clean" (draw_one)."""
    folder = tmp_path / "abluxx-data"
    faulty_record(names=NAMES, path=record_path(folder, "faulty"))
    record_selfplay(8, list(NAMES), Options(draw_one=True), game_id="clean", path=record_path(folder, "clean"))
    return folder


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_a_good_record_by_game_id_and_by_path(capsys, data) -> None:
    record = read_record(record_path(data, "faulty"))
    code, out, _ = run(capsys, "verify", "faulty", "--data", str(data))
    assert code == 0
    assert out == f"ok: faulty {len(record.decisions)} decisions, digest {record.footer.final_digest}\n"
    code, out, _ = run(capsys, "verify", str(record_path(data, "clean")))
    assert code == 0 and out.startswith("ok: clean ")


def test_verify_names_the_first_mismatch(capsys, data, tmp_path) -> None:
    record = read_record(record_path(data, "clean"))
    record.decisions[6].events[0].Clear()
    bad = tmp_path / "bad.abluxx"
    bad.write_bytes(record_bytes(record))
    code, out, _ = run(capsys, "verify", str(bad))
    assert code == 1
    assert re.fullmatch(r"mismatch: clean: decision 7 \(seat \d\): event 1 differs: the record has the message \{\}, "
                        r"the engine produced '.*'\n", out), out  # fmt: skip


def test_verify_refuses_what_is_not_a_record(capsys, data, tmp_path) -> None:
    code, _, err = run(capsys, "verify", "nosuchgame", "--data", str(data))
    assert code == 2 and "no record 'nosuchgame'" in err
    junk = tmp_path / "junk.abluxx"
    junk.write_bytes(b"PK\x03\x04 a zip file")
    code, _, err = run(capsys, "verify", str(junk))
    assert code == 2 and "not an Abluxxen game record" in err
    cut = tmp_path / "cut.abluxx"
    cut.write_bytes(record_path(data, "clean").read_bytes()[:-5])
    code, out, _ = run(capsys, "verify", str(cut))
    assert code == 1 and "incomplete record" in out


def test_export_gives_json_that_round_trips(capsys, data) -> None:
    code, out, _ = run(capsys, "export", "faulty", "--data", str(data), "--json")
    assert code == 0
    as_dict = json.loads(out)
    assert as_dict["complete"] is True and as_dict["header"]["game_id"] == "faulty"
    assert any(d.get("fault") == "FAULT_KIND_DISCONNECTED" for d in as_dict["decisions"])
    back = json_format.Parse(out, rpb.GameRecord())
    assert back == read_record(record_path(data, "faulty"))


def _final_block(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("result: "))
    return lines[start + 1 :]


def test_replay_tells_the_game_and_its_final_scores(capsys, data) -> None:
    record = read_record(record_path(data, "faulty"))
    code, out, _ = run(capsys, "replay", "faulty", "--data", str(data))
    assert code == 0
    final = _final_block(out)
    scores = {NAMES.index(m[1]): int(m[2]) for m in (re.search(r"place \d: (\w+)  score ([+-]\d+)", x) for x in final)}
    assert scores == dict(enumerate(record.footer.scores))
    assert "(retired)" in next(x for x in final if "cyd" in x)
    assert "  ! cyd retires" in out
    assert f"  ! bob fault, invalid: {SECRET_DETAIL}; the fallback chose" in out
    assert re.search(r"cyd .* \[fallback\]", out)  # the fallback's moves for the retired seat are marked
    turns = max(d.events[-1].turn_started.turn for d in record.decisions if d.events[-1].HasField("turn_started"))
    assert f"turn {turns}: " in out


def _hand_lines(out: str) -> list[str]:
    return [x.strip() for x in out.splitlines() if " hand: " in x]


def _pile_draws(out: str) -> list[tuple[str, str]]:
    return re.findall(r"(\w+) draws (a card|\w+) from the pile", out)


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_replay_for_a_seat_shows_only_what_that_seat_saw(capsys, data, seat) -> None:
    _, full, _ = run(capsys, "replay", "faulty", "--data", str(data))
    code, out, _ = run(capsys, "replay", "faulty", "--data", str(data), "--seat", str(seat))
    assert code == 0
    me = NAMES[seat]
    # The full view shows every hand and every card drawn from the pile; the seat's view only its own.
    assert {x.split()[0] for x in _hand_lines(full)} == set(NAMES)
    assert {x.split()[0] for x in _hand_lines(out)} == {me}
    assert all(card != "a card" for _, card in _pile_draws(full))
    others = [(who, card) for who, card in _pile_draws(out) if who != me]
    assert others and all(card == "a card" for _, card in others)
    assert [(w, c) for w, c in _pile_draws(out) if w == me] == [(w, c) for w, c in _pile_draws(full) if w == me]
    assert (SECRET_DETAIL in out) == (me == "bob")  # a fault's detail can describe a hand
    assert _final_block(out) == _final_block(full)


def test_replay_public_view_shows_no_hand(capsys, data) -> None:
    code, out, _ = run(capsys, "replay", "clean", "--data", str(data), "--public")
    assert code == 0
    assert _hand_lines(out) == []
    assert all(card == "a card" for _, card in _pile_draws(out))
    assert "view: public" in out and "result: " in out


def test_replay_step_waits_between_turns_and_q_quits(capsys, data, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n\nq\n"))
    code, out, _ = run(capsys, "replay", "clean", "--data", str(data), "--step")
    assert code == 0
    assert "turn 3: " in out and "turn 4: " not in out
    assert out.count("-- Enter: next turn, q: quit --") == 3
    assert "result: " not in out


def test_replay_refuses_a_seat_the_game_lacks(capsys, data) -> None:
    code, _, err = run(capsys, "replay", "clean", "--data", str(data), "--seat", "3")
    assert code == 2 and "seat 3 is not a seat of this 3-player game" in err


def test_replay_takes_a_seat_by_its_entrant_name(capsys, data) -> None:
    """A ladder seats a bot differently every game: its author names it, not its seat."""
    _, by_number, _ = run(capsys, "replay", "faulty", "--data", str(data), "--seat", "1")
    code, by_name, _ = run(capsys, "replay", "faulty", "--data", str(data), "--seat", "bob")
    assert code == 0 and by_name == by_number
    assert {x.split()[0] for x in _hand_lines(by_name)} == {"bob"}


def test_replay_refuses_a_name_no_seat_has_and_lists_the_seats(capsys, data) -> None:
    code, _, err = run(capsys, "replay", "clean", "--data", str(data), "--seat", "cppbot.v5")
    assert code == 2
    assert "--seat 'cppbot.v5' is no seat's number or entrant; the seats are 0 (ann), 1 (bob), 2 (cyd)" in err


def test_a_seat_is_found_by_a_ladder_entrants_name_with_or_without_its_version() -> None:
    from referee.records.text import seat_of

    h = rpb.RecordHeader(players=[rpb.PlayerRecord(name=n) for n in ("greedy", "cppbot.v5", "cppbot-old.v2")])
    assert [seat_of(h, w) for w in ("cppbot.v5", "cppbot", "1", "cppbot-old")] == [1, 1, 1, 2]
    with pytest.raises(ValueError, match=re.escape("the seats are 0 (greedy), 1 (cppbot.v5), 2 (cppbot-old.v2)")):
        seat_of(h, "cpp")


def test_the_installed_command_verifies(data) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())", "verify", "faulty"],
        cwd=data.parent,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: faulty ")


def test_verify_takes_many_records_and_folders_with_a_summary(capsys, data, tmp_path) -> None:
    """Records in bulk: every one named, in order, on worker processes, then one summary line; any mismatch fails
    the whole call."""
    folder = data / "records"
    code, out, _ = run(capsys, "verify", str(folder), "--jobs", "2")
    assert code == 0, out
    assert out.splitlines() == [
        *[f"ok: {g} {len(read_record(record_path(data, g)).decisions)} decisions, digest "
          f"{read_record(record_path(data, g)).footer.final_digest}" for g in ("clean", "faulty")],
        "2 records: 2 ok, 0 mismatch, 0 not yet, 0 unreadable (all verify)",
    ]  # fmt: skip
    record = read_record(record_path(data, "clean"))
    record.decisions[6].events[0].Clear()
    bad = tmp_path / "more" / "bad.abluxx"
    bad.parent.mkdir()
    bad.write_bytes(record_bytes(record))
    code, out, _ = run(capsys, "verify", "faulty", str(bad.parent), str(folder), "--data", str(data), "-j", "2")
    lines = out.splitlines()
    assert code == 1, out
    assert [x.split(":")[0] for x in lines[:-1]] == ["ok", "mismatch", "ok", "ok"]
    assert lines[1].startswith("mismatch: clean: decision 7")
    assert lines[-1] == "4 records: 3 ok, 1 mismatch, 0 not yet, 0 unreadable"
    junk = tmp_path / "more" / "junk.abluxx"
    junk.write_bytes(b"PK\x03\x04 a zip file")
    code, out, _ = run(capsys, "verify", str(bad.parent), "faulty", "--data", str(data))
    assert code == 2 and "unreadable: " in out
    assert out.splitlines()[-1] == "3 records: 1 ok, 1 mismatch, 0 not yet, 1 unreadable"
    code, _, err = run(capsys, "verify", str(folder), "--jobs", "0")
    assert code == 2 and "--jobs must be 1 to" in err


def test_verify_export_replay_and_view_take_the_json_export(capsys, data, tmp_path) -> None:
    code, out, _ = run(capsys, "export", "faulty", "--data", str(data))
    exported = tmp_path / "faulty.json"
    exported.write_text(out)
    code, out, _ = run(capsys, "verify", str(exported))
    assert code == 0 and out.startswith("ok: faulty "), out
    code, again, _ = run(capsys, "export", str(exported))
    assert code == 0 and json.loads(again) == json.loads(exported.read_text())
    code, told, _ = run(capsys, "replay", str(exported))
    assert (code == 0 and "faulty" in told) or "ann" in told
    (tmp_path / "broken.json").write_text('{"header": 3}')
    code, _, err = run(capsys, "verify", str(tmp_path / "broken.json"))
    assert code == 2 and "not a GameRecord in JSON" in err
