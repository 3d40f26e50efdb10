"""Playing a duel: pairs of games on the same cards, once with the candidate and once with the baseline
(docs/duel.md).

A pair is one fresh secret deal. Its first game seats the candidate, its second the baseline in the candidate's
place; everything else is the same: the deck, the seats, the field bots and their seeds, the game id (bots that
seed themselves from it, as the kit's do, play the same way twice). At table size 2 the two games are the seat
rotation of the deal (candidate and baseline swap seats); at 3 to 5 the candidate holds seat ``pair mod K`` in the
first game and the baseline holds it in the second, against the same field.

The two games of a pair run one after the other, never at once, and every command bot is started afresh for each
game and stopped after it, so no process of theirs sees the deal twice. Up to ``concurrency`` pairs run at once,
in this process or on the fleet's workers (``workers``: local worker processes or Ray actors, referee/fleet): the
same pairs, the same games. The test reads the pairs in their order (0, 1, 2, ...), so which pair finished first,
or on which worker, does not change a verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from referee.errors import GameLost, Precondition
from referee.fleet import EntrantError, Lineup, OnDecision, PlayerFactory, WorkerSettings, match_player, open_games
from referee.log import get_logger
from referee.match import ChannelPool, EntrantRef, GameResult, GameSpec, play_game
from referee.stats import Sequential, Sprt, Summary, Verdict, summarize
from referee.tournament.config import EntrantConfig
from referee.tournament.deals import fresh_seed

from .measure import DEFAULT_MARGIN, MEASURES, check_margin, default_measure
from .store import DuelRow, DuelStore, PairRow

DEFAULT_MAX_GAMES = 4000
DEFAULT_FIELD = ("greedy", "counter", "random", "greedy")  # the example bots, as built-in policies: seats 3 to 5
MAX_CONCURRENCY = 1024
MEASURE_DEFAULT = Sprt()  # a duel's test when none is given: its margin becomes the measure's (DEFAULT_MARGIN)


@dataclass(frozen=True)
class DuelSettings:
    """What a duel plays; stored with it, so a resume plays the same."""

    candidate: EntrantConfig
    baseline: EntrantConfig
    field: tuple[EntrantConfig, ...]  # field_size(table_size) bots
    table_size: int = 2
    max_games: int = DEFAULT_MAX_GAMES
    test: Sprt = MEASURE_DEFAULT  # by default, Sprt's defaults with the measure's default margin
    measure: str = ""  # one of MEASURES; "" is default_measure(table_size)

    def __post_init__(self) -> None:
        if not self.measure:
            object.__setattr__(self, "measure", default_measure(self.table_size))
        if self.measure not in MEASURES:
            raise ValueError(f"--measure must be one of {', '.join(MEASURES)}, got {self.measure!r}")
        if self.test is MEASURE_DEFAULT:
            object.__setattr__(self, "test", dataclasses.replace(self.test, margin=DEFAULT_MARGIN[self.measure]))
        if not 2 <= self.table_size <= 5:
            raise ValueError(f"--table-size must be 2 to 5, got {self.table_size}")
        if len(self.field) != field_size(self.table_size):
            raise ValueError(
                f"a table of {self.table_size} needs a field of {field_size(self.table_size)} bot(s), got "
                f"{len(self.field)}"
            )
        names = [e.name for e in (self.candidate, self.baseline, *self.field)]
        if len(set(names)) < len(names):
            raise ValueError(f"every bot of a duel needs its own name, got {', '.join(names)}")
        if self.max_games < 2:
            raise ValueError(f"--max-games must be at least 2 (one pair), got {self.max_games}")
        check_margin(self.test.margin, self.measure, self.table_size)

    @property
    def max_pairs(self) -> int:
        return self.max_games // 2

    def to_json(self) -> dict[str, Any]:
        return {
            "candidate": _entrant_json(self.candidate),
            "baseline": _entrant_json(self.baseline),
            "field": [_entrant_json(e) for e in self.field],
            "table_size": self.table_size,
            "max_games": self.max_games,
            "alpha": self.test.alpha,
            "beta": self.test.beta,
            "margin": self.test.margin,
            "measure": self.measure,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> DuelSettings:
        return cls(
            candidate=_entrant(d["candidate"]),
            baseline=_entrant(d["baseline"]),
            field=tuple(_entrant(e) for e in d["field"]),
            table_size=d["table_size"],
            max_games=d["max_games"],
            test=Sprt(d["alpha"], d["beta"], d["margin"]),
            measure=d.get("measure", "score"),  # duels stored before the measure was a setting measured scores
        )


def _entrant_json(e: EntrantConfig) -> dict[str, Any]:
    sandboxed = {"sandbox": True, "files": e.files} if e.sandbox else {}  # only when set: older duels' JSON as it was
    return {"name": e.name, "address": e.address, "command": list(e.command) if e.command else None,
            "policy": e.policy, **sandboxed}  # fmt: skip


def _entrant(d: dict[str, Any]) -> EntrantConfig:
    command = tuple(d["command"]) if d.get("command") else None
    return EntrantConfig(name=d["name"], address=d.get("address"), command=command, policy=d.get("policy"),
                         sandbox=d.get("sandbox", False), files=d.get("files"))  # fmt: skip


def new_id(kind: str) -> str:
    """A new duel's or gauntlet's id: ``kind``, the time and a random tail."""
    return f"{kind}-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def field_size(table_size: int) -> int:
    """The field's bots: every seat but the candidate's at 3 to 5 players; none at 2, where the pair is the seat
    rotation of the candidate and the baseline."""
    return 0 if table_size == 2 else table_size - 1


def default_field(table_size: int) -> tuple[EntrantConfig, ...]:
    policies = DEFAULT_FIELD[: field_size(table_size)]
    return tuple(EntrantConfig(name=f"{p}#{i + 2}", policy=p) for i, p in enumerate(policies))


def _bot_seed(deck_seed: int, role: str) -> int:
    """A built-in policy's seed in a pair: the same for a role in both games (the field plays the same), different
    for the candidate and the baseline (an A/A test of a random policy compares two independent streams)."""
    return int.from_bytes(hashlib.sha256(f"{deck_seed}/{role}".encode()).digest()[:8], "big") >> 1


@dataclass(frozen=True)
class PairPlan:
    """One pair: its deal and, for each of its two games, who sits where (by role)."""

    pair: int
    deck_seed: int
    seat: int  # the candidate's seat in the first game
    game_id: str

    def roles(self, table_size: int, second: bool) -> list[str]:
        """The roles by seat: "candidate", "baseline", "field0", ... The second game swaps the candidate and the
        baseline (at table size 2 that is the seat rotation)."""
        field = iter(f"field{i}" for i in range(field_size(table_size)))
        seats = []
        for s in range(table_size):
            if s == self.seat:
                seats.append("candidate")
            elif table_size == 2:
                seats.append("baseline")
            else:
                seats.append(next(field))
        if second:
            swap = {"candidate": "baseline", "baseline": "candidate"}
            seats = [swap.get(r, r) for r in seats]
        return seats


def paired_difference(
    roles_first: list[str], first: GameResult, second: GameResult, measure: str = "score"
) -> tuple[float, float]:
    """(the measured difference, the place difference) of the candidate against the baseline on the same cards,
    averaged over the seats they held. ``measure`` "score": the score difference in points per game; "table": the
    score relative to the table (the seat's score minus the mean of the other seats' in that game) against the
    baseline's; "place": the place difference. The place difference is the baseline's place minus the
    candidate's (positive: the candidate placed better)."""
    diffs, places = [], []
    for seat, role in enumerate(roles_first):
        if role not in ("candidate", "baseline"):
            continue
        sign = 1 if role == "candidate" else -1
        if measure == "table":
            diffs.append(sign * (_table_relative(first, seat) - _table_relative(second, seat)))
        else:
            diffs.append(sign * (first.scores[seat] - second.scores[seat]))
        places.append(sign * (second.places[seat] - first.places[seat]))
    place = sum(places) / len(places)
    return (place if measure == "place" else sum(diffs) / len(diffs)), place


def _table_relative(game: GameResult, seat: int) -> float:
    others = [s for i, s in enumerate(game.scores) if i != seat]
    return game.scores[seat] - sum(others) / len(others)


@dataclass
class DuelState:
    """A duel so far: its stored pairs, and the test on them in their order (pairs 0, 1, 2, ...) whatever order
    they finished in. The verdict is the one at the first pair count whose LLR crosses a bound; pairs that finish
    after it (they were in flight) are stored but never counted: not in the verdict, the mean or the LLR
    (``later``). The one place both the in-process runner and any other way of playing pairs order them."""

    duel_id: str
    settings: DuelSettings
    pairs: dict[int, PairRow]
    kept: tuple[Verdict, int] | None = None  # a stored verdict and its pair count: a resume keeps it
    _run: Sequential | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def stored(cls, store: DuelStore, row: DuelRow) -> DuelState:
        """A stored duel with the pairs it has played (and its verdict at the first crossing, if it has one)."""
        kept = None
        if row.verdict in (Verdict.H1, Verdict.H0) and row.verdict_pairs is not None:
            kept = (Verdict(row.verdict), row.verdict_pairs)
        return cls(row.id, DuelSettings.from_json(row.settings), {p.pair: p for p in store.pairs(row.id)}, kept)

    def record(self, row: PairRow) -> bool:
        """A finished pair (in any order); whether the duel is now decided or its budget spent."""
        self.pairs[row.pair] = row
        return self.finished()

    def prefix(self) -> list[PairRow]:
        out: list[PairRow] = []
        while len(out) in self.pairs:
            out.append(self.pairs[len(out)])
        return out

    def decision(self) -> tuple[Verdict, int]:
        """(verdict, the pairs it counts): at the first crossing, else every pair of the unbroken prefix. The test
        runs on as the prefix grows (its LLR is not computed again from pair 0 each time)."""
        if self.kept is not None:
            return self.kept
        run = self._run
        if run is None or (run.test, run.max_pairs) != (self.settings.test, self.settings.max_pairs):
            run = self._run = Sequential(self.settings.test, self.settings.max_pairs)  # a resume's new budget
        while not run.done and run.n in self.pairs:
            run.add(self.pairs[run.n].diff)
        return run.verdict, run.n

    def counted(self) -> list[PairRow]:
        return self.prefix()[: self.decision()[1]]

    def later(self) -> list[PairRow]:
        """Stored pairs the verdict does not count: those after its pair count (or after a gap)."""
        n = len(self.counted())
        return [self.pairs[i] for i in sorted(self.pairs) if i >= n]

    def summary(self) -> Summary:
        verdict, _ = self.decision()
        path = None if self._run is None or self.kept is not None else self._run.path  # over the counted pairs
        summary = summarize(self.settings.test, [p.diff for p in self.counted()], path)
        return dataclasses.replace(summary, verdict=verdict)

    @property
    def games(self) -> int:
        return 2 * len(self.counted())

    def finished(self) -> bool:
        verdict, n = self.decision()
        return verdict is not Verdict.INCONCLUSIVE or n >= self.settings.max_pairs

    def place_diff(self) -> float:
        rows = self.counted()
        return sum(p.place_diff for p in rows) / len(rows) if rows else 0.0


class DuelError(Precondition):
    """A duel that cannot go on (a bot that cannot be started); what was played is stored."""


def lineup(settings: DuelSettings, duel_id: str) -> Lineup:
    """A duel's bots as the fleet starts, dials or runs them: every command bot afresh for each game."""
    bots = tuple(e.bot() for e in (settings.candidate, settings.baseline, *settings.field))
    return Lineup(duel_id, bots, fresh_process=True)


class Seating(Protocol):
    """Where a duel's games are played: the fleet's ``Games`` (records into the data folder), or ``InProcess``."""

    def seats(self, names: tuple[str, ...]) -> AbstractAsyncContextManager[dict[str, str]]: ...

    async def play(
        self, spec: GameSpec, on_decision: OnDecision | None = None, record: str | None = None
    ) -> GameResult: ...


@contextlib.asynccontextmanager
async def _nobody() -> AsyncIterator[dict[str, str]]:
    yield {}


@dataclass
class InProcess:
    """Built-in policies played in this process on ``pool``, without records (the simulations)."""

    pool: ChannelPool

    def seats(self, names: tuple[str, ...]) -> AbstractAsyncContextManager[dict[str, str]]:
        return _nobody()

    async def play(
        self, spec: GameSpec, on_decision: OnDecision | None = None, record: str | None = None
    ) -> GameResult:
        return await play_game(spec, pool=self.pool)


async def _play(
    settings: DuelSettings, plan: PairPlan, second: bool, games: Seating, duel_id: str
) -> tuple[list[str], GameResult]:
    by_role = {"candidate": settings.candidate, "baseline": settings.baseline}
    by_role.update({f"field{i}": e for i, e in enumerate(settings.field)})
    roles = plan.roles(settings.table_size, second)
    entrants = [by_role[r] for r in roles]
    async with games.seats(tuple(e.name for e in entrants)) as at:
        # a command bot's address is the one started for this game (here, or on the worker that plays it)
        refs = tuple(
            EntrantRef(name=e.name, address=at.get(e.name) or e.address, policy=e.policy,
                       seed=_bot_seed(plan.deck_seed, role))
            for e, role in zip(entrants, roles, strict=True)
        )  # fmt: skip
        spec = GameSpec(game_id=plan.game_id, seed=plan.deck_seed, entrants=refs, tournament_id=duel_id)
        result = await games.play(spec, record=f"{plan.game_id}-{'b' if second else 'c'}")
    return roles, result


async def play_pair(settings: DuelSettings, plan: PairPlan, games: Seating, duel_id: str) -> PairRow:
    """Both games of a pair, one after the other; the row to store. ``InProcess`` writes no record (the
    simulations)."""
    roles, first = await _play(settings, plan, False, games, duel_id)
    _, second = await _play(settings, plan, True, games, duel_id)
    diff, place_diff = paired_difference(roles, first, second, settings.measure)
    rows = []
    for g_roles, g in ((roles, first), (plan.roles(settings.table_size, True), second)):
        rows.append({
            "game_id": g.game_id, "record": str(g.record_path) if g.record_path else None, "roles": g_roles,
            "scores": list(g.scores), "places": list(g.places),
            "retired": [i for i, s in enumerate(g.seats) if s.retired],
        })  # fmt: skip
    return PairRow(plan.pair, plan.deck_seed, plan.seat, rows, diff, place_diff)


MAX_PAIR_TRIES = 4  # a pair whose game lost its worker is dealt again this often at most, then the duel stops


async def _pair_on(
    games: Seating, settings: DuelSettings, plan: Callable[[int], PairPlan], i: int, duel_id: str
) -> PairRow:
    """Pair ``i``, dealt again with a fresh plan when one of its games lost its worker (its bots saw that deal)."""
    for _ in range(MAX_PAIR_TRIES - 1):
        try:
            return await play_pair(settings, plan(i), games, duel_id)
        except GameLost as e:
            get_logger(duel=duel_id).warning("pair lost a game with its worker; dealt again", pair=i, error=str(e))
    return await play_pair(settings, plan(i), games, duel_id)


def fresh_plan(duel_id: str, settings: DuelSettings) -> Callable[[int], PairPlan]:
    """Pair ``i``'s plan: a fresh secret deal, the candidate's seat ``i mod K``, a game id nobody can guess."""
    return lambda i: PairPlan(i, fresh_seed(), i % settings.table_size, f"{duel_id}-p{i}-{secrets.token_hex(2)}")


async def run_duel(
    state: DuelState,
    store: DuelStore,
    *,
    concurrency: int = 1,
    on_pair: Callable[[DuelState], None] | None = None,
    workers: WorkerSettings | None = None,
    player: PlayerFactory = match_player,
    plans: Callable[[int], PairPlan] | None = None,
) -> DuelState:
    """Play pairs until the test decides or the budget is spent, storing each pair as it finishes. Pairs missing
    from the stored ones (in flight when an earlier run stopped) are played first, on fresh deals (``plans``; a
    test may fix them). The games are played on ``workers`` (default: in this process), each pair's two games one
    after the other; a bot that cannot start or answer Hello is DuelError before any game."""
    settings = state.settings
    if state.finished():
        store.finish(state.duel_id, *state.decision())
        return state
    todo = (i for i in range(settings.max_pairs) if i not in state.pairs)
    stop = asyncio.Event()
    failure: list[BaseException] = []

    plan = plans or fresh_plan(state.duel_id, settings)

    async def worker(games: Seating) -> None:
        for i in todo:
            if stop.is_set():
                return
            try:
                row = await _pair_on(games, settings, plan, i, state.duel_id)
            except Exception as e:  # a bot that cannot start, a game that failed in the referee
                failure.append(e)
                stop.set()
                return
            store.save_pair(state.duel_id, row)
            finished = state.record(row)
            if on_pair is not None:
                on_pair(state)
            if finished:
                stop.set()

    try:
        where = workers or WorkerSettings()
        async with open_games(where, lineup(settings, state.duel_id), store.data, player) as games:
            tasks = [asyncio.create_task(worker(games)) for _ in range(concurrency)]
            waiter = asyncio.create_task(stop.wait())
            try:
                await asyncio.wait([waiter, *tasks], return_when=asyncio.FIRST_COMPLETED)
                while not stop.is_set() and not all(t.done() for t in tasks):
                    await asyncio.wait([waiter, *tasks], return_when=asyncio.FIRST_COMPLETED)
            finally:  # a verdict, a failure, the budget spent, or Ctrl-C: the pairs in flight are not counted
                for t in (waiter, *tasks):
                    t.cancel()
                await asyncio.wait([waiter, *tasks])
    except EntrantError as e:  # a bot that cannot start or answer Hello: nothing of this run was played
        raise DuelError(str(e)) from None
    if failure:
        raise DuelError(str(failure[0])) from failure[0]
    if state.finished():
        store.finish(state.duel_id, *state.decision())
    return state
