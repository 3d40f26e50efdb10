"""A ladder's run in this process (referee/tournament/ladder_run.py), checked against what a user reads in its
store and output: each choice made from the ratings of exactly the results it saw (a reference built here from
the stored results and `ladder.choose`), the idle entrants and free slots, the games budget, deal sets, the new
bots' addresses, too few entrants in an open and a closed ladder, its secret decks, and what `run_ladder` hands
back and prints (progress, the games log, the crash report, the standings) on a first run, a stopped one and a
rerun."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import re
from collections import Counter, deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs

from referee.engine import EndReason
from referee.fleet import Crash
from referee.match import GameResult, GameSpec
from referee.match.spec import SeatStats
from referee.rating import MU, SIGMA, Rating, Ratings
from referee.store import SqliteStore, open_store
from referee.store import ladder as ladder_store
from referee.store.ladder import LadderEntrant
from referee.tournament import play as play_module
from referee.tournament import progress as progress_module
from referee.tournament.config import TournamentConfig, load
from referee.tournament.deals import PublicDeals, deck_seed
from referee.tournament.ladder import BLOCKS, RULE, WINDOWS, Meetings, Member, choose
from referee.tournament.ladder_run import DEAL_TABLE, Book, LadderHooks, open_ladder, replay, run_ladder
from referee.tournament.presence import Presence
from referee.tournament.runner import GameHooks, standings_of
from referee.tournament.schedule import _slot

from .helpers import config_text, in_process_player

pytestmark = pytest.mark.usefixtures("every_log_level")  # tests/conftest.py: capture_logs sees info events

NAMES = ["rnd", "greedy", "counter", "greedy2", "rnd2", "c2", "c3"]
PROGRESS = re.compile(r"\d+/\w+ games ")  # a progress line: "12/12 games  3.1 games/s  ETA ..."


@pytest.fixture
def text_progress(monkeypatch) -> None:
    """Progress as plain lines on stderr, whatever logging an earlier test in this process configured."""
    monkeypatch.setattr(progress_module, "json_lines", lambda: False)


def ladder(tmp_path: Path, games: int | None, *, public: bool = True, names: list[str] = NAMES,
           more: str = "") -> TournamentConfig:  # fmt: skip
    path = tmp_path / "ladder.toml"
    text = config_text(names, name="lad", seed=4, table_size=3, public_deals=public)
    path.write_text(text + "[ladder]\n" + ("" if games is None else f"games = {games}\n") + more)
    return load(path)


def reference_choice(store: SqliteStore, config: TournamentConfig, k: int) -> list[tuple[str, ...]]:
    """Choice k as the documented rule makes it: from the ratings over the first ``results_seen`` results in the
    order the ladder saw them, the games chosen in choices 0 .. k - 1, their meetings, and the idle entrants (in
    the stored order) and free slots of choice k."""
    tid, settings = config.tournament_id, config.ladder
    assert settings is not None
    rows = ladder_store.rounds(store, tid)
    row = rows[k]
    assert row.results_seen is not None and row.idle is not None and row.free is not None
    rated, view = Ratings(()), {}
    for r in ladder_store.results(store, tid)[: row.results_seen]:  # taken in one at a time, in the order seen
        for name in r.seats:
            rated.join(name)
        rated.add(r.seats, r.places)
        view = rated.all()
    meetings = Meetings(settings.meeting_window)
    for earlier in rows[:k]:
        meetings.add_round(list(earlier.tables or ()))
    scheduled = Counter(n for earlier in rows[:k] for t in earlier.tables or () for n in t)
    last = {n: i for i, t in enumerate(t for earlier in rows[:k] for t in earlier.tables or ()) for n in t}
    owners = {e.name: e.owner for e in ladder_store.entrants(store, tid)}
    members = []
    for name in row.idle:
        r = view.get(name, Rating(MU, SIGMA))  # the prior before its first result
        members.append(Member(name, owners[name], r.mu, r.sigma, scheduled[name], last.get(name, -1)))
    return choose(k, members, settings, config.table_size, config.seed, meetings, row.free,
                  no_repeat=bool(row.in_flight))  # fmt: skip


@pytest.mark.parametrize("public", [True, False], ids=["public", "secret"])
def test_each_choice_is_made_from_the_results_it_saw_and_the_idle_entrants(tmp_path: Path, public: bool) -> None:
    """At concurrency 1 every choice follows the last game's end: it saw every earlier result, every entrant was
    idle, and it equals the reference's tables. A ladder that rated one result more or less, seeded a choice's
    draw with another number than its own, counted the games scheduled wrongly, ignored the meetings or the
    budget would choose other tables; each slot plays its deal set's deck from the ladder's key."""
    config = ladder(tmp_path, 41, public=public, more="max_meetings = 1\nmeeting_window = 3\n")
    tid = config.tournament_id
    with open_store(tmp_path / "d") as store:
        out = asyncio.run(run_ladder(config, store, in_process_player, concurrency=1, progress=False))
        assert out.standings.games == 41
        rows = ladder_store.rounds(store, tid)
        assert len(rows) == 41 and all(r.games == 1 for r in rows)  # one slot: one table a choice
        assert (store.deal_key(tid) is None) == public  # a secret ladder's decks come from its own key
        key = store.deal_key(tid) or PublicDeals(config.seed)
        slots = store.slots(tid)
        for k, row in enumerate(rows):
            assert row.results_seen == k and row.free == 1 and set(row.idle or ()) == set(NAMES), f"choice {k}"
            assert list(row.tables or ()) == reference_choice(store, config, k), f"choice {k}"
            assert slots[k].seats == (row.tables or ())[0]
            assert slots[k].deck_seed == deck_seed(key, tid, 0, slots[k].deal)
        # the same book is read back from the store on a resume
        book = open_ladder(store, config, "").book
        assert book.scheduled == 41 and book.choices == len(rows) and book.seen == 41
        assert book.games == Counter(n for s in slots for n in s.seats)


def result_of(slot, places: tuple[int, ...] = (1, 2, 3)) -> GameResult:
    return GameResult(slot.game_id, (3, 2, 1), places, EndReason.EMPTY_HAND,
                      [SeatStats() for _ in slot.seats], 10, "", None)  # fmt: skip


class StopAfter(GameHooks):
    """Hooks that start no game once ``games`` have finished (as the service's pause or stop does)."""

    def __init__(self, games: int) -> None:
        self.left = games

    def should_continue(self) -> bool:
        return self.left > 0

    def on_done(self, slot, result) -> None:
        self.left -= 1


class Recorder(GameHooks):
    def __init__(self) -> None:
        self.started: list[tuple] = []
        self.done: list[tuple] = []
        self.absent: list[tuple] = []
        self.go = True

    def should_continue(self) -> bool:
        return self.go

    def on_start(self, slot, spec):
        self.started.append((slot, spec))
        return "callback"

    def on_done(self, slot, result) -> None:
        self.done.append((slot, result))

    def on_absent(self, slot, absent) -> None:
        self.absent.append((slot, absent))


@pytest.fixture
def info_logs() -> Iterator[None]:
    """Info-level logs whatever an earlier test configured (a command run in-process at ``--log-level error``
    leaves structlog filtering out info, and capture_logs changes only the processors), restored after."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
    yield
    structlog.configure(**saved)


def test_more_slots_seats_the_idle_entrants_as_slots_free_and_stops_at_the_budget(
    tmp_path: Path, info_logs: None
) -> None:
    config = ladder(tmp_path, 4)
    tid = config.tournament_id
    with open_store(tmp_path / "d") as store:
        opened = open_ladder(store, config, "")
        inner = Recorder()
        with capture_logs() as logs:
            hooks = LadderHooks(store, config, opened.book, {}, inner, slots=4)
            first = hooks.more_slots()  # seven idle entrants fill two tables of 3
        assert first is not None and len(first) == 2
        assert {s.deck_seed for s in first} == {first[0].deck_seed}  # one deal set: owners apart, no one twice
        assert all(s.game_id.startswith(f"{tid}-t0-d{s.deal}-o") for s in first)
        assert [(e["event"], e["choice"], e["tables"], e["idle"], e["present"], e["results_seen"], e["tournament"],
                 e["log_level"]) for e in logs] == [("ladder tables chosen", 0, 2, 7, 7, 0, tid, "info")]  # fmt: skip
        assert hooks.more_slots() == []  # one idle entrant: more may come once a game ends
        assert hooks.waiting is not None and "1 idle entrants" in hooks.waiting
        hooks.on_done(first[0], result_of(first[0]))
        second = hooks.more_slots()  # its three and the idle one: one table, not waiting for the other game
        assert second is not None and len(second) == 1 and hooks.waiting is None
        hooks.on_done(first[1], result_of(first[1]))
        last = hooks.more_slots()
        assert last is not None and len(last) == 1  # the fourth game of the budget
        assert hooks.more_slots() is None  # the budget is scheduled: none will come, results or not
        for s in second + last:
            hooks.on_done(s, result_of(s))
        assert hooks.more_slots() is None
        assert [r.games for r in ladder_store.rounds(store, tid)] == [2, 1, 1]
        # the inner hooks (the service's) see every game and decide whether to go on
        assert [d[0] for d in inner.done] == first + second + last and inner.done[0][1] == result_of(first[0])
        spec = GameSpec(game_id=first[0].game_id, seed=first[0].deck_seed, entrants=())
        assert hooks.on_start(first[0], spec) == "callback" and inner.started == [(first[0], spec)]
        inner.go = False
        assert not hooks.should_continue()


def test_a_game_without_a_result_frees_its_entrants_and_a_stop_ends_the_choices(tmp_path: Path) -> None:
    config = ladder(tmp_path, None)
    with open_store(tmp_path / "d") as store:
        opened = open_ladder(store, config, "")
        hooks = LadderHooks(store, config, opened.book, {}, slots=2)
        first = hooks.more_slots()
        assert first is not None and len(first) == 2
        assert hooks.more_slots() == []  # both slots taken
        hooks.on_done(first[0], None)  # failed: nothing stored, its set is dealt again at the next resume
        again = hooks.more_slots()
        assert again is not None and len(again) == 1 and opened.book.seen == 0
        hooks.stopped = True  # the service's StopTournament: no more choices
        assert hooks.more_slots() is None


def test_a_bot_submitted_while_the_ladder_runs_is_dialled_at_its_address(tmp_path: Path) -> None:
    config = ladder(tmp_path, None)
    tid = config.tournament_id
    with open_store(tmp_path / "d") as store:
        opened = open_ladder(store, config, "")
        ladder_store.submit(store, tid, LadderEntrant("new.v1", "alice", "new", 1, address="10.0.0.9:1"))
        ladder_store.submit(store, tid, LadderEntrant("old.v1", "bob", "old", 1, address="10.0.0.8:1"))
        addresses = {"old.v1": "10.0.0.7:1"}  # known already: kept as it is
        LadderHooks(store, config, opened.book, addresses, slots=8).more_slots()
        # the built-in entrants have no address and get none
        assert addresses == {"old.v1": "10.0.0.7:1", "new.v1": "10.0.0.9:1"}


@pytest.mark.parametrize("is_open", [False, True], ids=["closed", "open"])
def test_too_few_entrants_end_a_closed_ladder_and_leave_an_open_one_waiting(tmp_path: Path, is_open: bool) -> None:
    """Three entrants of one owner never share a table: no table can be seated. A closed ladder ends (None); an
    open one waits for submissions ([])."""
    ladder(tmp_path, None, names=["a", "b", "c"], more=f"open = {str(is_open).lower()}\n")
    text = (tmp_path / "ladder.toml").read_text().replace('policy = "random"', 'policy = "random"\nowner = "ann"')
    (tmp_path / "ladder.toml").write_text(text)
    config = load(tmp_path / "ladder.toml")
    with open_store(tmp_path / "d") as store:
        opened = open_ladder(store, config, "")
        assert LadderHooks(store, config, opened.book, {}, slots=8).more_slots() == ([] if is_open else None)
        assert ladder_store.rounds(store, config.tournament_id) == []


def test_a_ladder_creates_its_secret_key_once_and_a_public_one_none(tmp_path: Path) -> None:
    secret = ladder(tmp_path, 3, public=False)
    with open_store(tmp_path / "s") as store:
        open_ladder(store, secret, "")
        key = store.deal_key(secret.tournament_id)
        assert key is not None
        open_ladder(store, secret, "")
        assert store.deal_key(secret.tournament_id) == key
    public = ladder(tmp_path, 3)
    with open_store(tmp_path / "p") as store:
        open_ladder(store, public, "")
        assert store.deal_key(public.tournament_id) is None
        hooks = LadderHooks(store, public, open_ladder(store, public, "").book, {}, slots=8)
        s = (hooks.more_slots() or [])[0]
        assert s.deck_seed == deck_seed(PublicDeals(4), public.tournament_id, s.table, 0)


@pytest.mark.usefixtures("text_progress")
def test_run_ladder_prints_progress_and_the_games_log_and_hands_back_the_run(tmp_path: Path, capsys,
                                                                             monkeypatch) -> None:  # fmt: skip
    """A whole run with the defaults (progress on): a progress line at the end, one games-log line a game, the
    run's figures and standings files, the fleet's crash report; a rerun plays nothing and prints nothing."""
    config = ladder(tmp_path, 12)
    tid = config.tournament_id
    crash = Crash("rnd", "the bot's process exited with code 7", True)
    real_open = play_module.open_games

    @contextlib.asynccontextmanager
    async def crashing(*args, **kw) -> AsyncIterator:
        async with real_open(*args, **kw) as (play, addresses, scheduled):
            yield play, addresses, scheduled
            addresses.crashes.append(crash)  # as the fleet tells them: once it has closed

    monkeypatch.setattr(play_module, "open_games", crashing)
    log = io.StringIO()
    with open_store(tmp_path / "d") as store:
        out = asyncio.run(run_ladder(config, store, in_process_player, concurrency=1, games_log=log))
        err = capsys.readouterr().err
        assert "12/12 games" in err and "/None" not in err
        lines = log.getvalue().splitlines()
        assert [line.split(" ")[2] for line in lines] == [f"{n}/12" for n in range(1, 13)]
        assert (out.tournament_id, out.played, out.resumed, out.crashes) == (tid, 12, False, [crash])
        assert out.standings == standings_of(store, tid) and out.standings.games == 12
        row = store.tournament(tid)
        assert row is not None and row.finished_at is not None and row.source == ""  # finished once spent
        assert out.json_path == tmp_path / "d" / "standings" / f"{tid}.json" and out.json_path.exists()
        assert out.csv_path == tmp_path / "d" / "standings" / f"{tid}.csv" and out.csv_path.exists()
        monkeypatch.setattr(play_module, "open_games", real_open)
        again = asyncio.run(run_ladder(config, store, in_process_player, concurrency=1, games_log=log))
        assert not PROGRESS.search(capsys.readouterr().err) and len(log.getvalue().splitlines()) == 12
        assert (again.played, again.resumed, again.crashes, again.standings) == (0, True, [], out.standings)
        assert (again.json_path, again.csv_path) == (out.json_path, out.csv_path)


@pytest.mark.usefixtures("text_progress")
def test_a_stopped_ladder_writes_its_standings_and_once_finished_plays_no_more(tmp_path: Path, capsys) -> None:
    """Stopped by its hooks (the service's pause or stop) after one game: not finished, its standings written,
    no progress printed with progress off; resumed, it says so; once the organiser has finished it, a rerun plays
    nothing though its budget is not spent."""
    config = ladder(tmp_path, 12)
    tid = config.tournament_id
    with open_store(tmp_path / "d") as store:
        open_ladder(store, config, "from a test")
        assert not open_ladder(store, config, "").resumed  # stored, but no game played yet
        # a bot submitted to the ladder (in-process games play it as a built-in; its address is what is dialled)
        ladder_store.submit(store, tid, LadderEntrant("sub.v1", "sub", "sub", 1, address="10.0.0.9:1"))
        out = asyncio.run(run_ladder(config, store, in_process_player, concurrency=1, progress=False,
                                     hooks=StopAfter(1)))  # fmt: skip
        assert not PROGRESS.search(capsys.readouterr().err)
        row = store.tournament(tid)
        assert row is not None and row.finished_at is None and row.done == 1 and row.source == "from a test"
        assert (out.played, out.resumed, out.crashes, out.standings.games) == (1, False, [], 1)
        assert out.standings == standings_of(store, tid) and out.json_path.exists() and out.csv_path.exists()
        assert '"games": 1' in out.json_path.read_text()
        second = asyncio.run(run_ladder(config, store, in_process_player, concurrency=1, progress=False,
                                        hooks=StopAfter(2)))  # fmt: skip
        assert (second.played, second.resumed, second.standings.games) == (2, True, 3)
        store.finish(tid, {}, 3)  # the organiser's StopTournament, once the chosen rounds were played
        third = asyncio.run(run_ladder(config, store, in_process_player, concurrency=1, progress=False))
        assert (third.played, third.standings.games) == (0, 3) and len(store.games(tid)) == 3


@pytest.mark.usefixtures("text_progress")
def test_a_ladder_without_a_budget_has_no_progress_bar(tmp_path: Path, capsys) -> None:
    config = ladder(tmp_path, None)

    with open_store(tmp_path / "d") as store:
        out = asyncio.run(run_ladder(config, store, in_process_player, concurrency=1, hooks=StopAfter(3)))
        assert out.played == 3 and not PROGRESS.search(capsys.readouterr().err)


class Clock:
    """time for the progress module alone: 0 when the bar is made, then 6 s on, for ever."""

    def __init__(self) -> None:
        self.calls = 0

    def monotonic(self) -> float:
        self.calls += 1
        return 0.0 if self.calls == 1 else 6.0


@pytest.mark.usefixtures("text_progress")
def test_a_resumed_ladders_progress_counts_from_the_games_stored(tmp_path: Path, capsys, monkeypatch) -> None:
    """Resumed with 6 of 12 games played, the bar starts at 6/12 and its rate counts this run's 6 games only: 1
    game a second over a clock that says 6 s passed."""
    config = ladder(tmp_path, 12)

    with open_store(tmp_path / "d") as store:
        asyncio.run(run_ladder(config, store, in_process_player, concurrency=1, progress=False,
                               hooks=StopAfter(6)))  # fmt: skip
        capsys.readouterr()
        monkeypatch.setattr(progress_module, "time", Clock())
        out = asyncio.run(run_ladder(config, store, in_process_player, concurrency=1))
        assert out.played == 6
        lines = [line for line in capsys.readouterr().err.splitlines() if PROGRESS.search(line)]
        assert lines[0].startswith("7/12 games  0.2 games/s") and lines[-1].startswith("12/12 games  1.0 games/s")


def test_tables_share_deal_sets_across_owners_and_a_deck_stays_secret_until_its_set_closes(tmp_path: Path) -> None:
    """Twelve entrants of six owners at tables of 2 (deal sets of 6 // 2 = 3 tables), two games at a time: a table
    joins the oldest open set it shares no owner with, else opens a new one; a deck is never played twice by one
    owner; the deck is in play (secret) while its set may still take tables, and free once it is closed (full, or
    its last game over) and its games are done."""
    names = [f"p{i:02d}" for i in range(12)]
    ladder(tmp_path, None, names=names)
    text = (tmp_path / "ladder.toml").read_text().replace("table_size = 3", "table_size = 2")
    for i, n in enumerate(names):  # two entrants of each owner
        text = text.replace(f'name = "{n}"', f'name = "{n}"\nowner = "o{i // 2}"')
    (tmp_path / "ladder.toml").write_text(text)
    config = load(tmp_path / "ladder.toml")
    owner = {e.name: e.owner for e in config.entrants}
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=2)
        at_deck: dict[int, list[set[str]]] = {}
        joined = opened = 0
        playing: list = []
        for _ in range(30):
            open_before = {ds.deck_seed: set(ds.owners) for ds in hooks.open.values()}
            for s in hooks.more_slots() or []:
                own = {owner[n] for n in s.seats}
                fits = [seed for seed, o in open_before.items() if o.isdisjoint(own)]
                if s.deck_seed in open_before:
                    joined += 1
                    assert s.deck_seed == fits[0]  # the oldest open set it fits
                else:
                    opened += 1
                    assert not fits and s.deck_seed not in at_deck  # none fitted: a new set, a new deck
                open_before.setdefault(s.deck_seed, set()).update(own)
                if len(at_deck.get(s.deck_seed, [])) == 2:  # its third table: the set is full
                    del open_before[s.deck_seed]
                at_deck.setdefault(s.deck_seed, []).append(own)
                assert store.deal_in_play(s.deck_seed, s.game_id) >= 1  # its set may take more, or is playing
                playing.append(s)
            done = playing.pop(0)
            store.save_game(config.tournament_id, done, result_of(done, (1, 2)))  # as play_slots commits it
            hooks.on_done(done, result_of(done, (1, 2)))
            if done.deal not in hooks.open and all(p.deck_seed != done.deck_seed for p in playing):
                assert store.deal_in_play(done.deck_seed, done.game_id) == 0  # closed and over: revealed
        assert joined and opened
        for tables in at_deck.values():
            assert len(tables) <= 3 and all(a.isdisjoint(b) for i, a in enumerate(tables) for b in tables[i + 1 :])


def test_games_per_hour_paces_the_starts_and_max_concurrent_caps_the_games_at_once(tmp_path: Path) -> None:
    """With a clock the test moves: 3,600 games an hour is one a second (a burst of one), whatever the free slots;
    max_concurrent caps the games at once below the run's concurrency."""
    config = ladder(tmp_path, None, more="games_per_hour = 3600\n")
    now = [100.0]
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=8, clock=lambda: now[0])
        first = hooks.more_slots() or []
        assert len(first) == 1  # seven idle entrants could fill two tables: the pace allows one
        hooks.on_start(first[0], GameSpec(game_id=first[0].game_id, seed=1, entrants=()))
        hooks.on_done(first[0], result_of(first[0]))
        assert hooks.more_slots() == []  # the second game may start a second after the first
        assert hooks.wake_in() == pytest.approx(1.0)  # asked again then, though no game ends meanwhile
        now[0] += 0.999
        assert hooks.more_slots() == [] and hooks.wake_in() == pytest.approx(0.001)
        now[0] += 0.002
        assert len(hooks.more_slots() or []) == 1
        assert hooks.wake_in() == pytest.approx(0.999)  # the third a second after the second
        now[0] += 5.0  # asked late (no game ended for 5 s): the pace's next second, not a wait since missed
        assert hooks.wake_in() == pytest.approx(1.0 - 0.001)
    capped = ladder(tmp_path, None, more="max_concurrent = 1\n")
    with open_store(tmp_path / "c") as store:
        hooks = LadderHooks(store, capped, open_ladder(store, capped, "").book, {}, slots=8)
        assert len(hooks.more_slots() or []) == 1 and hooks.more_slots() == []


def test_an_entrant_plays_at_most_its_games_at_once(tmp_path: Path) -> None:
    """Three entrants of three owners at tables of 2: with games_at_once = 2 each plays two games at a time (all
    three pairs at once); with the default 1, one game at a time, so one table."""
    names = ["a", "b", "c"]
    two = ladder(tmp_path, None, names=names, more="games_at_once = 2\n")
    text = (tmp_path / "ladder.toml").read_text().replace("table_size = 3", "table_size = 2")
    (tmp_path / "ladder.toml").write_text(text)
    two = load(tmp_path / "ladder.toml")
    one = load(tmp_path / "ladder.toml").__class__.from_json({**two.to_json(), "ladder": {}})
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, two, open_ladder(store, two, "").book, {}, slots=8)
        seated = Counter(n for _ in range(3) for s in hooks.more_slots() or [] for n in s.seats)
        assert set(seated.values()) == {2}
    with open_store(tmp_path / "e") as store:
        hooks = LadderHooks(store, one, open_ladder(store, one, "").book, {}, slots=8)
        assert len(hooks.more_slots() or []) == 1 and hooks.more_slots() == []


def test_an_ended_tables_entrants_wait_to_mix_for_a_games_length_then_play(tmp_path: Path) -> None:
    """Four entrants at two tables of 2, every one busy: when one game ends, its two are the only idle entrants.
    They are not seated together again at once (the field would split into fixed pairs); the ladder asks again
    once the median game's length has passed (wake_in), and seats them then, if no other game ended meanwhile.
    The choice stores that it no longer kept them apart, so it recomputes from the store."""
    names = ["a", "b", "c", "d"]
    ladder(tmp_path, None, names=names)
    text = (tmp_path / "ladder.toml").read_text().replace("table_size = 3", "table_size = 2")
    (tmp_path / "ladder.toml").write_text(text)
    config = load(tmp_path / "ladder.toml")
    now = [0.0]
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=2, clock=lambda: now[0])
        first = hooks.more_slots() or []
        assert len(first) == 2 and hooks.wake_in() is None
        for s in first:
            hooks.on_start(s, GameSpec(game_id=s.game_id, seed=1, entrants=()))
        now[0] = 0.5
        store.save_game(config.tournament_id, first[0], result_of(first[0], (1, 2)))
        hooks.on_done(first[0], result_of(first[0], (1, 2)))
        assert hooks.more_slots() == [] and hooks.wake_in() == 0.5  # they wait a game's length to mix
        now[0] = 0.9
        assert hooks.more_slots() == []
        now[0] = 1.0
        again = hooks.more_slots() or []
        assert [set(s.seats) for s in again] == [set(first[0].seats)]  # nobody else came free: they play
        rows = ladder_store.rounds(store, config.tournament_id)
        assert rows[0].in_flight == 0 and rows[1].in_flight == 0  # neither choice kept an ended table apart
        assert all(a == b for _, a, b in replay(store, config))


def test_a_game_stored_but_not_logged_is_logged_at_the_next_read_and_a_table_that_sat_together_repeats(
    tmp_path: Path,
) -> None:
    """The referee killed between a game's commit and the ladder's log of it: the next read logs it after those the
    ladder saw, and the book a resume loads counts it. A table whose entrants were all last seated together is a
    repeat (what a choice while games play avoids); one that mixes two tables is not."""
    config = ladder(tmp_path, None)
    tid = config.tournament_id
    with open_store(tmp_path / "d") as store:
        opened = open_ladder(store, config, "")
        hooks = LadderHooks(store, config, opened.book, {}, slots=2)
        first, second = hooks.more_slots() or []
        hooks.on_done(first, result_of(first))  # seen and logged (its game's commit is not this test's)
        store.mark_started(tid, second.slot)
        store.save_game(tid, second, result_of(second, (2, 1, 3)))  # committed, and killed before the log
        seen = ladder_store.results(store, tid)
        assert [(r.seq, r.slot, r.seats, r.places) for r in seen] == [
            (0, first.slot, first.seats, (1, 2, 3)), (1, second.slot, second.seats, (2, 1, 3))]  # fmt: skip
        book = Book.load(store, config)
        assert book.seen == 2 and book.repeats(first.seats) and book.repeats(second.seats)
        assert not book.repeats((first.seats[0], second.seats[0])) and not book.repeats(("nobody", "none"))
        resumed = LadderHooks(store, config, book, {}, slots=2)
        third, *_ = resumed.more_slots() or []
        resumed.on_done(third, result_of(third))  # seen third: logged after the game it was logged now
        assert [r.slot for r in ladder_store.results(store, tid)] == [first.slot, second.slot, third.slot]


@pytest.mark.parametrize("fault", ["disconnected", "unreachable"])
def test_a_seat_retired_because_its_bot_was_gone_stands_aside_and_one_retired_otherwise_does_not(
    tmp_path: Path, fault: str
) -> None:
    config = ladder(tmp_path, None)
    with open_store(tmp_path / "d") as store:
        opened = open_ladder(store, config, "")
        presence = Presence(clock=lambda: 100.0)
        hooks = LadderHooks(store, config, opened.book, {}, slots=2, presence=presence)
        first, second = hooks.more_slots() or []
        gone, bad, fine = first.seats
        seats = [SeatStats(faults={fault: 1}, retired=True, first_fault=f"{fault} at decision 3"),
                 SeatStats(faults={"invalid": 3}, retired=True, first_fault="invalid at decision 5"),
                 SeatStats(faults={fault: 1})]  # fmt: skip
        hooks.on_done(first, replace(result_of(first), seats=seats))
        assert not presence.available(gone) and presence.down[gone].why == f"{fault} at decision 3"
        assert presence.available(bad) and presence.available(fine)  # a bad bot's game is its own; it is there
        presence.absent(second.seats[0], "no Hello")  # down before, and then it played a game to its end
        hooks.on_done(second, result_of(second))
        assert all(presence.available(n) for n in second.seats)  # those that played to the end are up


def test_a_round_stored_before_choices_counts_from_its_slots_and_the_choices_after_it_check_out(tmp_path: Path) -> None:
    """A store from before choices were kept (``add_round``: slots, no tables, nothing of what they were chosen
    from): its round counts as games and meetings from its slots, and is not recomputed itself."""
    config = ladder(tmp_path, None)
    tid = config.tournament_id
    with open_store(tmp_path / "a") as elsewhere:
        old = LadderHooks(elsewhere, config, open_ladder(elsewhere, config, "").book, {}, slots=2).more_slots() or []
    with open_store(tmp_path / "d") as store:
        open_ladder(store, config, "")
        ladder_store.add_round(store, tid, 0, old)
        book = Book.load(store, config)
        assert book.choices == 1 and sorted(book.games.elements()) == sorted(n for s in old for n in s.seats)
        assert all(book.repeats(s.seats) for s in old)
        hooks = LadderHooks(store, config, book, {}, slots=2)
        for s in old:
            hooks.on_done(s, result_of(s))
        assert hooks.more_slots()
        assert [(choice, stored == again) for choice, stored, again in replay(store, config)] == [(1, True)]


def test_a_table_not_played_for_absent_bots_leaves_the_schedule_and_the_budget_and_its_bots_stand_aside(
    tmp_path: Path, info_logs: None
) -> None:
    config = ladder(tmp_path, 4)
    tid = config.tournament_id
    with open_store(tmp_path / "d") as store:
        opened = open_ladder(store, config, "")
        inner, presence = Recorder(), Presence(clock=lambda: 100.0)
        hooks = LadderHooks(store, config, opened.book, {}, inner, slots=2, presence=presence)
        first, second = hooks.more_slots() or []
        absent = {first.seats[0]: "no Hello: connection refused"}
        with capture_logs() as logs:
            hooks.on_absent(first, absent)
        assert [s.slot for s in store.slots(tid)] == [second.slot] and opened.book.budget_left() == 3
        assert not presence.available(first.seats[0]) and presence.down[first.seats[0]].why == absent[first.seats[0]]
        assert all(presence.available(n) for n in first.seats[1:])
        assert [(e["event"], e["game_id"], e["absent"], e["log_level"]) for e in logs] == [
            ("table not played: bots absent at its start", first.game_id, absent, "warning")]  # fmt: skip
        assert inner.absent == [(first, absent)]
        hooks.on_absent(second, {})  # the other table too: the whole budget is left
        assert store.slots(tid) == [] and opened.book.budget_left() == 4


def small_ladder(tmp_path: Path, names: list[str], table_size: int, more: str = "",
                 owners: dict[str, str] | None = None) -> TournamentConfig:  # fmt: skip
    """A ladder of ``names`` at tables of ``table_size``, each entrant its own owner unless ``owners`` says."""
    ladder(tmp_path, None, names=names, more=more)
    text = (tmp_path / "ladder.toml").read_text().replace("table_size = 3", f"table_size = {table_size}")
    for n, o in (owners or {}).items():
        text = text.replace(f'name = "{n}"', f'name = "{n}"\nowner = "{o}"')
    (tmp_path / "ladder.toml").write_text(text)
    return load(tmp_path / "ladder.toml")


def test_why_a_ladder_waits_names_its_idle_entrants_owners_and_those_down(tmp_path: Path) -> None:
    config = ladder(tmp_path, None)
    with open_store(tmp_path / "d") as store:
        presence = Presence(clock=lambda: 100.0)
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=4, presence=presence)
        first = hooks.more_slots() or []
        idle = set(NAMES) - {n for s in first for n in s.seats}
        presence.absent(first[0].seats[0], "no Hello")
        assert len(first) == 2 and hooks.more_slots() == []
        assert hooks.waiting == (f"{len(idle)} idle entrants of {len(idle)} owners (7 entrants, 1 down); a table of 3"
                                 " needs 3 idle entrants of 3 owners")  # fmt: skip


def test_a_closed_ladder_whose_owners_fill_exactly_one_table_waits_for_a_bot_that_is_down(tmp_path: Path) -> None:
    """Three entrants of three owners at tables of 3, one of them down: no table now, but one once it is back, so
    the closed ladder waits ([]) rather than ending (None)."""
    config = small_ladder(tmp_path, ["a", "b", "c"], 3)
    with open_store(tmp_path / "d") as store:
        presence = Presence(clock=lambda: 100.0)
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=2, presence=presence)
        presence.absent("a", "no Hello")
        assert hooks.more_slots() == []


def test_the_wait_to_mix_is_a_second_before_any_games_length_is_known_then_the_games_length(tmp_path: Path) -> None:
    """As in the test above, but a game's length measured on a clock that does not start at 0, and a table whose
    game's start the ladder never saw (a resumed run's): the wait is then 1 s."""
    config = small_ladder(tmp_path, ["a", "b", "c", "d"], 2)
    now = [100.0]
    for started, wait in ((True, 0.5), (False, 1.0)):
        now[0] = 100.0
        with open_store(tmp_path / f"d{started}") as store:
            book = open_ladder(store, config, "").book
            hooks = LadderHooks(store, config, book, {}, slots=2, clock=lambda: now[0])
            first = hooks.more_slots() or []
            for s in first if started else []:
                hooks.on_start(s, GameSpec(game_id=s.game_id, seed=1, entrants=()))
            now[0] = 100.5
            hooks.on_done(first[0], result_of(first[0], (1, 2)))
            assert hooks.more_slots() == [] and hooks.wake_in() == wait, started


def test_deal_tables_one_gives_each_table_its_own_deck_and_a_full_set_reveals_its_deck_at_its_games_end(
    tmp_path: Path,
) -> None:
    """deal_tables = 1: two tables chosen together are two deal sets, numbered on, each full at once, so that no
    other game keeps its deck secret once its own game is over. Without deal_tables, five owners at tables of 3
    make sets of 5 // 3 = 1 table: full at once too."""
    config = ladder(tmp_path, None, more="deal_tables = 1\n")
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=4)
        first = hooks.more_slots() or []
        assert [s.deal for s in first] == [0, 1] and first[0].deck_seed != first[1].deck_seed
        assert [s.deal for s in hooks.more_slots() or []] == [] and hooks.open == {}
        assert all(store.deal_in_play(s.deck_seed, s.game_id) == 0 for s in first)
    five = small_ladder(tmp_path, NAMES[:5], 3)
    with open_store(tmp_path / "e") as store:
        hooks = LadderHooks(store, five, open_ladder(store, five, "").book, {}, slots=4)
        (only,) = hooks.more_slots() or []
        assert store.deal_in_play(only.deck_seed, only.game_id) == 0 and hooks.open == {}


def test_a_sets_last_game_closes_that_set_alone(tmp_path: Path) -> None:
    """Two tables of 2 that share an owner cannot share a deal set: two sets, each open for more tables (deal_tables
    = 3). The end of one's only game closes it; the other's deck stays secret while its set may take tables. Two
    tables of four owners share one set, which stays open while one of its games plays."""
    owners = {"a": "x", "b": "x", "c": "y", "d": "y"}
    config = small_ladder(tmp_path, ["a", "b", "c", "d"], 2, more="deal_tables = 3\n", owners=owners)
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=2)
        first, second = hooks.more_slots() or []
        assert first.deal != second.deal and sorted(hooks.open) == [first.deal, second.deal]
        store.save_game(config.tournament_id, first, result_of(first, (1, 2)))
        hooks.on_done(first, result_of(first, (1, 2)))
        assert list(hooks.open) == [second.deal] and store.deal_in_play(first.deck_seed, first.game_id) == 0
        assert store.deal_in_play(second.deck_seed, second.game_id) == 1  # its open set
    apart = small_ladder(tmp_path, ["a", "b", "c", "d"], 2, more="deal_tables = 3\n")
    with open_store(tmp_path / "e") as store:  # four owners: both tables join one set, which outlives one game
        hooks = LadderHooks(store, apart, open_ladder(store, apart, "").book, {}, slots=2)
        first, second = hooks.more_slots() or []
        assert first.deal == second.deal
        store.save_game(apart.tournament_id, first, result_of(first, (1, 2)))
        hooks.on_done(first, result_of(first, (1, 2)))
        assert list(hooks.open) == [first.deal] and store.deal_in_play(second.deck_seed, second.game_id) == 1


def test_a_ladder_never_plays_more_games_at_once_than_its_slots(tmp_path: Path) -> None:
    """Twelve entrants at tables of 3 and two slots: after a game ends and a new table takes its slot, both slots
    are taken again, though six entrants are idle."""
    config = small_ladder(tmp_path, [f"p{i}" for i in range(12)], 3)
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=2)
        first = hooks.more_slots() or []
        assert len(first) == 2
        hooks.on_done(first[0], result_of(first[0]))
        assert len(hooks.more_slots() or []) == 1
        assert hooks.more_slots() == []


def test_the_pace_counts_every_game_started(tmp_path: Path) -> None:
    """3,600 games an hour: two games started by 1.5 s, the pace allows none more until the clock reaches 2 s."""
    config = ladder(tmp_path, None, more="games_per_hour = 3600\n")
    now = [100.0]
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=8, clock=lambda: now[0])
        for at in (100.0, 101.0):
            now[0] = at
            (s,) = hooks.more_slots() or []
            hooks.on_start(s, GameSpec(game_id=s.game_id, seed=1, entrants=()))
            hooks.on_done(s, result_of(s))
        now[0] = 101.5
        assert hooks.more_slots() == []
        now[0] = 102.0
        assert len(hooks.more_slots() or []) == 1


def test_a_round_stored_before_choices_keeps_its_meetings_in_the_choices_replayed_after_it(tmp_path: Path) -> None:
    """Two rounds stored before choices, then a choice with max_meetings = 1: the pairs that met in the old rounds
    may not meet again, so the choice depends on them, and replay, recomputing it from the store, agrees."""
    config = ladder(tmp_path, None, more="max_meetings = 1\nmeeting_window = 5\n")
    tid = config.tournament_id
    with open_store(tmp_path / "a") as elsewhere:
        old_hooks = LadderHooks(elsewhere, config, open_ladder(elsewhere, config, "").book, {}, slots=2)
        old = [old_hooks.more_slots() or []]
        for s in old[0]:
            old_hooks.on_done(s, result_of(s))
        old.append(old_hooks.more_slots() or [])
    with open_store(tmp_path / "d") as store:
        open_ladder(store, config, "")
        for number, slots in enumerate(old):
            ladder_store.add_round(store, tid, number, slots)
        book = Book.load(store, config)
        hooks = LadderHooks(store, config, book, {}, slots=2)
        for s in old[0] + old[1]:
            hooks.on_done(s, result_of(s))
        hooks.more_slots()
        again = replay(store, config)
        assert [(choice, stored == recomputed) for choice, stored, recomputed in again] == [(2, True)]
        unmet = Book(config)  # the same choice made as if the old rounds had not met
        (_, stored, _), row = again[0], ladder_store.rounds(store, tid)[2]
        for r in ladder_store.results(store, tid)[: row.results_seen]:
            unmet.add_result(r.seats, r.places)
        by_name = {e.name: e for e in ladder_store.entrants(store, tid)}
        unmet.choices = 2
        assert tuple(unmet.choose([by_name[n] for n in row.idle or ()], row.free or 0)) != stored


def test_rounds_stored_before_choices_each_count_only_their_own_tables_in_replay(tmp_path: Path) -> None:
    """Four rounds stored before choices, then eight choices with max_meetings = 1 over a window of 1 choice: only
    the last round's pairs are kept apart, and each old round's tables count once as games. Replay records each old
    round as its own slots, so it makes every choice the ladder made; had it counted earlier rounds' tables again
    with each round's, it would keep more pairs apart and count more games."""
    config = ladder(tmp_path, None, more="max_meetings = 1\nmeeting_window = 1\n")
    tid = config.tournament_id
    with open_store(tmp_path / "a") as elsewhere:
        old_hooks = LadderHooks(elsewhere, config, open_ladder(elsewhere, config, "").book, {}, slots=2)
        old: list[list] = []
        for _ in range(4):
            old.append(old_hooks.more_slots() or [])
            for s in old[-1]:
                old_hooks.on_done(s, result_of(s))
    with open_store(tmp_path / "d") as store:
        open_ladder(store, config, "")
        for number, slots in enumerate(old):
            ladder_store.add_round(store, tid, number, slots)
        hooks = LadderHooks(store, config, Book.load(store, config), {}, slots=2)
        for s in [s for slots in old for s in slots]:
            hooks.on_done(s, result_of(s))
        for _ in range(8):
            for s in hooks.more_slots() or []:
                hooks.on_done(s, result_of(s))
        again = replay(store, config)
        assert [(choice, stored == recomputed) for choice, stored, recomputed in again] == [
            (n, True) for n in range(4, 12)
        ]


def test_the_wait_to_mix_follows_the_last_32_games_not_older_ones(tmp_path: Path) -> None:
    """Four entrants at two tables of 2, 71 games: the last 32 are 16 of 1 s and 16 of 3 s (the last one's
    table-mate still playing), and every older one took 3 s. An ended table's entrants wait the last 32 games'
    median, 2 s, to mix: not 3 s, the median of 33 or of every game so far."""
    config = small_ladder(tmp_path, ["a", "b", "c", "d"], 2)
    now = [100.0]
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=2, clock=lambda: now[0])
        for length, ending in [(3.0, 2)] * 20 + [(1.0, 2)] * 8 + [(3.0, 2)] * 7 + [(3.0, 1)]:
            pair = hooks.more_slots() or []
            assert len(pair) == 2
            for s in pair:
                hooks.on_start(s, GameSpec(game_id=s.game_id, seed=1, entrants=()))
            now[0] += length
            for s in pair[:ending]:
                hooks.on_done(s, result_of(s, (1, 2)))
        assert hooks.more_slots() == [] and hooks.wake_in() == 2.0


def test_a_resumed_ladder_closes_the_sets_an_earlier_run_left_open(tmp_path: Path) -> None:
    """A set that could still take tables when the run stopped takes none after: its deck is no longer kept
    secret for tables to come, only for its own games not yet played."""
    config = small_ladder(tmp_path, ["a", "b", "c", "d"], 2, more="deal_tables = 3\n")
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=2)
        first, second = hooks.more_slots() or []
        store.save_game(config.tournament_id, first, result_of(first, (1, 2)))
        assert store.deal_in_play(first.deck_seed, second.game_id) == 1  # its set may take more tables
        LadderHooks(store, config, Book.load(store, config), {}, slots=2)  # the next run's
        assert store.deal_in_play(first.deck_seed, second.game_id) == 0


def test_a_table_chosen_and_not_yet_started_counts_against_the_pace_and_is_no_reason_to_wait(tmp_path: Path) -> None:
    config = ladder(tmp_path, None, more="games_per_hour = 3600\n")
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=8, clock=lambda: 100.0)
        assert len(hooks.more_slots() or []) == 1
        assert hooks.more_slots() == [] and hooks.waiting is None  # the pace, not the entrants, holds it back


def test_the_last_choice_of_a_budget_seats_only_the_games_left(tmp_path: Path) -> None:
    config = ladder(tmp_path, 1)
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=4)
        assert len(hooks.more_slots() or []) == 1  # seven idle entrants and four slots: two tables, but one left


def test_a_choice_counts_a_missed_game_for_each_entrant_down_and_none_for_those_up(tmp_path: Path) -> None:
    config = ladder(tmp_path, None)
    with open_store(tmp_path / "d") as store:
        presence = Presence(clock=lambda: 100.0)
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=4, presence=presence)
        presence.absent("rnd", "no Hello")
        assert len(hooks.more_slots() or []) == 2
        assert presence.missed_games == Counter({"rnd": 1})


def test_a_resumed_book_counts_the_games_chosen_and_not_played_and_the_tables_not_played(tmp_path: Path) -> None:
    """Twelve entrants, two tables of 3 chosen and still to play when the run stopped, one table before them not
    played for an absent bot: the next run's book counts the two as taking their slots and their entrants (with two
    slots nothing more is seated; with four, only the six others), and the absent table's entrants as chosen once."""
    config = small_ladder(tmp_path, [f"p{i}" for i in range(12)], 3)
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=3)
        gone, *pending = hooks.more_slots() or []
        hooks.on_absent(gone, {gone.seats[0]: "no Hello"})
        assert len(pending) == 2 and Book.load(store, config).games == Counter(
            n for s in [gone, *pending] for n in s.seats
        )
        assert LadderHooks(store, config, Book.load(store, config), {}, slots=2).more_slots() == []
        more = LadderHooks(store, config, Book.load(store, config), {}, slots=4).more_slots() or []
        playing = {n for s in pending for n in s.seats}
        assert len(more) == 2 and not playing & {n for s in more for n in s.seats}


def test_each_table_recorded_is_a_table_of_its_own_and_choose_alone_lets_a_table_repeat(tmp_path: Path) -> None:
    """Three tables recorded in one choice: entrants of two of them were not seated together, so a table of them
    is no repeat. ``Book.choose`` without the games in flight (as scripts/bench_ladder.py asks) seats a table that
    sat together last time; two entrants never seated are no repeat."""
    config = small_ladder(tmp_path, ["a", "b", "c", "d", "e", "f"], 2)
    with open_store(tmp_path / "d") as store:
        book = open_ladder(store, config, "").book
        book.record([("a", "b"), ("c", "d"), ("e", "f")])
        assert not book.repeats(("c", "e")) and not book.repeats(("a", "c")) and book.repeats(("e", "f"))
        pair = [e for e in ladder_store.entrants(store, config.tournament_id) if e.name in ("e", "f")]
        assert [set(t) for t in book.choose(pair, 1)] == [{"e", "f"}]
        fresh = Book(config)  # never seated: no repeat, even while games play
        assert [set(t) for t in fresh.choose(pair, 1, in_flight=1)] == [{"e", "f"}]


def test_a_new_book_has_the_whole_budget_left(tmp_path: Path) -> None:
    """As scripts/bench_ladder.py builds one, without a store: nothing scheduled yet."""
    assert Book(ladder(tmp_path, 5)).budget_left() == 5 and Book(ladder(tmp_path, None)).budget_left() is None


def test_results_keep_the_order_the_ladder_saw_them_and_a_mended_one_its_place(tmp_path: Path) -> None:
    """Three tables: the last one's game ends first, then the first's; the second's is committed and the referee
    killed before the ladder logged it. Its result is logged at the next read, third, and stays third after a
    later result; each row's seq is its place in that order, not its slot."""
    config = ladder(tmp_path, None, names=[f"p{i}" for i in range(9)])
    tid = config.tournament_id
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=3)
        a, b, c = hooks.more_slots() or []
        for s in (c, a):  # as play_slots does: the game committed, then the ladder told
            store.save_game(tid, s, result_of(s))
            hooks.on_done(s, result_of(s))
        store.mark_started(tid, b.slot)
        store.save_game(tid, b, result_of(b))
        assert [(r.seq, r.slot) for r in ladder_store.results(store, tid)] == [(0, c.slot), (1, a.slot), (2, b.slot)]
        resumed = LadderHooks(store, config, Book.load(store, config), {}, slots=3)
        (d, *_) = resumed.more_slots() or []
        store.save_game(tid, d, result_of(d))
        resumed.on_done(d, result_of(d))
        assert [r.slot for r in ladder_store.results(store, tid)] == [c.slot, a.slot, b.slot, d.slot]


def test_a_choice_stored_before_in_flight_was_kept_keeps_its_tables(tmp_path: Path) -> None:
    """A store an older referee wrote: its choices' in_flight is NULL (the column came later), their tables not."""
    config = ladder(tmp_path, None)
    tid = config.tournament_id
    with open_store(tmp_path / "d") as store:
        first = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=2).more_slots() or []
        store.db.execute("UPDATE ladder_rounds SET in_flight = NULL WHERE tournament_id = ?", (tid,))
        (row,) = ladder_store.rounds(store, tid)
        assert row.in_flight is None and row.tables == tuple(s.seats for s in first)


def test_a_version_no_longer_present_holds_no_place_in_the_windows(tmp_path: Path) -> None:
    """The windows cut the mu order of the field present: earlier versions (superseded, retired) keep their
    ratings but no place, so the idle are paired as if those had never played. Under the one-day rule that kept
    every rated entrant (``WINDOWS``, made again only for choices stored with it) the left versions' places change
    the tables."""
    names = [f"e{i}" for i in range(8)]
    config = small_ladder(tmp_path, names, 2)
    idle = [LadderEntrant(n, n, n) for n in names]
    mus = {n: Rating(10.0 + i, 2.0) for i, n in enumerate(names)}
    ghosts = {f"old{i}": Rating(10.25 + i * 0.5, 2.0) for i in range(14)}  # between and among the present
    with_ghosts, without = Book(config), Book(config)
    with_ghosts.view, without.view = {**mus, **ghosts}, dict(mus)
    differ = 0
    for _ in range(12):
        tables = with_ghosts.choose(idle, 4, present=set(names))
        assert tables == without.choose(idle, 4, present=set(names))
        assert tables == without.choose(idle, 4)  # None: every rated entrant is present
        differ += tables != with_ghosts.choose(idle, 4, rule=WINDOWS, present=set(names))
        with_ghosts.record(tables)
        without.record(tables)
    assert differ >= 3


def test_choices_made_around_a_superseded_version_check_out(tmp_path: Path, monkeypatch) -> None:
    """An open ladder with games in flight (so the windows hold busy entrants' places) where a bot's second
    version replaces its first: every choice recomputes from the store, the field present at each choice taken
    from the entrants' stored rounds. Replayed as if every rated version were present, the choices after the
    new version differ."""
    names = [f"f{i}" for i in range(7)]
    config = small_ladder(tmp_path, names, 2, more="open = true\n")
    tid = config.tournament_id
    with open_store(tmp_path / "d") as store:
        hooks = LadderHooks(store, config, open_ladder(store, config, "").book, {}, slots=3)
        ladder_store.submit(store, tid, LadderEntrant("x.v1", "alice", "x", 1, address="10.0.0.9:1"))
        playing: deque = deque()
        for step in range(40):
            if step == 20:
                ladder_store.submit(store, tid, LadderEntrant("x.v2", "alice", "x", 2, address="10.0.0.9:2"))
            for s in hooks.more_slots() or []:
                hooks.on_start(s, GameSpec(game_id=s.game_id, seed=1, entrants=()))
                playing.append(s)
            done = playing.popleft()
            places = (1, 2) if min(done.seats) < max(done.seats) else (2, 1)  # the name first in order wins
            store.save_game(tid, done, result_of(done, places))
            hooks.on_done(done, result_of(done, places))
        checked = replay(store, config)
        assert len(checked) > 25 and all(stored == again for _, stored, again in checked)
        assert any("x.v2" in t for _, stored, _ in checked for t in stored)
        choose_any = Book.choose
        monkeypatch.setattr(Book, "choose", lambda self, idle, free, in_flight=0, rule=RULE, present=None:
                            choose_any(self, idle, free, in_flight, rule))  # fmt: skip
        assert any(stored != again for _, stored, again in replay(store, config))


def test_each_round_stored_before_choices_counts_its_own_slots_once(tmp_path: Path) -> None:
    """Three rounds stored before choices, one table each, then a choice from the ratings they left: a resumed
    book and replay each count every old round's own slots once (its games, its meetings), so the choice after them
    checks out. Had a round counted the slots before it again, the entrants of the first tables would have more
    games in the resumed book. (Replay's own count is held by the test of eight choices after four old rounds:
    with the draw probability 0.01 this one choice comes out the same either way.)"""
    config = small_ladder(tmp_path, ["a", "b", "c", "d"], 2)
    tid = config.tournament_id
    tables = [("a", "b"), ("c", "a"), ("b", "d")]
    old = [_slot(tid, i, DEAL_TABLE, i, 0, 11 + i, t) for i, t in enumerate(tables)]
    with open_store(tmp_path / "d") as store:
        open_ladder(store, config, "")
        for i, s in enumerate(old):
            ladder_store.add_round(store, tid, i, [s])
        book = Book.load(store, config)
        assert book.games == Counter(n for t in tables for n in t) and book.choices == 3
        hooks = LadderHooks(store, config, book, {}, slots=1)
        for s in old:
            hooks.on_done(s, result_of(s, (1, 2)))  # the first seat wins: every rating differs
        assert len(hooks.more_slots() or []) == 1
        assert [(choice, stored == again) for choice, stored, again in replay(store, config)] == [(3, True)]


def test_the_book_passes_the_busy_entrants_present_and_the_rule_asked_for(tmp_path: Path) -> None:
    """``Book.choose`` hands ``choose`` the μ of the entrants present and not idle (busy, or down), which hold
    their places in the windows, and the rule it was asked for (replay asks for each choice's stored one): its
    tables are ``choose``'s own, and differ from those of a field without the busy and of the blocks."""
    names = [f"e{i}" for i in range(8)]
    config = small_ladder(tmp_path, names, 2)
    settings = config.ladder
    assert settings is not None
    book = Book(config)
    book.view = {n: Rating(10.0 + i, 2.0) for i, n in enumerate(names)} | {"gone": Rating(12.5, 2.0)}
    idle = [LadderEntrant(n, n, n) for n in names[::2]]  # every other one idle; the rest play
    members = [Member(e.name, e.owner, book.view[e.name].mu, 2.0, 0) for e in idle]
    busy = [book.view[n].mu for n in names[1::2]]
    without_busy = from_blocks = 0
    for c in range(16):
        book.choices = c

        def made(others: list[float], rule: int, c: int = c) -> list[tuple[str, ...]]:
            return choose(c, members, settings, 2, config.seed, Meetings(0), 2, others=others, rule=rule)

        tables = book.choose(idle, 2, present=set(names))
        assert tables == made(busy, RULE)
        without_busy += tables != made([], RULE)
        blocks = book.choose(idle, 2, rule=BLOCKS, present=set(names))
        assert blocks == made(busy, BLOCKS)
        from_blocks += blocks != tables
    assert without_busy and from_blocks


def test_choices_stored_without_a_draw_probability_check_out_with_the_ratings_they_were_made_from(
    tmp_path: Path, monkeypatch
) -> None:
    """A ladder whose choices read ratings of the draw probability 0.05 and stored none (as before 2026-12-07):
    ``replay`` rates the results with 0.05 for them, so every choice checks out; rated with today's 0.01 some
    differ. A resumed book chooses from today's ratings and stores 0.01, and the whole history still checks out."""
    names = [f"g{i}" for i in range(8)]
    config = small_ladder(tmp_path, names, 2)
    tid = config.tournament_id
    beats = {n: i % 3 for i, n in enumerate(names)}  # close skills: small changes of mu reorder them

    def play(hooks: LadderHooks, steps: int, at: int) -> None:
        playing: deque = deque()
        for step in range(at, at + steps):
            for s in hooks.more_slots() or []:
                hooks.on_start(s, GameSpec(game_id=s.game_id, seed=1, entrants=()))
                playing.append(s)
            done = playing.popleft()
            a, b = done.seats
            first = (beats[a] + step) % 4 >= (beats[b] + step * 7) % 5  # winners mixed, deterministic
            places = (1, 2) if first else (2, 1)
            store.save_game(tid, done, result_of(done, places))
            hooks.on_done(done, result_of(done, places))

    with open_store(tmp_path / "d") as store:
        book = open_ladder(store, config, "").book
        book.rated_with(0.05, [])  # a fresh book: nothing seen yet
        play(LadderHooks(store, config, book, {}, slots=3), 60, 0)
        store.db.execute("UPDATE ladder_rounds SET draw_probability = NULL WHERE tournament_id = ?", (tid,))
        old = replay(store, config)
        assert len(old) > 40 and all(stored == again for _, stored, again in old)
        with monkeypatch.context() as m:
            m.setattr(Book, "rated_with", lambda self, p, seen: None)  # every choice from today's ratings
            assert any(stored != again for _, stored, again in replay(store, config))

        resumed = Book.load(store, config)
        assert resumed.ratings.draw_probability == 0.01
        play(LadderHooks(store, config, resumed, {}, slots=3), 20, 60)
        kept = [r.draw_probability for r in ladder_store.rounds(store, tid)]
        assert kept[: len(old)] == [None] * len(old) and set(kept[len(old) :]) == {0.01}
        again = replay(store, config)
        assert len(again) > len(old) and all(stored == made for _, stored, made in again)
