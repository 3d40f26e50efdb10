from pathlib import Path

import pytest

from referee.tournament.config import ConfigError, load

GOOD = """
name = "spring"
seed = 7
table_size = 3
deals = 2
concurrency = 4

[options]
draw_one = true

[time_control]
decision_ms = 200

[[entrants]]
name = "alice"
address = "127.0.0.1:50051"

[[entrants]]
name = "bob"
command = "abluxx bot greedy --port 0"

[[entrants]]
name = "carol"
command = ["abluxx", "bot", "counter", "--port", "0"]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "t.toml"
    p.write_text(text)
    return p


def test_a_good_config_loads(tmp_path: Path) -> None:
    cfg = load(write(tmp_path, GOOD))
    assert cfg.name == "spring" and cfg.table_size == 3 and cfg.deals == 2 and cfg.options.draw_one
    assert cfg.time_control.decision_ms == 200
    assert cfg.entrants[1].command == ("abluxx", "bot", "greedy", "--port", "0")
    assert cfg.tournament_id.startswith("spring-")
    # the id does not depend on concurrency (so changing it still resumes), but does on what is played
    assert load(write(tmp_path, GOOD.replace("concurrency = 4", "concurrency = 9"))).tournament_id == cfg.tournament_id
    assert load(write(tmp_path, GOOD.replace("seed = 7", "seed = 8"))).tournament_id != cfg.tournament_id


@pytest.mark.parametrize(
    "change,key,reason",
    [
        (("deals = 2", "deals = 2\ncolour = 3"), "colour", "unknown key"),
        (("draw_one = true", "draw_uno = true"), "options.draw_uno", "unknown key"),
        (('name = "bob"', 'name = "bob"\nport = 3'), "entrants[1].port", "unknown key"),
        (("127.0.0.1:50051", "localhost"), "entrants[0].address", "bad address"),
        (("127.0.0.1:50051", "127.0.0.1:99999"), "entrants[0].address", "port must be 1 to 65535"),
        (("table_size = 3", "table_size = 6"), "table_size", "out of range (2 to 5)"),
        (("table_size = 3", "table_size = 1"), "table_size", "out of range (2 to 5)"),
        (("table_size = 3", "table_size = 4"), "table_size", "more than the 3 entrants"),
        (("deals = 2", 'deals = "two"'), "deals", "must be a whole number, not \"two\""),
        (("decision_ms = 200", "decision_ms = 0"), "time_control.decision_ms", "out of range"),
        (('name = "carol"', 'name = "bob"'), "entrants[2].name", "used twice"),
        (('command = "abluxx bot greedy --port 0"', 'policy = "genius"'), "entrants[1].policy", "no policy"),
        (("seed = 7", 'seed = 7\nseat_orders = "some"'), "seat_orders", "must be one of"),
    ],
)
def test_a_bad_config_is_refused_naming_file_key_and_reason(tmp_path: Path, change, key: str, reason: str) -> None:
    path = write(tmp_path, GOOD.replace(*change))
    with pytest.raises(ConfigError) as e:
        load(path)
    assert e.value.key == key
    assert reason in e.value.reason
    assert str(e.value).startswith(f"{path}: {key}: ")


def test_an_entrant_needs_exactly_one_way_to_reach_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"entrants\[0\].address: entrant 1 \(alice\): give exactly one of address,"):
        load(write(tmp_path, GOOD.replace('address = "127.0.0.1:50051"', "")))


def test_broken_toml_and_missing_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load(write(tmp_path, "name = "))
    with pytest.raises(ConfigError, match=r"cannot read .*nope.toml: no such file or directory"):
        load(tmp_path / "nope.toml")


def test_config_errors_are_in_plain_words(tmp_path: Path, capsys) -> None:
    """No Python values in a message: an empty entrant is "entrant 3 has no name", a missing file "cannot read"."""
    from referee.cli import main

    path = write(tmp_path, GOOD + "\n[[entrants]]\n")
    assert main(["tournament", "run", str(path), "--data", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "entrant 4 has no name" in err and "None" not in err, err
    assert main(["tournament", "run", str(tmp_path / "nofile.toml"), "--data", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert f"cannot read {tmp_path / 'nofile.toml'}: no such file or directory" in err and ": -:" not in err, err
    path = write(tmp_path, GOOD.replace("deals = 2", "deals = true"))
    assert main(["tournament", "run", str(path), "--data", str(tmp_path / "d")]) == 2
    assert "deals: must be a whole number, not true" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("time_control", "reason"),
    [
        ({"decision_ms": 0}, "time_control.decision_ms: 0 is out of range (1 to 600000)"),
        ({"bank_ms": "x"}, 'time_control.bank_ms: must be a whole number, not "x"'),
        ({"grace": 1}, "time_control.grace: unknown key (known: bank_ms, decision_ms, grace_ms)"),
    ],
)
def test_a_tournament_file_and_the_servers_settings_refuse_a_time_control_in_the_same_words(
    time_control: dict, reason: str
) -> None:
    # one checker (config.Table) behind both files, where each had its own copy with its own words
    from referee.service.settings import parse as parse_settings
    from referee.tournament.config import parse

    two = [{"name": "a", "policy": "random"}, {"name": "b", "policy": "greedy"}]
    with pytest.raises(ConfigError) as tournament:
        parse({"time_control": time_control, "entrants": two}, "t.toml")
    with pytest.raises(ConfigError) as settings:
        parse_settings({"time_control": time_control}, "server.toml", env={})
    assert (str(tournament.value), str(settings.value)) == (f"t.toml: {reason}", f"server.toml: {reason}")


def test_a_file_sent_to_a_server_arrives_as_the_mapping_it_was() -> None:
    # abluxx remote tournament create sends the file's keys as the API's fields, and the server reads them back
    # into the mapping it checks with the same parse as a local file: no copy of the schema on either side
    import tomllib

    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
    from referee.service.convert import fields_of, message_from

    text = GOOD.replace('command = "abluxx bot greedy --port 0"', 'bot = "greedy-bot"')
    text = text.replace('command = ["abluxx", "bot", "counter", "--port", "0"]', 'policy = "counter"')
    text = text.replace("concurrency = 4", 'concurrency = 4\npublic_deals = false\nseat_orders = "all"')
    data = tomllib.loads(text)
    assert fields_of(message_from(data, ref_pb.TournamentConfig(), "t.toml")) == data


def test_every_mistake_is_reported_at_once(tmp_path: Path) -> None:
    """A file with four wrong keys said only the first; fixing them one run at a time took four runs."""
    p = tmp_path / "t.toml"
    p.write_text('name = "x"\ncolour = "red"\ndeals = 0\nseed = -4\n[time_control]\ngrace = 1\n[[entrants]]\n'
                 'name = "a"\npolicy = "nosuch"\n[[entrants]]\nname = "b"\npolicy = "greedy"\n')  # fmt: skip
    with pytest.raises(ConfigError) as e:
        load(p)
    lines = str(e.value).splitlines()
    assert lines[0] == "5 problems:"
    assert sorted(x.split(": ")[1] for x in lines[1:]) == [
        "colour", "deals", "entrants[0].policy", "seed", "time_control.grace"]  # fmt: skip
    assert all(x.startswith(f"  {p}: ") for x in lines[1:])
    p.write_text('name = "x"\ndeals = 0\n[[entrants]]\nname = "a"\npolicy = "random"\n'
                 '[[entrants]]\nname = "b"\npolicy = "greedy"\n')  # fmt: skip
    with pytest.raises(ConfigError) as one:
        load(p)
    assert (one.value.key, one.value.reason) == ("deals", "0 is out of range (1 to 100000)")  # one: as before


def test_an_open_ladder_without_entrants_reads_back_from_its_stored_form() -> None:
    """Create and Start check one way: what parse accepts, its stored form (to_json) is accepted again."""
    from referee.tournament.config import TournamentConfig, parse

    c = parse({"name": "open", "table_size": 4, "ladder": {"open": True}}, "t.toml")
    assert c.entrants == () and TournamentConfig.from_json(c.to_json()) == c
