"""Decks from a secret deal key (docs/security.md): unrelated across tournaments that share a seed, kept in the
store, and an old data folder without a key is refused rather than re-derived."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import sqlite3
from pathlib import Path

import pytest

from referee.cli import main
from referee.fleet import match_player
from referee.store import open_store
from referee.tournament import schedule
from referee.tournament.config import load
from referee.tournament.deals import PublicDeals, deck_seed, fresh_seed
from referee.tournament.runner import NoDealKey, create_tournament, run_tournament

from .helpers import config_text, in_process_player

NAMES = ["rnd", "greedy", "counter"]


def write(tmp_path: Path, **top: object) -> Path:
    p = tmp_path / "c.toml"
    p.write_text(config_text(NAMES, name="deals", seed=3, table_size=2, deals=2, **top))
    return p


def test_the_same_config_in_two_data_folders_plays_the_same_games_on_unrelated_decks(tmp_path: Path) -> None:
    cfg = load(write(tmp_path))
    with open_store(tmp_path / "a") as a, open_store(tmp_path / "b") as b:
        first, second = create_tournament(a, cfg, "t"), create_tournament(b, cfg, "t")
        assert a.deal_key(cfg.tournament_id) != b.deal_key(cfg.tournament_id)
        assert len(a.deal_key(cfg.tournament_id)) * 8 >= 128
    # the seed still fixes the schedule ...
    assert [(s.game_id, s.seats) for s in first] == [(s.game_id, s.seats) for s in second]
    # ... but no deck of one is a deck of the other, and none is the deck the public seed would give
    public = {deck_seed(PublicDeals(cfg.seed), "", s.table, s.deal) for s in first}
    assert not {s.deck_seed for s in first} & ({s.deck_seed for s in second} | public)


def test_the_same_key_and_seed_in_another_tournament_gives_unrelated_decks() -> None:
    key = bytes(32)
    assert deck_seed(key, "a-1", 0, 0) != deck_seed(key, "b-1", 0, 0)
    assert deck_seed(key, "a-1", 0, 0) != deck_seed(key, "a-1", 0, 1) != deck_seed(key, "a-1", 1, 0)
    with pytest.raises(ValueError, match="128 bits"):
        deck_seed(b"short", "a-1", 0, 0)


def test_public_deals_are_the_old_derivation_from_the_seed_alone(tmp_path: Path) -> None:
    cfg = load(write(tmp_path, public_deals=True))
    assert cfg.to_json()["public_deals"] is True
    with open_store(tmp_path / "d") as store:
        slots = create_tournament(store, cfg, "t")
        assert store.deal_key(cfg.tournament_id) is None  # nothing secret to keep
    for s in slots:
        text = f"{cfg.seed}/deck/{s.table}/{s.deal}"  # what every referee before deal keys used
        assert s.deck_seed == int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1
    # and a config that does not opt in keeps the tournament id it had before the option existed
    assert "public_deals" not in load(write(tmp_path)).to_json()


def old_data_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A data folder as an older referee left it: a tournament half played, with no deal key."""
    cfg_path = write(tmp_path)
    cfg = load(cfg_path)
    data = tmp_path / "old"
    with open_store(data) as store:
        slots = create_tournament(store, cfg, "t")
        store.db.execute("DELETE FROM deal_keys")
        public = [(deck_seed(PublicDeals(cfg.seed), "", s.table, s.deal), s.slot) for s in slots]
        store.db.executemany("UPDATE schedule SET deck_seed = ? WHERE slot = ?", public)
    return cfg_path, data


def test_an_old_data_folder_without_a_key_is_refused_naming_the_way_out(tmp_path: Path) -> None:
    cfg_path, data = old_data_folder(tmp_path)
    cfg = load(cfg_path)
    with open_store(data) as store, pytest.raises(NoDealKey) as e:
        asyncio.run(run_tournament(cfg, store, in_process_player, progress=False))
    for words in ("no secret deal key", "from scratch", "public_deals = true"):
        assert words in str(e.value)
    with sqlite3.connect(data / "abluxx.db") as c:
        assert c.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 0  # nothing was played


def test_the_cli_refuses_an_old_data_folder_with_exit_2(tmp_path: Path, capsys) -> None:
    cfg_path, data = old_data_folder(tmp_path)
    tid = load(cfg_path).tournament_id
    for args in (["tournament", "run", str(cfg_path)], ["tournament", "resume", tid]):
        assert main([*args, "--data", str(data), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "no secret deal key" in err and "Traceback" not in err and "resume with" not in err


def test_schedule_needs_the_key_unless_the_deals_are_public(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="deal key"):
        schedule.build(load(write(tmp_path)), None)
    assert schedule.build(load(write(tmp_path, public_deals=True)), None)


def test_abluxx_match_without_a_seed_deals_from_63_random_bits(tmp_path: Path, capsys) -> None:
    seeds = []
    for i in range(2):
        assert main(["match", "greedy", "random", "--data", str(tmp_path), "--game-id", f"m{i}"]) == 0
        out = capsys.readouterr().out
        seeds.append(int(out.split("seed ")[1].split(":")[0]))
    # 32 bits (what it was) can be searched from one hand; every seed below 2**32 has odds of 2**-31 here
    assert seeds[0] != seeds[1] and min(seeds) >= 2**32 and max(seeds) < 2**63


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_the_data_folder_store_and_records_are_owner_only(tmp_path: Path) -> None:
    # a data folder an older referee left readable by everyone is tightened when it is opened
    data = tmp_path / "d"
    (data / "records").mkdir(parents=True)
    data.chmod(0o755)
    (data / "records").chmod(0o755)
    cfg = load(write(tmp_path))
    with open_store(data) as store:
        out = asyncio.run(run_tournament(cfg, store, match_player, progress=False))
    assert out.played == 6  # 3 tables x 2 deals, across tables
    assert mode(data) == mode(data / "records") == 0o700
    stored = [data / "abluxx.db", data / "abluxx.db-wal", data / "abluxx.db-shm"]
    records = sorted((data / "records").glob("*.abluxx"))
    assert len(records) == 6
    for path in [p for p in stored if p.exists()] + records:
        assert mode(path) == 0o600, path
    # and a new one is made so
    with open_store(tmp_path / "new" / "data"):
        pass
    assert mode(tmp_path / "new" / "data") == 0o700 and mode(tmp_path / "new" / "data" / "abluxx.db") == 0o600


def test_a_deal_key_needs_128_bits_exactly_at_the_boundary() -> None:
    # issue 22 item 1: a key of 8-15 bytes is under the documented 128 bits and must be refused, not only a 5-byte one
    for short in (8, 15):
        with pytest.raises(ValueError, match=f"at least 128 bits; got {short * 8}$"):
            deck_seed(bytes(range(short)), "a-1", 0, 0)
    seed = deck_seed(bytes(range(16)), "a-1", 0, 0)  # 128 bits is enough
    digest = hmac.new(bytes(range(16)), b"a-1/0/0", hashlib.sha256).digest()
    assert seed == int.from_bytes(digest[:8], "big") >> 1


def test_a_redealt_attempt_has_its_own_deck_and_fresh_seeds_fit_63_bits() -> None:
    key = bytes(range(32))
    again = deck_seed(key, "t-1", 0, 2, attempt=1)
    assert again != deck_seed(key, "t-1", 0, 2) == deck_seed(key, "t-1", 0, 2, attempt=0)
    digest = hmac.new(key, b"t-1/0/2/1", hashlib.sha256).digest()
    assert again == int.from_bytes(digest[:8], "big") >> 1
    public = hashlib.sha256(b"7/deck/0/2/3").digest()
    assert deck_seed(PublicDeals(7), "", 0, 2, attempt=3) == int.from_bytes(public[:8], "big") >> 1
    # 63 random bits, as a tournament's seeds: 200 seeds of 64 bits would all be under 2**63 once in 2**200
    assert all(0 <= fresh_seed() < 2**63 for _ in range(200))
