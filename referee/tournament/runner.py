"""Running a tournament: up to C games at once in one asyncio loop, each finished game committed to the store in
one transaction, and resume (rerun the same config, or ``resume ID``) that keeps every committed game. A game that
began and was not stored voids its deal: its duplicate set is dealt again with a fresh deck (redeal.py), at the
next resume, or in the same run when a worker died.

``play_slots`` is the one loop that plays a tournament's pending games, for ``abluxx tournament`` and for the
service alike; the service adds its concerns (watchers, spectators, a graceful stop) as GameHooks."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from referee import metrics
from referee.errors import GameLost, NoTournament, Precondition, RefereeError, SeatsAbsent
from referee.event_loop import wait_for
from referee.fleet import Addresses, Crash, OnDecision, PlayerFactory, PlayFn, WorkerSettings
from referee.log import get_logger
from referee.match.spec import EntrantRef, GameResult, GameSpec
from referee.rating import Ratings
from referee.records.paths import record_in
from referee.records.private import open_private, write_private
from referee.store import SqliteStore, TournamentRow
from referee.store import ladder as ladder_store
from referee.store.void import VoidGame

from . import deals
from . import schedule as schedule_mod
from . import standings as standings_mod
from .config import TournamentConfig
from .play import fresh_commands, open_games
from .progress import Progress
from .redeal import redeal_interrupted
from .schedule import Slot

MAX_REDEALS = 3  # rounds of one run that may lose games to dead workers (each voids and redeals), then it stops


class TournamentError(RefereeError):
    """A tournament that cannot go on: the message says why; a rerun resumes it."""

    local = True  # it names files, folders or bot addresses


class NoDealKey(TournamentError, status=Precondition.status, exit_code=2):  # 2: resuming can never work
    """A stored tournament with neither a deal key nor public deals: made by a referee whose decks followed from
    the public seed. Resuming it would deal decks anyone who read its config can compute."""


def create_tournament(store: SqliteStore, config: TournamentConfig, source: str) -> list[Slot]:
    """Store a new tournament with a fresh secret deal key (none with public deals) and its schedule."""
    key = None if config.public_deals else deals.new_key()
    slots = schedule_mod.build(config, key)
    store.create_tournament(config, slots, source, key)
    return slots


def check_deal_key(store: SqliteStore, config: TournamentConfig) -> None:
    """Refuse to play a stored tournament that has no deal key: never re-derive its decks silently."""
    tid = config.tournament_id
    if not config.public_deals and store.deal_key(tid) is None:
        raise NoDealKey(
            f"tournament {tid} in {store.path} was stored by an older referee: it has no secret deal key, and its "
            "decks follow from the seed in its config, which entrants can read. It will not be resumed. Run it "
            "again from scratch (a new --data folder, or a new name), or, only for a research run between "
            "trusted bots, set public_deals = true in its config"
        )


@dataclass
class Outcome:
    tournament_id: str
    standings: standings_mod.Standings
    played: int  # games played by this run (0 when it was already finished)
    resumed: bool  # some games were already stored
    json_path: Path
    csv_path: Path
    crashes: list[Crash] = field(default_factory=list)  # command bots' processes that ended mid-run


def game_spec(
    config: TournamentConfig, slot: Slot, addresses: dict[str, str], reveal_deal: bool, absent_aborts: bool = False
) -> GameSpec:
    by_name = {e.name: e for e in config.entrants}
    # a ladder's entrants that joined after its config was read are bots at an address: they have no policy
    seats = tuple(
        EntrantRef(name=n, address=addresses.get(n), policy=by_name[n].policy if n in by_name else None)
        for n in slot.seats
    )
    return GameSpec(
        game_id=slot.game_id,
        seed=slot.deck_seed,
        entrants=seats,
        options=config.options,
        time_control=config.time_control,
        start_seat=slot.start_seat,
        max_strikes=config.max_strikes,
        tournament_id=config.tournament_id,
        reveal_deal=reveal_deal,
        absent_aborts=absent_aborts,
    )


class _InOrder:
    """Live ratings over every finished game (for the progress bar's top three); the fit does not depend on the
    order games finished in, so once the whole schedule is done they are the final ratings (converged when the
    standings are computed)."""

    def __init__(self, names: list[str], slots: list[Slot]) -> None:
        self.ratings = Ratings(names)

    @classmethod
    def stored(cls, store: SqliteStore, config: TournamentConfig, slots: list[Slot]) -> _InOrder:
        """The live ratings of the games already stored."""
        live = cls([e.name for e in config.entrants], slots)
        for g in store.games(config.tournament_id):
            live.add(g.slot, g.names, g.places)
        return live

    def add(self, slot: int, seats: tuple[str, ...], places: tuple[int, ...]) -> None:
        for name in seats:  # a ladder's entrant that joined after the run began
            self.ratings.join(name)
        self.ratings.add(seats, places)

    def top(self) -> list[tuple[str, float]]:
        return [(n, r.conservative) for n, r in self.ratings.leaderboard()[:3]]


class GameHooks:
    """What a caller of ``play_slots`` adds around each game; the defaults add nothing."""

    open_ended = False  # True: more_slots may add games, so play_slots keeps ``concurrency`` players waiting
    absent_aborts = False  # True: a game with a seat absent at its start is not played (on_absent), not fallen back

    def more_slots(self) -> list[Slot] | None:
        """Asked whenever a game may start: games to add to the pending ones, stored already (a ladder's next
        round); [] when more may come once games in flight finish; None (the default) when none will come."""
        return None

    def should_continue(self) -> bool:
        """Asked before each game starts: False starts no more games (those in flight still finish)."""
        return True

    def wake_in(self) -> float | None:
        """While more_slots has nothing to start: ask it again after this many seconds even if no game finishes
        (a ladder's pace, or its wait for entrants to mix); None: only when a game finishes."""
        return None

    def on_start(self, slot: Slot, spec: GameSpec) -> OnDecision | None:
        """The game is about to be played; may return a callback for each of its decisions."""
        return None

    def on_absent(self, slot: Slot, absent: dict[str, str]) -> None:
        """With ``absent_aborts``: the game did not start, as the bots of ``absent`` (name -> why) could not be
        reached; nothing of its deal was sent to anyone. ``on_done(slot, None)`` follows."""

    def on_done(self, slot: Slot, result: GameResult | None) -> None:
        """The game is over: committed to the store (``result``), or abandoned or failed (None: nothing of it is
        stored, and its duplicate set is dealt again with a fresh deck)."""

    def on_redeal(self, void: list[VoidGame]) -> None:
        """Interrupted sets were dealt again: ``void`` games left the results (standings built before are stale)."""


async def play_slots(
    store: SqliteStore,
    config: TournamentConfig,
    play: PlayFn,
    addresses: dict[str, str],
    concurrency: int,
    progress: Progress | None = None,
    hooks: GameHooks | None = None,
) -> tuple[int, Ratings]:
    """Play every pending slot, at most ``concurrency`` at a time, in schedule order of starting. Returns how many
    games were played, and the ratings of the stored games that form an unbroken prefix of the schedule (all of
    them once every slot is done). A game that raises (a referee failure, never a bot's) stops the run; nothing of
    it is stored, and a resume plays it again."""
    hooks = hooks or GameHooks()
    tid = config.tournament_id
    check_deal_key(store, config)
    played = 0
    with _only_run(store, tid):
        for _ in range(MAX_REDEALS + 1):
            if void := redeal_interrupted(store, config):
                hooks.on_redeal(void)
            n, ratings, lost = await _play_slots(store, config, play, addresses, concurrency, progress, hooks)
            played += n
            if not lost:
                return played, ratings
    raise TournamentError(f"games of {tid} lost their worker in {MAX_REDEALS + 1} rounds; the run stopped")


@contextlib.contextmanager
def _only_run(store: SqliteStore, tid: str) -> Iterator[None]:
    """An exclusive lock on the tournament for the life of the run (released by the OS if the process dies): two
    runs at once would play the same pending games into the same record files."""
    with os.fdopen(open_private(store.data / "locks" / f"{tid}.lock", os.O_WRONLY), "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TournamentError(f"tournament {tid} is being played by another run on {store.data}") from None
        yield


IDLE_POLL_S = 1.0  # how often an open-ended run with nothing to play asks its hooks again


class _Pending:
    """The slots still to play, handed out so that an entrant never plays two games of one deal at once (with
    rotations it would see two seats' hands): such a game waits until the other has finished."""

    def __init__(self, slots: list[Slot], hooks: GameHooks) -> None:
        self.slots = slots
        self.hooks = hooks
        self.in_flight: list[Slot] = []
        self.freed = asyncio.Condition()

    def void(self, duplicate_set: tuple[int, int]) -> None:
        """A game of ``duplicate_set`` was lost: its other games wait for the set to be dealt again."""
        self.slots = [s for s in self.slots if s.duplicate_set != duplicate_set]

    def _may_start(self, slot: Slot) -> bool:
        return not any(
            f.duplicate_set == slot.duplicate_set and not set(f.seats).isdisjoint(slot.seats) for f in self.in_flight
        )

    async def take(self) -> Slot | None:
        """The first pending slot that may start now (waiting while none may); None when none is left and the
        hooks add none, or when the hooks say stop."""
        async with self.freed:
            while self.hooks.should_continue():
                more = self.hooks.more_slots()
                self.slots.extend(more or ())
                slot = next((s for s in self.slots if self._may_start(s)), None)
                if slot is not None:
                    self.slots.remove(slot)
                    self.in_flight.append(slot)
                    return slot
                if not self.slots and (more is None or not self.in_flight):
                    if more is None or not self.hooks.open_ended:
                        return None
                    # an open ladder with too few entrants: look again in a while (a bot may be submitted)
                    await self._wait(min(IDLE_POLL_S, self.hooks.wake_in() or IDLE_POLL_S))
                    continue
                await self._wait(self.hooks.wake_in())
            return None

    async def _wait(self, timeout: float | None) -> None:
        """Until a game finishes, or ``timeout`` seconds (None: no limit) have passed."""
        with contextlib.suppress(TimeoutError):
            await wait_for(self.freed.wait(), timeout)

    async def finished(self, slot: Slot) -> None:
        """``slot``'s game is over (or failed): the games that waited for it may start."""
        async with self.freed:
            self.in_flight.remove(slot)
            self.freed.notify_all()


async def _play_slots(
    store: SqliteStore,
    config: TournamentConfig,
    play: PlayFn,
    addresses: dict[str, str],
    concurrency: int,
    progress: Progress | None,
    hooks: GameHooks,
) -> tuple[int, Ratings, bool]:
    """One round of ``play_slots``: the pending games as they are dealt now. Also says whether a game was lost
    (its set then waits for the next round's redeal)."""
    tid = config.tournament_id
    log = get_logger(tournament=tid)
    slots = store.slots(tid)
    live = _InOrder.stored(store, config, slots)
    pending = _Pending(store.slots(tid, pending_only=True), hooks)
    done = len(slots) - len(pending.slots)
    played, lost = 0, False

    async def one(slot: Slot) -> GameResult | None:
        nonlocal lost
        committed = None
        _begin(store, tid, slot)
        try:
            async with fresh_commands(config, slot.seats, addresses, store.data / "logs", tid) as seats_at:
                # the bots are told the deck at the end only if no other game still has it to play (in any
                # tournament)
                reveal = store.deal_in_play(slot.deck_seed, slot.game_id) == 0
                spec = game_spec(config, slot, seats_at, reveal_deal=reveal, absent_aborts=hooks.absent_aborts)
                on_decision = hooks.on_start(slot, spec)
                try:
                    result = await (play(spec) if on_decision is None else play(spec, on_decision=on_decision))
                except SeatsAbsent as e:
                    hooks.on_absent(slot, e.absent)
                    return None
                except GameLost as e:
                    log.warning("game lost; its deal is void and its set is dealt again", game_id=slot.game_id,
                                error=str(e))  # fmt: skip
                    lost = True
                    pending.void(slot.duplicate_set)
                    return None
                except Exception as e:
                    log.error("game failed in the referee", game_id=slot.game_id, error=repr(e))
                    raise TournamentError(f"game {slot.game_id} failed in the referee: {e!r}") from e
            _save(store, tid, slot, result)
            committed = result
        finally:
            metrics.GAMES_IN_FLIGHT.dec()
            hooks.on_done(slot, committed)
            await pending.finished(slot)
        return result

    async def worker() -> None:
        nonlocal done, played
        while (slot := await pending.take()) is not None:
            if (result := await one(slot)) is None:
                continue
            live.add(slot.slot, slot.seats, result.places)
            done += 1
            played += 1
            if progress:
                progress.finished(done, slot.seats, result)
                progress.update(done, live.top())

    players = concurrency if hooks.open_ended else min(concurrency, len(pending.slots))
    workers = [asyncio.create_task(worker()) for _ in range(max(1, players))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        if progress:  # what is printed next (the error, Ctrl-C's resume line) starts on a clean line
            progress.clear()
        raise
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    if progress:
        progress.update(done, live.top(), final=not lost)
    return played, live.ratings, lost


def write_standings(store: SqliteStore, standings: standings_mod.Standings) -> tuple[Path, Path]:
    folder = store.data / "standings"
    json_path = folder / f"{standings.tournament_id}.json"
    csv_path = folder / f"{standings.tournament_id}.csv"
    write_private(json_path, standings_mod.dumps(standings) + "\n")
    write_private(csv_path, standings.to_csv())
    return json_path, csv_path


def _begin(store: SqliteStore, tid: str, slot: Slot) -> None:
    """Before a game's first deal: its slot marked started (from here on, an interruption voids its deal) and the
    game in flight until the caller's ``finally``."""
    with contextlib.suppress(FileNotFoundError):  # left by a referee from before void deals, killed mid-game
        record_in(store.records, slot.game_id).unlink()
    store.mark_started(tid, slot.slot)
    metrics.GAMES_IN_FLIGHT.inc()


def _save(store: SqliteStore, tid: str, slot: Slot, result: GameResult) -> None:
    """A finished game committed, then counted in the metrics (referee/metrics.py)."""
    store.save_game(tid, slot, result)
    seats = ((s.transport, s.decision_us, s.faults) for s in result.seats)
    metrics.game_finished(result.end_reason.name.lower(), result.decisions, result.referee_faults, seats)


def standings_of(store: SqliteStore, tid: str, ratings: Ratings | None = None) -> standings_mod.Standings:
    row = store.tournament(tid)
    if row is None:
        raise NoTournament(tid, f"in {store.path}")
    return standings_mod.compute(tid, entrant_names(store, row), store.games(tid), row.games, ratings)


def entrant_names(store: SqliteStore, row: TournamentRow) -> list[str]:
    """Every entrant of a stored tournament: its config's, or every entrant a ladder ever had (they join as it
    goes, and every version keeps its games)."""
    if "ladder" in row.config:
        return [e.name for e in ladder_store.entrants(store, row.id)]
    return [e["name"] for e in row.config["entrants"]]


def finish_tournament(
    store: SqliteStore, tid: str, ratings: Ratings | None = None
) -> tuple[standings_mod.Standings, Path, Path]:
    """The final standings of a tournament whose schedule is done: marks it finished in the store (once) and
    writes its standings files. ``ratings`` are play_slots' live ratings when it played the schedule to its end
    (they equal a recomputation from the store, which is made when they are missing or short)."""
    final = standings_of(store, tid, ratings)
    row = store.tournament(tid)
    if row is not None and row.finished_at is None:
        store.finish(tid, {r.entrant: (r.mu, r.sigma) for r in final.rows}, final.games)
    json_path, csv_path = write_standings(store, final)
    return final, json_path, csv_path


async def run_tournament(
    config: TournamentConfig,
    store: SqliteStore,
    player: PlayerFactory,
    *,
    source: str = "",
    concurrency: int | None = None,
    progress: bool = True,
    workers: WorkerSettings | None = None,
    games_log: TextIO | None = None,
) -> Outcome:
    """Create (or resume) the tournament ``config`` names and play it to the end, inline with ``player`` or on
    the ``workers`` (default: the config's; referee/fleet). With ``games_log``, a line for each finished game goes
    there (progress.game_line).

    Command entrants are started first and every entrant must answer Hello; otherwise EntrantError is raised and
    nothing is stored."""
    tid = config.tournament_id
    log = get_logger(tournament=tid)
    row = store.tournament(tid)
    games = 0
    if row is not None and row.finished_at is None:  # a finished one only has its standings written again
        check_deal_key(store, config)
        games = len(schedule_mod.build(config, store.deal_key(tid)))
        if row.games != games:
            raise TournamentError(f"tournament {tid} in {store.path} has {row.games} games, its config {games}")
    played, ratings, crashes = 0, None, []
    resumed = row is not None and row.done > 0
    if row is None or row.finished_at is None:
        async with open_games(workers or config.workers, config, store, player) as (play, addresses, scheduled):
            if row is None:
                games = len(create_tournament(store, config, source))
                log.info("tournament created", games=games, entrants=len(config.entrants))
            else:
                log.info("tournament resumed", done=row.done, games=row.games)
            bar = Progress(games, row.done if row else 0, enabled=progress, games_log=games_log)
            c = concurrency or config.concurrency
            played, ratings = await play_slots(store, scheduled, play, addresses, c, bar)
        # read once the fleet has closed: workers tell their bots' crashes as they close
        crashes = list(addresses.crashes) if isinstance(addresses, Addresses) else []
    # the live ratings cover every stored game in schedule order once the schedule is done: no need to redo them
    final, json_path, csv_path = finish_tournament(store, tid, ratings)
    return Outcome(tid, final, played, resumed, json_path, csv_path, crashes)
