"""Secret deals through the service (docs/security.md): keys stay in the store, an old tournament without one is
not started, public deals are the organiser's explicit choice, and validation games are dealt at random."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from referee.engine import deck_from_seed
from referee.fleet import match_player
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records import verify_record
from referee.service.settings import parse as parse_settings
from referee.store import open_store
from referee.tournament.config import ConfigError, parse
from referee.tournament.deals import PublicDeals, deck_seed
from referee.tournament.runner import GameHooks, create_tournament, play_slots

from .helpers import (
    ABLUXX,
    ALICE,
    BOB,
    ORGANISER,
    Proc,
    _wait_listening,
    auth,
    config,
    error_of,
    start_bot,
    start_server,
    stub,
    submit,
    watch_to_end,
    write_settings,
)

POLICIES = [{"name": n, "policy": p} for n, p in (("a", "random"), ("b", "greedy"), ("c", "counter"))]


def test_an_old_tournament_without_a_deal_key_is_not_started(tmp_path: Path) -> None:
    data = tmp_path / "data"
    cfg = parse({"name": "old", "entrants": POLICIES}, "<test>")
    with open_store(data) as store:
        create_tournament(store, cfg, "t")
        store.db.execute("DELETE FROM deal_keys")  # as a referee before deal keys left it
    srv = start_server(data, write_settings(tmp_path))
    try:
        s = stub(srv.address)
        e = error_of(s.StartTournament, ref_pb.StartTournamentRequest(tournament_id=cfg.tournament_id),
                     metadata=auth(ORGANISER))  # fmt: skip
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "no secret deal key" in e.details() and "public_deals = true" in e.details()
        assert str(tmp_path) not in e.details()  # the server's data folder is its own business

        # a new tournament gets a key that no reply shows; public deals are there only when the organiser asks
        secret = s.CreateTournament(ref_pb.CreateTournamentRequest(config=config("new", POLICIES)),
                                    metadata=auth(ORGANISER))  # fmt: skip
        public = s.CreateTournament(ref_pb.CreateTournamentRequest(config=config("pub", POLICIES, public_deals=True)),
                                    metadata=auth(ORGANISER))  # fmt: skip
        author = config("mine", POLICIES, public_deals=True)
        e = error_of(s.CreateTournament, ref_pb.CreateTournamentRequest(config=author), metadata=auth(ALICE))
        assert e.code() == grpc.StatusCode.PERMISSION_DENIED  # public deals are the organiser's call alone
        assert "public_deals" not in json.loads(secret.config_json)
        assert json.loads(public.config_json)["public_deals"] is True
    finally:
        srv.stop()
    with open_store(data) as store:
        assert store.deal_key(secret.tournament_id) is not None and store.deal_key(public.tournament_id) is None
        key = store.deal_key(secret.tournament_id)
    assert key.hex() not in srv.log.read_text() and key.hex() not in secret.SerializeToString().hex()


def test_a_fixed_validation_seed_is_refused_with_the_reason(tmp_path: Path) -> None:
    try:
        parse_settings({"service": {"validation_seed": 1}}, "server.toml", env={})
    except ConfigError as e:
        assert "service.validation_seed" in str(e) and "fresh random deck" in str(e)
    else:
        raise AssertionError("validation_seed was accepted")


SPY = Path(__file__).resolve().parents[1] / "fixtures" / "spy_bot.py"


def start_spy(log: Path) -> Proc:
    proc = subprocess.Popen([sys.executable, str(SPY), "--log", str(log), "--delay-ms", "10"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    return Proc(proc, _wait_listening(proc, "spy bot"))


def lines_written(log: Path) -> int:
    """How many whole lines the spy has written to its log."""
    return log.read_bytes().count(b"\n") if log.exists() else 0


def ints_in(value: object) -> set[int]:
    """Every integer anywhere in a parsed JSON value, and every run of digits in its strings."""
    if isinstance(value, bool):
        return set()
    if isinstance(value, int):
        return {value}
    if isinstance(value, str):
        return {int(m) for m in re.findall(r"\d+", value)}
    if isinstance(value, dict):
        return set().union(*(ints_in(k) | ints_in(v) for k, v in value.items())) if value else set()
    if isinstance(value, list):
        return set().union(*(ints_in(v) for v in value)) if value else set()
    return set()


def predicted_decks(readable: list[Message], tables: int, deals: int) -> set[tuple[int, ...]]:
    """Every deck an author could compute from what it read: each number in it as a deck seed, and as the seed of
    the old derivation (the config seed, table and deal), for every table and deal."""
    numbers: set[int] = set()
    for m in readable:
        as_json = json_format.MessageToDict(m)
        numbers |= ints_in(as_json)
        for t in as_json.get("tournaments", [as_json]):
            if "configJson" in t:
                numbers |= ints_in(json.loads(t["configJson"]))
    out = set()
    for n in numbers:
        if 0 <= n < 2**64:
            out.add(deck_from_seed(n))
            out |= {deck_from_seed(deck_seed(PublicDeals(n), "", t, d)) for t in range(tables) for d in range(deals)}
    return out


def stored_decks(data: Path, tid: str) -> dict[str, tuple[int, ...]]:
    with sqlite3.connect(data / "abluxx.db") as c:
        rows = c.execute("SELECT game_id, deck_seed FROM schedule WHERE tournament_id = ?", (tid,)).fetchall()
    return {g: deck_from_seed(s) for g, s in rows}


def test_a_spy_and_its_author_learn_no_card_before_the_game_that_deals_it_is_over(tmp_path: Path) -> None:
    data = tmp_path / "data"
    srv = start_server(data, write_settings(tmp_path))
    log = tmp_path / "spy.jsonl"
    spy, greedy = start_spy(log), start_bot("greedy")
    # (spy log lines written when the reply came, game read, its deck or None: watched). The spy's log, not a clock,
    # orders a read against the spy's play: comparing three processes' wall clocks was this test's one dependence on
    # timing (it failed once under load).
    learned: list[tuple[int, str, tuple[int, ...] | None]] = []
    refused: list[str] = []  # WatchGame calls refused for the deal
    withheld_reads: list[str] = []  # GetGameRecord replies without their deal
    try:
        s = stub(srv.address)
        assert submit(s, "spy", spy.address, ALICE).HasField("entrant")
        # a second validation game, dealt afresh (forced: the bot is unchanged)
        assert submit(s, "spy", spy.address, ALICE, force=True).HasField("entrant")
        assert submit(s, "greedy", greedy.address, BOB).HasField("entrant")
        entrants = [{"bot": "spy"}, {"bot": "greedy"}, {"name": "rnd", "policy": "random"}]
        # two tournaments with the same seed and schedule; a third with public deals, never started (the control)
        tids = []
        for name, extra in (("spy-a", {}), ("spy-b", {}), ("open", {"public_deals": True})):
            c = config(name, entrants, seed=5, deals=2, seat_orders="rotations", concurrency=2, **extra)
            t = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER))
            tids.append(t.tournament_id)
        a, b, control = tids

        # everything the spy's author can read before the start
        readable: list[Message] = [s.ListTournaments(ref_pb.ListTournamentsRequest(), metadata=auth(ALICE)),
                                   s.ListEntrants(ref_pb.ListEntrantsRequest(), metadata=auth(ALICE))]  # fmt: skip
        readable += [s.GetTournament(ref_pb.GetTournamentRequest(tournament_id=t), metadata=auth(ALICE)) for t in tids]
        readable += [s.GetEntrant(ref_pb.GetEntrantRequest(name=n), metadata=auth(ALICE)) for n in ("spy", "greedy")]
        readable.append(s.ListGames(ref_pb.ListGamesRequest(), metadata=auth(ALICE)))
        guesses = predicted_decks(readable, tables=3, deals=2)
        game_ids = {t: [f"{t}-t{x}-d{d}-o{o}" for x in range(3) for d in range(2) for o in range(2)] for t in tids}

        # the author polls every public call while both tournaments run
        running = threading.Event()
        running.set()

        def poll() -> None:
            while running.is_set():
                s.ListTournaments(ref_pb.ListTournamentsRequest(), metadata=auth(ALICE))
                s.ListGames(ref_pb.ListGamesRequest(), metadata=auth(ALICE))
                for gid in game_ids[a] + game_ids[b]:
                    try:
                        rec = s.GetGameRecord(ref_pb.GetGameRecordRequest(game_id=gid), metadata=auth(ALICE))
                        if rec.deal_withheld:
                            withheld_reads.append(gid)
                            assert not rec.header.deck and not rec.footer.salt and not rec.decisions
                        else:
                            learned.append((lines_written(log), gid, tuple(rec.header.deck)))
                    except grpc.RpcError as e:
                        assert e.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND), e
                    try:
                        for _ in s.WatchGame(ref_pb.WatchGameRequest(game_id=gid), metadata=auth(ALICE), timeout=0.5):
                            learned.append((lines_written(log), gid, None))
                            break
                    except grpc.RpcError as e:
                        if e.code() == grpc.StatusCode.FAILED_PRECONDITION and "deal" in e.details():
                            refused.append(gid)

        poller = threading.Thread(target=poll)
        poller.start()
        for t in (a, b):
            s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=t), metadata=auth(ORGANISER))
        for t in (a, b):
            watch_to_end(s, t)
        running.clear()
        poller.join(60)
        records = {gid: s.GetGameRecord(ref_pb.GetGameRecordRequest(game_id=gid), metadata=auth(ORGANISER))
                   for t in (a, b) for gid in game_ids[t]}  # fmt: skip
    finally:
        for p in (spy, greedy):
            p.stop()
        srv.stop()

    deck = {gid: tuple(r.header.deck) for gid, r in records.items()}
    for gid, r in records.items():
        verify_record(r)
        assert deck[gid] == stored_decks(data, r.header.tournament_id)[gid]
    spy_games = {gid for gid, r in records.items() if "spy" in [p.name for p in r.header.players]}
    assert len(spy_games) == 16
    # the same seed made the same schedule twice, and no deck of one tournament is a deck of the other
    assert {deck[g] for g in game_ids[a]}.isdisjoint({deck[g] for g in game_ids[b]})

    lines = [json.loads(x) for x in log.read_text().splitlines()]
    told = [(i + 1, x["game"], tuple(x["deck"])) for i, x in enumerate(lines) if x["what"] == "over" and x["deck"]]
    withheld = [x for x in lines if x["what"] == "over" and not x["deck"]]
    assert withheld and all(x["commitment"] == records[x["game"]].header.commitment.hex() for x in withheld)
    for after, source, seen in told + learned:
        # whatever was learned about a deal, the spy was never again asked to decide (or dealt in) a game on it:
        # a line it wrote after that was written while such a game was still in play
        same_deal = {g for g in spy_games - {source} if deck[g] == (seen if seen is not None else deck[source])}
        for x in lines[after:]:
            assert x["game"] not in same_deal or x["what"] == "over", (
                f"learned {source}'s deal while {x['game']} on the same deal was still in play (spy: {x['what']})"
            )
    # the spy's first hand, when it played first, is its seat's cards of that game's deck (the log is right)
    seats = {x["game"]: x["seat"] for x in lines if x["what"] == "start"}
    first_hands = {}
    for x in lines:
        if x["what"] == "hand":
            first_hands.setdefault(x["game"], x["hand"])
    checked = [g for g in first_hands if g in records and records[g].header.start_seat == seats[g]]
    assert checked
    for g in checked:
        assert first_hands[g] == sorted(deck[g][13 * seats[g] : 13 * seats[g] + 13])
    # a deal no other game uses (a validation game's, fresh and random each time) is told at once, and matches
    validations = [x for x in lines if x["what"] == "over" and x["game"].startswith("validate-spy-")]
    assert len(validations) == 2 and validations[0]["deck"] != validations[1]["deck"]
    for v in validations:
        salted = bytes.fromhex(v["salt"]) + bytes(v["deck"])
        assert v["deck"] and hashlib.sha256(salted).hexdigest() == v["commitment"]
    # the author's reads met the gate (refused watches, withheld records) and got through it (whole records)
    assert refused and withheld_reads and any(seen is not None for _, _, seen in learned)

    # nothing an author read before the start predicts a deck of either tournament; the control's it does
    played = {deck[g] for g in deck}
    assert not guesses & played
    assert set(stored_decks(data, control).values()) <= guesses


class FirstGameOnly(GameHooks):
    """Starts one game and no more."""

    def __init__(self) -> None:
        self.started = 0

    def should_continue(self) -> bool:
        self.started += 1
        return self.started == 1


def test_a_record_fetched_before_its_deal_is_over_verifies_as_not_yet_revealed(tmp_path: Path) -> None:
    # one game of a two-game deal played (rotations at a table of two), the other still to be played
    data = tmp_path / "data"
    cfg = parse({"name": "half", "seat_orders": "rotations", "entrants": POLICIES[:2]}, "<test>")
    with open_store(data) as store:
        create_tournament(store, cfg, "t")

        async def first_game() -> None:
            async with match_player(store.records) as play:
                await play_slots(store, cfg, play, {}, 1, hooks=FirstGameOnly())

        asyncio.run(first_game())
        played = store.games(cfg.tournament_id)
        assert len(played) == 1 and len(store.slots(cfg.tournament_id, pending_only=True)) == 1
    game_id = played[0].game_id
    srv = start_server(data, write_settings(tmp_path))
    try:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("ABLUXX_")}, "ABLUXX_SERVER": srv.address}

        def abluxx(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([*ABLUXX, *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                                  timeout=120)  # fmt: skip

        fetched = abluxx("remote", "record", game_id, "--token", ALICE)
        assert fetched.returncode == 0, fetched.stderr
        assert "deal not yet revealed" in fetched.stderr
        checked = abluxx("verify", str(tmp_path / f"{game_id}.abluxx"))
        assert checked.returncode == 1 and "deal not yet revealed" in checked.stdout
        assert "mismatch" not in checked.stdout
        # the organiser's copy is whole, and verifies
        whole = abluxx("remote", "record", game_id, "--token", ORGANISER, "-o", "whole.abluxx")
        assert whole.returncode == 0 and "not yet" not in whole.stderr
        checked = abluxx("verify", str(tmp_path / "whole.abluxx"))
        assert checked.returncode == 0 and checked.stdout.startswith("ok:"), checked.stdout
    finally:
        srv.stop()


def test_public_deals_stay_secret_while_another_tournament_still_plays_them(tmp_path: Path) -> None:
    # the old leak: a finished tournament's records held the decks of a later one with the same seed
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    try:
        s = stub(srv.address)

        def tournament(name: str) -> str:
            c = config(name, POLICIES[:2], seed=9, seat_orders="rotations", public_deals=True)
            return s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id

        def play(tid: str) -> None:
            s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
            watch_to_end(s, tid)

        first = tournament("first")
        play(first)
        game = ref_pb.GetGameRecordRequest(game_id=f"{first}-t0-d0-o0")
        assert not s.GetGameRecord(game).deal_withheld  # nothing else plays its deal: anyone may read it
        second = tournament("second")  # the same seed, public deals: the same decks, still to be played
        assert s.GetGameRecord(game).deal_withheld
        e = error_of(s.WatchGame(ref_pb.WatchGameRequest(game_id=game.game_id)).__next__)
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION and "2 other game(s)" in e.details()
        play(second)
        assert not s.GetGameRecord(game).deal_withheld
        assert s.GetGameRecord(game).header.deck == s.GetGameRecord(
            ref_pb.GetGameRecordRequest(game_id=f"{second}-t0-d0-o0")).header.deck  # fmt: skip
    finally:
        srv.stop()
