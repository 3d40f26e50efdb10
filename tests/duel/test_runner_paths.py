"""The duel runner's paths that whole duels of built-in policies do not take, called in this process (mutation
testing sees only in-process calls; scripts/mutation.py): a resumed duel, a duel of a command bot, an address bot
and built-in field bots (real bot processes, real gRPC, real records), a pair whose game lost its worker, the table
and place measures, and a duel stored before the measure was a setting."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import re
import sys
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from referee.cli import main
from referee.duel.runner import (
    MAX_PAIR_TRIES,
    DuelError,
    DuelSettings,
    DuelState,
    InProcess,
    PairPlan,
    _bot_seed,
    _pair_on,
    default_field,
    fresh_plan,
    lineup,
    new_id,
    paired_difference,
    play_pair,
    run_duel,
)
from referee.duel.store import DuelStore, PairRow
from referee.engine import EndReason
from referee.errors import GameLost
from referee.fleet import match_player
from referee.log import configure
from referee.match import ChannelPool, GameResult, GameSpec, play_game
from referee.match.spec import SeatStats
from referee.records import read_record
from referee.stats import Sprt, Verdict, sequential
from referee.tournament.config import EntrantConfig
from tests.bots.driver import ServedBot

# A duel stopped by a failure ends in milliseconds here; one still running after this long waits for a game that never
# ends, and fails rather than hanging the suite.
HANG_S = 20

BOT = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())", "bot"]


def _plans(duel_id: str, base: int = 1000):
    """Fixed deals, so a run is the same every time: pair i on deck seed base + i."""
    return lambda i: PairPlan(i, base + i, i % 2, f"{duel_id}-p{i}")


def _settings(**kw) -> DuelSettings:
    return DuelSettings(**{"candidate": EntrantConfig("c", policy="counter"),
                           "baseline": EntrantConfig("b", policy="random"), "field": (), **kw})  # fmt: skip


def test_a_resumed_duel_plays_only_its_missing_pairs_and_counts_them_in_order(tmp_path: Path) -> None:
    """Stored: pairs 0 and 2 of a 4-pair duel (pair 1 and 3 were in flight when it stopped). The resume reads them
    back, plays pairs 1 and 3 alone, and its verdict and counts are the test's on all four in their order."""
    settings = _settings(max_games=8, measure="place")
    with DuelStore(tmp_path) as store:
        store.create("duel-r", settings.to_json())
        for i, d in ((0, 0.5), (2, -1.0)):
            store.save_pair("duel-r", PairRow(i, 77 + i, i % 2, [], d, d))
        row = store.duel("duel-r")
        assert row is not None
        state = DuelState.stored(store, row)
        assert state.settings == settings and state.kept is None and sorted(state.pairs) == [0, 2]
        assert state.pairs[2].diff == -1.0 and state.pairs[2].deck_seed == 79
        played: list[int] = []
        asyncio.run(run_duel(state, store, plans=_plans("duel-r"), on_pair=lambda s: played.append(len(s.pairs))))
        assert played == [3, 4]  # two pairs played, none twice
        stored = store.pairs("duel-r")
        row = store.duel("duel-r")
    assert [p.pair for p in stored] == [0, 1, 2, 3] and [p.deck_seed for p in stored] == [77, 1001, 79, 1003]
    diffs = [p.diff for p in stored]
    assert diffs[0] == 0.5 and diffs[2] == -1.0
    verdict, n = sequential(settings.test, diffs, 4)
    assert row is not None and (row.verdict, row.verdict_pairs) == (verdict.value, n) == ("inconclusive", 4)
    assert state.games == 8 and state.summary().mean_diff == pytest.approx(sum(diffs) / 4)
    assert state.place_diff() == pytest.approx(sum(p.place_diff for p in stored) / 4)


def test_a_resume_of_a_decided_duel_plays_nothing_and_an_inconclusive_one_plays_on(tmp_path: Path, capsys) -> None:
    """`abluxx duel --resume`: a duel stored as H0 at 2 pairs reports H0 at 2 pairs and plays nothing, even with a
    new budget; one stored inconclusive (its budget spent) plays on to its new budget, keeping its pairs."""
    with DuelStore(tmp_path) as store:
        for duel_id, verdict in (("duel-h0", "H0"), ("duel-more", "inconclusive")):
            store.create(duel_id, _settings(max_games=4).to_json())
            for i in range(2):
                store.save_pair(duel_id, PairRow(i, 5 + i, i % 2, [], -2.0, -1.0))
            store.finish(duel_id, verdict, 2)
    data = ["--json", "--data", str(tmp_path)]
    assert main(["duel", "--resume", "duel-h0", "--max-games", "40", *data]) == 1
    result = json.loads(capsys.readouterr().out)
    assert (result["verdict"], result["pairs"], result["games"], result["mean_diff"]) == ("H0", 2, 4, -2.0)
    main(["duel", "--resume", "duel-more", "--max-games", "8", *data])
    result = json.loads(capsys.readouterr().out)
    with DuelStore(tmp_path) as store:
        h0, more = store.pairs("duel-h0"), store.pairs("duel-more")
        row = store.duel("duel-more")
    assert len(h0) == 2 and [p.pair for p in more] == [0, 1, 2, 3] and [p.diff for p in more[:2]] == [-2.0, -2.0]
    verdict, n = sequential(Sprt(), [p.diff for p in more], 4)
    assert (result["verdict"], result["pairs"], result["games"]) == (verdict.value, n, 2 * n)
    assert row is not None and (row.verdict, row.verdict_pairs) == (verdict.value, n)


@contextlib.asynccontextmanager
async def _spying(records: Path, specs: list[GameSpec]) -> AsyncIterator:
    """The match player, noting each game's spec as it is played."""
    async with match_player(records) as play:

        async def spy(spec: GameSpec, **options) -> GameResult:
            specs.append(spec)
            return await play(spec, **options)

        yield spy


def test_a_command_bot_an_address_bot_and_built_in_field_bots_play_their_seats(tmp_path: Path) -> None:
    """A 3-player duel of one pair: the candidate a command bot (a fresh process for each game), the baseline a
    served bot at its address, the field two built-in policies. Each game has its own record, named for the game
    and whether the candidate (-c) or the baseline (-b) played, with the duel, the deal and the seat names in it;
    a built-in bot's seed is its role's on this deal, the same in both games."""
    served = ServedBot.example("greedy").wait_ready()
    try:
        settings = DuelSettings(EntrantConfig("cand", command=(*BOT, "counter", "--port", "0")),
                                EntrantConfig("base", address=served.address), default_field(3), table_size=3,
                                max_games=2)  # fmt: skip
        specs: list[GameSpec] = []
        with DuelStore(tmp_path / "d") as store:
            store.create("duel-cmd", settings.to_json())
            state = DuelState("duel-cmd", settings, {})
            plan = PairPlan(0, 4242, 1, "duel-cmd-p0-x")
            asyncio.run(run_duel(state, store, plans=lambda i: plan, player=lambda r: _spying(r, specs)))
            (pair,) = store.pairs("duel-cmd")
    finally:
        served.stop()
    first, second = pair.games
    assert (first["roles"], second["roles"]) == (["field0", "candidate", "field1"], ["field0", "baseline", "field1"])
    names = {"candidate": "cand", "baseline": "base", "field0": "greedy#2", "field1": "counter#3"}
    records = tmp_path / "d" / "records"
    assert sorted(p.name for p in records.iterdir()) == ["duel-cmd-p0-x-b.abluxx", "duel-cmd-p0-x-c.abluxx"]
    addresses = []
    for game, suffix in ((first, "c"), (second, "b")):
        assert Path(game["record"]) == records / f"duel-cmd-p0-x-{suffix}.abluxx"
        header = read_record(Path(game["record"])).header
        assert (header.game_id, header.tournament_id, header.seed) == ("duel-cmd-p0-x", "duel-cmd", 4242)
        assert [p.name for p in header.players] == [names[r] for r in game["roles"]]
        assert [p.transport for p in header.players][0::2] == ["builtin", "builtin"]
        addresses.append(header.players[1].address)
        assert game["game_id"] == "duel-cmd-p0-x" and game["retired"] == []
    assert addresses[1] == served.address and addresses[0] not in ("", served.address)
    for spec, roles in zip(specs, (first["roles"], second["roles"]), strict=True):
        assert (spec.game_id, spec.seed, spec.tournament_id) == ("duel-cmd-p0-x", 4242, "duel-cmd")
        assert [e.seed for e in spec.entrants] == [_bot_seed(4242, r) for r in roles]
    assert pair.diff == pytest.approx(paired_difference(first["roles"], _res(first), _res(second), "table")[0])


def _res(game: dict) -> GameResult:
    return _result(tuple(game["scores"]), tuple(game["places"]))


def test_a_second_command_bot_process_starts_for_each_game(tmp_path: Path) -> None:
    """Two command bots at a table of 2: every game starts both afresh (a check of each before the first game,
    then one start a game), so no process of theirs sees the deal twice."""
    settings = DuelSettings(EntrantConfig("new", command=(*BOT, "counter", "--port", "0")),
                            EntrantConfig("old", command=(*BOT, "greedy", "--port", "0")), (), max_games=2)  # fmt: skip
    with DuelStore(tmp_path / "d") as store:
        store.create("duel-fresh", settings.to_json())
        asyncio.run(run_duel(DuelState("duel-fresh", settings, {}), store, plans=_plans("duel-fresh")))
        (pair,) = store.pairs("duel-fresh")
    logs = {p.name for p in (tmp_path / "d" / "logs").iterdir()}
    starts = sum((tmp_path / "d" / "logs" / n).read_text().count("listening on") for n in logs)
    assert starts == 6, logs  # 2 checks + 2 games x 2 bots
    for game in pair.games:
        assert all(p.address for p in read_record(Path(game["record"])).header.players)
    assert all(n.startswith("duel-fresh") for n in logs if not n.startswith("hello")), logs


class _Losing:
    """Games on this process's match runner, of which games number ``lost`` (from 1) lose their worker."""

    def __init__(self, lost: set[int] | None = None) -> None:
        self.lost = lost
        self.specs: list[GameSpec] = []

    def seats(self, names: tuple[str, ...]):
        return _nobody()

    async def play(self, spec: GameSpec, on_decision=None, record: str | None = None) -> GameResult:
        self.specs.append(spec)
        if self.lost is None or len(self.specs) in self.lost:
            raise GameLost(f"game {spec.game_id} lost its worker: test")
        return await play_game(spec)


@contextlib.asynccontextmanager
async def _nobody() -> AsyncIterator[dict[str, str]]:
    yield {}


@pytest.mark.parametrize(("lost", "tries"), [({1}, 2), ({2}, 2), ({1, 2, 3}, MAX_PAIR_TRIES)])
def test_a_pair_whose_game_lost_its_worker_is_dealt_again_on_a_fresh_deal(lost: set[int], tries: int) -> None:
    """A game of the pair lost (its first or its second; or each try's but the last allowed): the pair is dealt
    again on a fresh plan each time (its bots saw that deal), the row is the last deal's, and each loss is logged."""
    games = _Losing(lost)
    deals = iter(range(100, 200))
    out = io.StringIO()
    configure("info", json=True, stream=out)
    try:
        row = asyncio.run(_pair_on(games, _settings(max_games=2), lambda i: PairPlan(i, next(deals), 0, f"g{i}"), 3,
                                   "duel-lost"))  # fmt: skip
    finally:
        configure("warning")
    logs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert row.pair == 3 and row.deck_seed == 100 + tries - 1 and len(row.games) == 2
    assert [s.seed for s in games.specs[-2:]] == [row.deck_seed] * 2 and len({s.seed for s in games.specs}) == tries
    assert all(s.tournament_id == "duel-lost" and s.game_id == "g3" for s in games.specs)
    lost_lines = [e for e in logs if e["event"] == "pair lost a game with its worker; dealt again"]
    assert len(lost_lines) == tries - 1
    assert all(e["pair"] == 3 and e["error"] == "game g3 lost its worker: test" for e in lost_lines)
    assert all(e["level"] == "warning" and e["duel"] == "duel-lost" for e in lost_lines)


def test_a_pair_that_loses_its_worker_every_try_stops_after_max_pair_tries() -> None:
    games = _Losing()
    plans = iter(range(MAX_PAIR_TRIES + 5))
    with pytest.raises(GameLost):
        asyncio.run(_pair_on(games, _settings(), lambda i: PairPlan(i, next(plans), 0, "g"), 0, "d"))
    assert [s.seed for s in games.specs] == list(range(MAX_PAIR_TRIES))  # one game of each try, each deal fresh


def _result(scores: tuple[int, ...], places: tuple[int, ...]) -> GameResult:
    return GameResult("g", scores, places, EndReason.EMPTY_HAND, [SeatStats() for _ in scores], 1, "", None)


def test_the_table_measure_is_the_score_against_the_rest_of_the_table() -> None:
    """3 seats, the candidate in seat 1: 7 against the others' mean of 4 in the first game, 2 against 6 in the
    second (the baseline's): (7 - 4) - (2 - 6) = 7. The place measure is the place difference."""
    first, second = _result((3, 7, 5), (3, 1, 2)), _result((6, 2, 6), (1, 3, 1))
    roles = ["field0", "candidate", "field1"]
    assert paired_difference(roles, first, second, "table") == (7.0, 2.0)
    assert paired_difference(roles, first, second, "place") == (2.0, 2.0)
    assert paired_difference(roles, first, second, "score") == (5.0, 2.0)
    two = ["baseline", "candidate"]  # at 2 players the table measure is the score difference twice over
    assert paired_difference(two, _result((4, 9), (2, 1)), _result((8, 5), (1, 2)), "table") == (8.0, 1.0)


def test_a_duel_stored_before_the_measure_was_a_setting_measured_scores() -> None:
    """Older duels have no "measure": they measured the score difference, also at 3 to 5 players (where a new
    duel's default is the table measure), and a resume goes on measuring it."""
    stored = _settings(table_size=3, field=default_field(3)).to_json()
    assert stored.pop("measure") == "table"
    assert DuelSettings.from_json(stored).measure == "score"
    assert DuelSettings.from_json({**stored, "measure": "place"}).measure == "place"


def test_a_state_with_a_kept_verdict_is_finished_and_stores_it_without_playing(tmp_path: Path) -> None:
    with DuelStore(tmp_path) as store:
        store.create("duel-k", _settings().to_json())
        for i in range(3):
            store.save_pair("duel-k", PairRow(i, i, 0, [], 1.0, 0.0))
        store.finish("duel-k", "H1", 2)
        row = store.duel("duel-k")
        assert row is not None
        state = DuelState.stored(store, row)
        assert state.kept == (Verdict.H1, 2) and state.finished() and [p.pair for p in state.later()] == [2]
        # had it played, the bot that cannot be reached would have stopped it, saying so
        with pytest.raises(DuelError, match=r"entrant c: cannot reach a bot at 127\.0\.0\.1:1"):
            broken = DuelState("duel-x", _settings(candidate=EntrantConfig("c", address="127.0.0.1:1")), {})
            store.create("duel-x", broken.settings.to_json())
            asyncio.run(run_duel(broken, store))
        asyncio.run(run_duel(state, store, player=lambda r: pytest.fail("a decided duel plays no game")))
        assert len(store.pairs("duel-k")) == 3


def test_a_duel_id_is_its_kind_the_utc_time_and_a_random_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC-9")  # a local clock nine hours ahead: the id keeps UTC
    time.tzset()
    try:
        before = datetime.now(UTC).replace(microsecond=0)
        ids = {new_id("duel") for _ in range(20)}
        after = datetime.now(UTC)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert len(ids) == 20 and all(re.fullmatch(r"duel-\d{8}T\d{6}-[0-9a-f]{6}", i) for i in ids), ids
    stamp = datetime.strptime(next(iter(ids)).split("-")[1], "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
    assert before <= stamp <= after


def test_a_fresh_plan_deals_anew_and_names_the_game_unguessably() -> None:
    plan = fresh_plan("duel-f", _settings(table_size=3, field=default_field(3)))
    a, b = plan(4), plan(4)
    assert (a.pair, a.seat) == (4, 1) and a.deck_seed != b.deck_seed and a.game_id != b.game_id
    assert re.fullmatch(r"duel-f-p4-[0-9a-f]{4}", a.game_id), a.game_id


def test_the_simulations_play_a_pair_in_this_process_without_records() -> None:
    async def run() -> PairRow:
        async with ChannelPool() as pool:
            return await play_pair(_settings(), PairPlan(0, 99, 0, "sim-p0"), InProcess(pool), "sim")

    row = asyncio.run(run())
    first, second = row.games
    assert first["record"] is None and second["record"] is None and first["game_id"] == "sim-p0"
    assert (first["roles"], second["roles"]) == (["candidate", "baseline"], ["baseline", "candidate"])
    assert row.diff == paired_difference(first["roles"], _res(first), _res(second))[0]


def test_a_duel_stopped_between_its_last_pair_and_its_verdict_stores_the_verdict_on_resume(tmp_path: Path) -> None:
    """Killed after the last pair of its budget was stored and before the verdict was: a resume plays nothing and
    stores the verdict of the stored pairs (as `abluxx duel --resume` then reports it)."""
    with DuelStore(tmp_path) as store:
        store.create("duel-s", _settings(max_games=4).to_json())
        for i in range(2):
            store.save_pair("duel-s", PairRow(i, 5 + i, i % 2, [], -2.0, -1.0))
        row = store.duel("duel-s")
        assert row is not None and row.verdict_pairs is None
        state = DuelState.stored(store, row)
        asyncio.run(run_duel(state, store, player=lambda r: pytest.fail("a spent budget plays no game")))
        row = store.duel("duel-s")
    verdict, n = sequential(Sprt(), [-2.0, -2.0], 2)
    assert row is not None and (row.verdict, row.verdict_pairs) == (verdict.value, n) and n == 2


@contextlib.asynccontextmanager
async def _failing(records: Path, at: int) -> AsyncIterator:
    """The match player, whose game number ``at`` (from 1) fails in the referee."""
    async with match_player(records) as play:
        n = 0

        async def failing(spec: GameSpec, **options) -> GameResult:
            nonlocal n
            n += 1
            if n == at:
                raise RuntimeError("the referee broke")
            return await play(spec, **options)

        yield failing


def test_a_game_that_fails_in_the_referee_stops_the_duel_with_that_error_and_keeps_its_pairs(tmp_path: Path) -> None:
    """The second pair's first game fails: the duel stops with a DuelError that says why, the first pair stays
    stored, and its games are named after the duel (fresh deals, as `abluxx duel` plays them)."""
    with DuelStore(tmp_path) as store:
        state = DuelState("duel-f", _settings(max_games=8), {})
        store.create("duel-f", state.settings.to_json())
        with pytest.raises(DuelError, match="the referee broke"):
            asyncio.run(run_duel(state, store, player=lambda r: _failing(r, 3)))
        (stored,) = store.pairs("duel-f")
    assert stored.pair == 0 and len(stored.games) == 2
    assert all(re.fullmatch(r"duel-f-p0-[0-9a-f]{4}", g["game_id"]) for g in stored.games), stored.games


def test_the_fleet_lineup_of_a_duel_names_every_bot_as_given_and_starts_each_afresh() -> None:
    """What workers start, dial or play for a duel: a command bot by its command, an address bot by its address,
    a built-in bot by its policy."""
    settings = _settings(candidate=EntrantConfig("c", command=("bot", "--x")), table_size=3,
                         field=(EntrantConfig("f", address="127.0.0.1:5"), EntrantConfig("g", policy="greedy")))
    got = lineup(settings, "duel-l")
    assert got.run_id == "duel-l" and got.fresh_process
    assert [(b.name, b.address, b.command, b.policy) for b in got.bots] == [
        ("c", None, ("bot", "--x"), None), ("b", None, None, "random"), ("f", "127.0.0.1:5", None, None),
        ("g", None, None, "greedy")]  # fmt: skip


@contextlib.asynccontextmanager
async def _stalling(records: Path, gate: asyncio.Event) -> AsyncIterator:
    """The match player for three pairs at once: pair 0 plays; pair 1 fails in the referee once pair 0 is stored
    (``gate``) and its worker has run out of pairs; pair 2's game never ends."""
    async with match_player(records) as play:

        async def stalling(spec: GameSpec, **options) -> GameResult:
            if spec.game_id.startswith("duel-w-p1"):
                await gate.wait()
                await asyncio.sleep(0.05)  # after the runner saw pair 0's worker finish
                raise RuntimeError("the referee broke")
            if spec.game_id.startswith("duel-w-p2"):
                await asyncio.Event().wait()
            return await play(spec, **options)

        yield stalling


def test_a_failure_stops_the_duel_at_once_without_waiting_for_the_pairs_in_flight(tmp_path: Path) -> None:
    """Three pairs at once; one worker has finished its pairs when another's fails: the duel stops then, with that
    error, and the pair still in flight is cancelled, not waited for (its game would never end here)."""
    gate = asyncio.Event()

    async def run() -> None:
        with DuelStore(tmp_path) as store:
            state = DuelState("duel-w", _settings(max_games=6), {})
            store.create("duel-w", state.settings.to_json())
            with pytest.raises(DuelError, match="the referee broke"):
                await asyncio.wait_for(run_duel(state, store, concurrency=3, on_pair=lambda s: gate.set(),
                                                player=lambda r: _stalling(r, gate), plans=_plans("duel-w")),
                                       HANG_S)  # fmt: skip
            assert [p.pair for p in store.pairs("duel-w")] == [0]

    asyncio.run(run())


def test_a_bad_measure_is_refused_naming_the_measures_and_a_built_in_bot_seed_is_derived_as_documented() -> None:
    """`abluxx duel --measure` names what it accepts; a built-in bot's seed in a pair is the first 8 bytes of
    SHA-256 of "deck_seed/role", big-endian, top bit cleared, so a duel of seeded policies is the same anywhere."""
    with pytest.raises(ValueError) as bad:
        _settings(measure="points")
    assert str(bad.value) == "--measure must be one of score, table, place, got 'points'"
    for deck, role in ((1000, "candidate"), (7, "field0")):
        want = int.from_bytes(hashlib.sha256(f"{deck}/{role}".encode()).digest()[:8], "big") >> 1
        assert _bot_seed(deck, role) == want
