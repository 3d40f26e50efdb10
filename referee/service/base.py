"""The Referee service's state, its lifecycle (resume, drain) and the lookups every group of calls shares."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import Any

import grpc

from referee.errors import BadInput, NoTournament, RefereeError, Unavailable
from referee.log import get_logger
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc
from referee.store import SqliteStore
from referee.store.health import HealthRow
from referee.tournament.board import planned
from referee.tournament.config import TournamentConfig, WorkerSettings
from referee.tournament.health import Health, hello_at
from referee.tournament.runner import NoDealKey, check_deal_key, entrant_names

from . import ladders
from .auth import Auth, Principal
from .convert import TOURNAMENT_STATE, health_pb, rfc3339, standings_pb
from .hosted import HostedBots
from .reads import Boards, Reader
from .registry import FINISHED, Registry, bot_ratings, health_address
from .runs import Hub, LiveGame, Run
from .settings import Settings
from .streams import Streams
from .visibility import config_for


class ServiceBase(ref_grpc.RefereeServicer):
    """The service's state and lifecycle, and what every group of calls reads: the calls live in entrants,
    tournaments, results and watching; ``server.RefereeService`` puts them together."""

    def __init__(self, store: SqliteStore, settings: Settings, workers: WorkerSettings | None = None) -> None:
        self.store = store
        self.settings = settings
        self.workers = workers or WorkerSettings()  # where every tournament's games are played (docs/scale.md)
        self.registry = Registry(store)
        self.reader = Reader(store.data)
        self.boards = Boards(self.reader, store)
        self.auth = Auth(settings)
        self.hub = Hub(settings.watch_queue)
        self.streams = Streams(settings.max_watchers, settings.max_watchers_per_client)
        self.live: dict[str, LiveGame] = {}
        self.runs: dict[str, Run] = {}
        self.draining = False
        self.creating: dict[str, str] = {}  # tournaments whose schedule is being built and stored: id -> organiser
        self.submitting: dict[str, tuple[str, str]] = {}  # bots under validation: name -> (owner, address dialled)
        self.own_ports: set[int] = set()  # the ports the referee listens on: never a bot's address
        self.log = get_logger(service="referee")
        # every ladder's bot health (docs/bot-health.md): one for the server, as a bot is down for all
        self.health = Health(store, self._probe, settings=settings.health, on_change=self._health_changed)
        self.prober: asyncio.Task | None = None
        # the uploaded bots it runs (hosted.py), and their output in each game
        self.hosted = HostedBots(store.data, settings.sandbox, settings.uploads.output_kb * 1024)
        self.hosting: asyncio.Task | None = None

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def resume_running(self) -> None:
        """Start the health prober, and a run for every tournament that was running when the server stopped."""
        if self.prober is None:
            self.prober = asyncio.get_running_loop().create_task(self.health.run(), name="bot health prober")
        if self.hosting is None:
            self.hosting = asyncio.get_running_loop().create_task(self._host(), name="hosted bots")
        for tid in self.registry.running():
            row = self.store.tournament(tid)
            if row is None:
                continue
            config = TournamentConfig.from_json(row.config)
            try:
                check_deal_key(self.store, config)
            except NoDealKey as e:
                self.log.error("not resuming tournament", tournament=tid, reason=str(e))
                continue
            self.log.info("resuming tournament", tournament=tid, done=row.done, games=row.games)
            self._start_run(config)

    async def _host(self) -> None:
        """Start every active uploaded bot, each in its sandbox."""
        for bot in self.registry.bots(active_only=True):
            if bot.command is not None:
                await self.hosted.start(bot)

    def _start_run(self, config: TournamentConfig) -> Run:
        if joined := ladders.enter_all(self.store, self.registry, config.tournament_id):
            self.log.info("bots submitted earlier joined the ladder", tournament=config.tournament_id, bots=joined)
        run = Run(
            self.store,
            config,
            self.hub,
            self.live,
            delay_ms=self.settings.spectator_delay_ms,
            on_finished=self._finished,
            snapshot=self._tournament,
            boards=self.boards,
            standings_pb=standings_pb,
            workers=self.workers,
            health=self.health,
            outputs=self.hosted,
        )
        self.runs[config.tournament_id] = run
        run.start()
        return run

    def _finished(self, tid: str) -> None:
        self.registry.set_state(tid, FINISHED)
        self.runs.pop(tid, None)
        self.hub.publish(tid, ref_pb.TournamentEvent(tournament=self._tournament(tid)))
        self.hub.publish(tid, None)

    async def _probe(self, name: str) -> bool:
        """A down entrant's Hello probe: True at a good Hello from the address it plays at."""
        address = health_address(self.store, self.registry, name)
        return await hello_at({name: address} if address else {})(name)

    def _health_changed(self, name: str, row: HealthRow) -> None:
        """Every running ladder that has ``name`` hears that its health changed."""
        event = ref_pb.TournamentEvent(health=ref_pb.EntrantHealthChanged(entrant=name, health=health_pb(row)))
        for tid, run in list(self.runs.items()):
            if run.config.ladder is not None and name in run.entrant_names():
                self.hub.publish(tid, event)

    def waiting(self, tid: str) -> str:
        """What a running ladder that cannot seat a table waits for (the scheduler's ``waiting``); else empty."""
        run = self.runs.get(tid)
        return (getattr(run.ladder, "waiting", None) or "") if run is not None else ""

    async def drain(self, grace_s: float) -> None:
        """Stop taking work; let the games in flight finish within ``grace_s``; end every stream."""
        self.draining = True
        if self.prober is not None:
            self.prober.cancel()
        await asyncio.gather(*(run.drain(grace_s) for run in list(self.runs.values())))
        if self.hosting is not None:
            self.hosting.cancel()
        await self.hosted.close()
        self.hub.close_all()
        for game in list(self.live.values()):
            game.end()

    def _writable(self) -> None:
        if self.draining:
            raise Unavailable("the referee is shutting down; try again once it is back")

    async def _ratings(self) -> dict[tuple[str, int], tuple[float, float, int]]:
        return await self.reader.run(bot_ratings)

    def _tournament(self, tid: str, addresses: bool = False, who: Principal | None = None) -> ref_pb.Tournament:
        """The tournament as a message; its config's bot addresses with ``addresses`` (for organisers' calls), else
        as ``who`` may see them (visibility.config_for)."""
        row = self.store.tournament(tid)
        if row is None:
            raise NoTournament(tid, "on this server")
        state, created_by = self.registry.state(tid)
        run = self.runs.get(tid)
        return ref_pb.Tournament(
            tournament_id=tid,
            name=row.name,
            state=TOURNAMENT_STATE[state],
            games=row.games,
            finished=row.done,
            in_flight=len(run.in_flight) if run else 0,
            entrants=entrant_names(self.store, row),
            created_at=rfc3339(row.created_at),
            created_by=created_by,
            config_json=json.dumps(row.config if addresses else config_for(who, row.config), sort_keys=True),
            waiting=self.waiting(tid),
            budget=planned(row) if "ladder" in row.config else 0,
        )

    def _tid(self, tid: str) -> str:
        if not tid:
            raise BadInput("tournament_id: must not be empty")
        if self.store.tournament(tid) is None:
            raise NoTournament(tid, "on this server")
        return tid


# -- how every call ends ------------------------------------------------------------------------------------


async def abort_call(service: ServiceBase, context: grpc.aio.ServicerContext, method: str, e: Exception) -> None:
    """End a call that raised ``e``, the one place a call's error becomes its status: a RefereeError is its status
    and message, but for a ``local`` one (its text may name the server's files) only its status; anything else is
    INTERNAL. What the caller is not told is logged."""
    if isinstance(e, RefereeError) and not e.local:
        await context.abort(e.status, e.message)
    service.log.exception("call failed", method=method)
    status = e.status if isinstance(e, RefereeError) else grpc.StatusCode.INTERNAL
    await context.abort(status, f"{method} failed in the referee; the server's log says why")


def handle(fn: Callable) -> Callable:
    """A unary call whose errors end as ``_abort`` says."""

    @functools.wraps(fn)
    async def unary(self: ServiceBase, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await fn(self, request, context)
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as e:
            await abort_call(self, context, fn.__name__, e)

    return unary


def handle_stream(fn: Callable) -> Callable:
    """A server-streaming call whose errors end as ``_abort`` says."""

    @functools.wraps(fn)
    async def stream(self: ServiceBase, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            async for item in fn(self, request, context):
                yield item
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as e:
            await abort_call(self, context, fn.__name__, e)

    return stream


def admitted(fn: Callable) -> Callable:
    """A Watch* stream, counted against the watcher caps (Streams) for as long as it is open, and ended (cancelled)
    when one message waits longer than ``watch_write_timeout_s`` to be taken: a client that stops granting flow
    control window cannot be sent a status, and would otherwise hold its place for ever."""

    @functools.wraps(fn)
    async def stream(self: ServiceBase, request: Any, context: grpc.aio.ServicerContext) -> Any:
        with self.streams.admit(self.auth.reader(context), context):
            task = asyncio.current_task()
            assert task is not None
            loop = asyncio.get_running_loop()
            async for item in fn(self, request, context):
                stall = loop.call_later(self.settings.watch_write_timeout_s, task.cancel)
                try:
                    yield item
                finally:
                    stall.cancel()

    return stream
