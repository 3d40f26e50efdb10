"""Tournaments running inside the service: games played concurrently, each committed to the store as it ends,
progress published to watchers, live games kept for spectators, and a graceful stop.

A run plays the tournament's pending slots (so starting a run again resumes it). ``drain`` stops it taking new
games and lets the games in flight finish; whatever is still playing when the grace period ends is abandoned and
played again from its deal by the next run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

from referee.engine import cards_of, deck_from_seed, event_for, new_game, public_view
from referee.fleet import EntrantError, match_player
from referee.log import get_logger
from referee.match.spec import GameResult, GameSpec
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.rating import Ratings
from referee.store import SqliteStore
from referee.store.void import VoidGame
from referee.tasks import cancel_and_wait
from referee.tournament.config import TournamentConfig, WorkerSettings
from referee.tournament.health import Health
from referee.tournament.ladder_run import Book, LadderHooks, spent
from referee.tournament.play import open_games
from referee.tournament.runner import GameHooks, OnDecision, entrant_names, finish_tournament, play_slots
from referee.tournament.schedule import Slot
from referee.tournament.standings import Standings
from referee.wire import END_PB, event_from_pb, event_pb, options_pb

from .hosted import HostedBots
from .reads import Boards

RETRY_S = 5.0  # how often a resumed run asks unreachable entrants again


def public_events(events) -> list[pb.Event]:
    """Recorded (full) events as a spectator may see them (R17)."""
    return [event_pb(event_for(event_from_pb(e), None)) for e in events]


def public_decision(d: rec_pb.DecisionRecord) -> ref_pb.GameWatchEvent:
    return ref_pb.GameWatchEvent(
        decision=ref_pb.PublicDecision(
            seq=d.seq, seat=d.seat, kind=d.kind, chosen_by=d.chosen_by, fault=d.fault, events=public_events(d.events)
        )
    )


def opening(
    game_id: str, tid: str, names: list[str], versions: list[str], options, seed: int, start_seat: int, delay_ms: int
) -> ref_pb.GameWatchEvent:
    """What anyone at the table could see before the first decision: the market and the hand sizes."""
    state = new_game(deck_from_seed(seed), len(names), options, start_seat)
    v = public_view(state)
    return ref_pb.GameWatchEvent(
        opening=ref_pb.GameOpening(
            game_id=game_id,
            tournament_id=tid,
            players=[
                pb.Player(seat=i, name=n, version=ver) for i, (n, ver) in enumerate(zip(names, versions, strict=True))
            ],
            options=options_pb(options),
            start_seat=start_seat,
            market=cards_of(v.market),
            hand_sizes=v.hand_sizes,
            delay_ms=delay_ms,
        )
    )


class LiveGame:
    """A game being played: its public events with the time each happened, for spectators."""

    def __init__(self, first: ref_pb.GameWatchEvent) -> None:
        self.items: list[tuple[float, ref_pb.GameWatchEvent]] = [(time.monotonic(), first)]
        self.done = False
        self._changed = asyncio.Event()

    def add(self, item: ref_pb.GameWatchEvent, done: bool = False) -> None:
        self.items.append((time.monotonic(), item))
        self.done = self.done or done
        self._wake()

    def end(self) -> None:
        """The game was abandoned (cancelled or the server stopped): spectators' streams end."""
        self.done = True
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def follow(self, delay_s: float) -> AsyncIterator[ref_pb.GameWatchEvent]:
        """Every item, each no sooner than ``delay_s`` after it happened, until the game ends."""
        i = 0
        while True:
            if i < len(self.items):
                t, item = self.items[i]
                wait = t + delay_s - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                yield item
                i += 1
            elif self.done:
                return
            else:
                await self._changed.wait()


EVERY = "\0every"  # Hub key of watchers that hear every tournament's games start and finish (no tournament's id)
FELL_BEHIND = object()  # a watcher's queue overflowed: its stream ends with RESOURCE_EXHAUSTED


class Watcher:
    """One tournament watcher's events, at most ``limit`` game events waiting; one more drops the watcher (it reads
    too slowly, or not at all, and the server will not keep its backlog). None ends the stream.

    The tournament's state and its standings supersede their older copies: a newer one goes to the back of the
    queue and the older one waiting is skipped, so a watcher behind a fast tournament is sent each only once, the
    newest, in order; the limit counts the game events."""

    def __init__(self, limit: int) -> None:
        self.queue: asyncio.Queue = asyncio.Queue()
        self.limit = limit
        self.dropped = False
        self.games = 0  # game events waiting
        self._latest: dict[str, tuple[int, ref_pb.TournamentEvent]] = {}  # the newest state event of each kind
        self._seq = 0

    def put(self, event: ref_pb.TournamentEvent | None) -> None:
        if self.dropped:
            return
        kind = event.WhichOneof("event") if event is not None else None
        if kind in ("tournament", "standings"):
            self._seq += 1
            self._latest[kind] = (self._seq, event)  # type: ignore[assignment]
            self.queue.put_nowait((kind, self._seq))  # a marker; an older one of its kind is skipped by get()
        elif self.games >= self.limit:
            self.dropped = True
            self._replace(FELL_BEHIND)
        else:
            self.games += event is not None
            self.queue.put_nowait(event)

    def end(self) -> None:
        """End the stream now, whatever is still waiting (the server is stopping)."""
        if not self.dropped:
            self._replace(None)

    def _replace(self, last: object) -> None:
        while not self.queue.empty():
            self.queue.get_nowait()
        self._latest.clear()
        self.queue.put_nowait(last)

    async def get(self) -> ref_pb.TournamentEvent | object | None:
        while True:
            item = await self.queue.get()
            if not isinstance(item, tuple):
                self.games -= isinstance(item, ref_pb.TournamentEvent)
                return item
            kind, seq = item
            newest = self._latest.get(kind)
            if newest is not None and newest[0] == seq:
                del self._latest[kind]
                return newest[1]


class Hub:
    """Tournament watchers, each with a bounded queue (``queue_limit`` events)."""

    def __init__(self, queue_limit: int) -> None:
        self.queue_limit = queue_limit
        self.watchers: dict[str, set[Watcher]] = {}

    def subscribe(self, tid: str) -> Watcher:
        w = Watcher(self.queue_limit)
        self.watchers.setdefault(tid, set()).add(w)
        return w

    def unsubscribe(self, tid: str, w: Watcher) -> None:
        self.watchers.get(tid, set()).discard(w)
        if not self.watchers.get(tid):
            self.watchers.pop(tid, None)

    def watched(self, tid: str) -> bool:
        return bool(self.watchers.get(tid))

    def publish(self, tid: str, event: ref_pb.TournamentEvent | None) -> None:
        for w in list(self.watchers.get(tid, ())):
            w.put(event)
        if event is not None and event.WhichOneof("event") in ("started", "finished"):
            for w in list(self.watchers.get(EVERY, ())):  # the site's lists of the games being played now
                w.put(event)

    def close_all(self) -> None:
        for watchers in list(self.watchers.values()):
            for w in list(watchers):
                w.end()


class Run(GameHooks):
    """One tournament being played by the service: the tournament layer's loop (play_slots), with the service's
    concerns as its hooks: watchers hear each game start and finish, spectators follow each game live, the
    games in flight are counted, and a drain or cancel starts no more games."""

    def __init__(
        self,
        store: SqliteStore,
        config: TournamentConfig,
        hub: Hub,
        live: dict[str, LiveGame],
        *,
        delay_ms: int,
        on_finished: Callable[[str], None],
        snapshot: Callable[[str], ref_pb.Tournament],
        boards: Boards,
        standings_pb: Callable[[Standings], ref_pb.Standings],
        workers: WorkerSettings,
        health: Health | None = None,
        outputs: HostedBots | None = None,
    ) -> None:
        self.store = store
        self.outputs = outputs  # the uploaded bots' output, kept for each game (hosted.py)
        self.health = health  # the server's bot health, for a ladder's scheduler (docs/bot-health.md)
        self.config = config
        self.tid = config.tournament_id
        self.hub = hub
        self.live = live
        self.delay_ms = delay_ms
        self.on_finished = on_finished
        self.snapshot = snapshot
        self.boards = boards
        self.standings_pb = standings_pb
        self.workers = workers  # where its games are played (abluxx serve --workers, docs/scale.md)
        self.in_flight: set[str] = set()
        self.ladder: LadderHooks | None = None  # a ladder's round chooser, while it runs
        self.stopping = False  # a ladder told to stop: no more rounds
        self.taking = True  # False once draining: no new game starts
        self.task: asyncio.Task | None = None
        self.log = get_logger(tournament=self.tid)

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"tournament {self.tid}")

    async def _run(self) -> None:
        config = self.config
        try:
            async with open_games(
                self.workers, config, self.store, match_player, retry_s=RETRY_S, keep_trying=lambda: self.taking
            ) as (play, addresses, scheduled):
                hooks = self.ladder_hooks(scheduled, addresses)
                _, ratings = await play_slots(self.store, scheduled, play, addresses, config.concurrency, hooks=hooks)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            if self.taking or not isinstance(e, EntrantError):  # a run stopped while its bots were away ends quietly
                self.log.error("tournament run failed; it resumes at the next start", error=repr(e))
            return
        if config.ladder is not None:
            if self.stopping or spent(self.store, config):
                self._finish(None)  # the ratings over every game are computed again: play_slots' cover its first
        elif self.taking and not self.store.slots(self.tid, pending_only=True):
            self._finish(ratings)

    def ladder_hooks(self, config: TournamentConfig, addresses: dict[str, str]) -> GameHooks:
        """The hooks ``play_slots`` plays with: this run's own, or for a ladder its rounds' around them."""
        if config.ladder is None:
            return self
        book = Book.load(self.store, config)
        # the server's Health, not the ladder's own Presence: a bot down in one ladder is down in all, probed with
        # Hello, kept in the store, and shown everywhere (docs/bot-health.md)
        self.ladder = LadderHooks(
            self.store, config, book, addresses, inner=self, slots=config.concurrency, presence=self.health
        )
        self.ladder.stopped = self.stopping
        return self.ladder

    def entrant_names(self) -> set[str]:
        """Every entrant this tournament has (a ladder's, every version that joined)."""
        row = self.store.tournament(self.tid)
        return set() if row is None else set(entrant_names(self.store, row))

    def stop(self) -> None:
        """A ladder chooses no more rounds: the rounds it chose are played out, then it finishes."""
        self.stopping = True
        if self.ladder is not None:
            self.ladder.stopped = True

    # -- the hooks play_slots calls around each game ---------------------------------------------------------

    def should_continue(self) -> bool:
        return self.taking

    def on_start(self, slot: Slot, spec: GameSpec) -> OnDecision:
        live = LiveGame(
            opening(
                slot.game_id,
                self.tid,
                list(slot.seats),
                [""] * len(slot.seats),
                spec.options,
                spec.seed,
                spec.start_seat,
                self.delay_ms,
            )
        )
        self.live[slot.game_id] = live
        self.in_flight.add(slot.game_id)
        if self.outputs is not None:
            self.outputs.game_started(slot.game_id, slot.seats)
        self.hub.publish(
            self.tid,
            ref_pb.TournamentEvent(
                started=ref_pb.GameStarted(game_id=slot.game_id, slot=slot.slot, entrants=slot.seats)
            ),
        )
        return lambda d: live.add(public_decision(d))

    def on_done(self, slot: Slot, result: GameResult | None) -> None:
        live = self.live.get(slot.game_id)
        if live is not None:
            if result is not None:
                live.add(
                    ref_pb.GameWatchEvent(
                        closing=ref_pb.GameClosing(
                            reason=END_PB[result.end_reason],
                            scores=result.scores,
                            places=result.places,
                            retired=[i for i, s in enumerate(result.seats) if s.retired],
                        )
                    ),
                    done=True,
                )
            live.end()
            del self.live[slot.game_id]
        self.in_flight.discard(slot.game_id)
        if self.outputs is not None:
            self.outputs.game_done(slot.game_id)
        if result is not None:
            self._published_finish(slot.game_id)

    def on_redeal(self, void: list[VoidGame]) -> None:
        self.boards.forget(self.tid)  # the void games left the standings
        self.log.warning("interrupted deals dealt again; their games are void", void=[g.game_id for g in void])
        self.hub.publish(self.tid, ref_pb.TournamentEvent(tournament=self.snapshot(self.tid)))

    def _published_finish(self, game_id: str) -> None:
        """The stored game joins the standings (one update, whatever the number of watchers); watchers hear of it,
        with the standings when they are built (their first build runs off the loop; the next game brings them)."""
        from .convert import game_summary

        row = self.store.game(game_id)
        if row is None:
            return
        self.boards.add(self.tid, row)
        if not (self.hub.watched(self.tid) or self.hub.watched(EVERY)):
            return
        self.hub.publish(
            self.tid, ref_pb.TournamentEvent(finished=ref_pb.GameFinished(game=game_summary(self.tid, row)))
        )
        if not self.hub.watched(self.tid):  # only the lists of games being played now: no standings for them
            return
        if (standings := self.boards.ready(self.tid)) is not None:
            self.hub.publish(self.tid, ref_pb.TournamentEvent(standings=self.standings_pb(standings)))
        self.hub.publish(self.tid, ref_pb.TournamentEvent(tournament=self.snapshot(self.tid)))

    def _finish(self, ratings: Ratings | None) -> None:
        final, _, _ = finish_tournament(self.store, self.tid, ratings)
        self.log.info("tournament finished", games=final.games)
        self.on_finished(self.tid)

    async def drain(self, grace_s: float) -> None:
        """Start no more games; wait up to ``grace_s`` for those in flight; then abandon the rest."""
        self.taking = False
        if self.task is None:
            return
        done, _ = await asyncio.wait({self.task}, timeout=grace_s)
        if not done:
            self.log.warning("grace period over; abandoning games in flight", games=sorted(self.in_flight))
            await self.cancel()

    async def cancel(self) -> None:
        """Start no more games and abandon those in flight: play_slots ends each (``on_done`` with no result, which
        ends its spectators' streams) before the run's task ends."""
        self.taking = False
        if self.task is not None:
            await cancel_and_wait(self.task)  # the caller's own cancellation, not the run's, reaches the caller
