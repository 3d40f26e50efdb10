"""The Referee gRPC service (proto/abluxxen/v1/referee.proto) on grpc.aio, with health, reflection, auth, TLS and a
graceful stop (docs/service.md).

Everything runs on one event loop and one SQLite connection. A call checks its caller and its arguments before it
writes anything; a refused call has no side effect.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import re
import signal
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection

from referee.errors import (
    AlreadyExists,
    BadInput,
    Busy,
    DataLoss,
    Denied,
    Exhausted,
    NotFound,
    NoTournament,
    Precondition,
    RefereeError,
    Unavailable,
)
from referee.log import get_logger
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc
from referee.records import FAULT_PB, RecordError, read_record
from referee.records.paths import VALIDATION
from referee.store import SqliteStore, open_store
from referee.store import ladder as ladder_store
from referee.tournament.config import ConfigError, TournamentConfig, WorkerSettings, check_address, parse
from referee.tournament.entrants import EntrantError, check_reachable
from referee.tournament.ladder_run import open_ladder
from referee.tournament.runner import NoDealKey, check_deal_key, create_tournament, entrant_names, finish_tournament

from . import ladders
from .addresses import UNIX_SCHEMES, NotAllowed, Unresolved, is_loopback, resolve, same_place
from .auth import Auth, Principal
from .convert import TOURNAMENT_STATE, entrant_pb, fields_of, game_summary, rfc3339, standings_pb
from .reads import Boards, Reader
from .registry import ACTIVE, CANCELLED, CREATED, FINISHED, PAUSED, RETIRED, RUNNING, Registry, bot_ratings
from .runs import FELL_BEHIND, Hub, LiveGame, Run, opening, public_decision
from .settings import NAME, Settings
from .submit import UNREACHABLE, Passed, check_bot
from .visibility import config_for, deal_secret, owners, private_to, record_for

SERVICE_NAME = "abluxxen.v1.Referee"


async def _abort(service: RefereeService, context: grpc.aio.ServicerContext, method: str, e: Exception) -> None:
    """End a call that raised ``e``, the one place a call's error becomes its status: a RefereeError is its status
    and message, but for a ``local`` one (its text may name the server's files) only its status; anything else is
    INTERNAL. What the caller is not told is logged."""
    if isinstance(e, RefereeError) and not e.local:
        await context.abort(e.status, e.message)
    service.log.exception("call failed", method=method)
    status = e.status if isinstance(e, RefereeError) else grpc.StatusCode.INTERNAL
    await context.abort(status, f"{method} failed in the referee; the server's log says why")


def _handle(fn: Callable) -> Callable:
    """A unary call whose errors end as ``_abort`` says."""

    @functools.wraps(fn)
    async def unary(self: RefereeService, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await fn(self, request, context)
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as e:
            await _abort(self, context, fn.__name__, e)

    return unary


def _handle_stream(fn: Callable) -> Callable:
    """A server-streaming call whose errors end as ``_abort`` says."""

    @functools.wraps(fn)
    async def stream(self: RefereeService, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            async for item in fn(self, request, context):
                yield item
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as e:
            await _abort(self, context, fn.__name__, e)

    return stream


DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 100, 1000
_PAGE_TOKEN = re.compile(r"[0-9]{1,12}")


def _page(request: Any) -> tuple[int, int]:
    """A List* request's page: (its token as a number, 0 for the first page; its size)."""
    size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
    if not request.page_token:
        return 0, size
    if not _PAGE_TOKEN.fullmatch(request.page_token):
        raise BadInput(f"page_token: {request.page_token[:40]!r} is not a token this server gave")
    return int(request.page_token), size


def _admitted(fn: Callable) -> Callable:
    """A Watch* stream, counted against the watcher caps (Streams) for as long as it is open, and ended (cancelled)
    when one message waits longer than ``watch_write_timeout_s`` to be taken: a client that stops granting flow
    control window cannot be sent a status, and would otherwise hold its place for ever."""

    @functools.wraps(fn)
    async def stream(self: RefereeService, request: Any, context: grpc.aio.ServicerContext) -> Any:
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


class Streams:
    """The open Watch* streams, capped in total and per client (a token's principal, or an address without one),
    so watchers cannot pile up: a stream past a cap is refused with RESOURCE_EXHAUSTED."""

    def __init__(self, total: int, per_client: int) -> None:
        self.total, self.per_client = total, per_client
        self.open: dict[str, int] = {}

    @staticmethod
    def client(who: Principal | None, context: grpc.aio.ServicerContext) -> str:
        if who is not None:
            return f"token:{who.name}"
        peer = context.peer()  # ipv4:127.0.0.1:5555, ipv6:[::1]:5555
        return "address:" + peer.rpartition(":")[0]

    def admit(self, who: Principal | None, context: grpc.aio.ServicerContext) -> contextlib.AbstractContextManager:
        return self.admit_client(self.client(who, context))

    @contextlib.contextmanager
    def admit_client(self, client: str) -> Iterator[None]:
        """Hold one stream's place for ``client`` (a principal's or an address's key), or raise Exhausted."""
        if sum(self.open.values()) >= self.total:
            raise Exhausted(f"the server has {self.total} watchers already, its limit; try again later")
        if self.open.get(client, 0) >= self.per_client:
            raise Exhausted(
                f"you have {self.per_client} watch streams open already, the limit per client; close one first"
            )
        self.open[client] = self.open.get(client, 0) + 1
        try:
            yield
        finally:
            self.open[client] -= 1
            if not self.open[client]:
                del self.open[client]


class RefereeService(ref_grpc.RefereeServicer):
    def __init__(self, store: SqliteStore, settings: Settings, workers: WorkerSettings | None = None) -> None:
        self.store = store
        self.settings = settings
        self.workers = workers or WorkerSettings()  # where every tournament's games are played (docs/scale.md)
        self.registry = Registry(store)
        self.reader = Reader(store.data)
        self.boards = Boards(self.reader)
        self.auth = Auth(settings)
        self.hub = Hub(settings.watch_queue)
        self.streams = Streams(settings.max_watchers, settings.max_watchers_per_client)
        self.live: dict[str, LiveGame] = {}
        self.runs: dict[str, Run] = {}
        self.draining = False
        self.submitting: set[str] = set()  # bot names whose validation is under way
        self.own_ports: set[int] = set()  # the ports the referee listens on: never a bot's address
        self.log = get_logger(service="referee")

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def resume_running(self) -> None:
        """Start a run for every tournament that was running when the server stopped."""
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

    def _start_run(self, config: TournamentConfig) -> Run:
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
        )
        self.runs[config.tournament_id] = run
        run.start()
        return run

    def _finished(self, tid: str) -> None:
        self.registry.set_state(tid, FINISHED)
        self.runs.pop(tid, None)
        self.hub.publish(tid, ref_pb.TournamentEvent(tournament=self._tournament(tid)))
        self.hub.publish(tid, None)

    async def drain(self, grace_s: float) -> None:
        """Stop taking work; let the games in flight finish within ``grace_s``; end every stream."""
        self.draining = True
        await asyncio.gather(*(run.drain(grace_s) for run in list(self.runs.values())))
        self.hub.close_all()
        for game in list(self.live.values()):
            game.end()

    def _writable(self) -> None:
        if self.draining:
            raise Unavailable("the referee is shutting down; try again once it is back")

    # -- entrants -----------------------------------------------------------------------------------------------

    async def _ratings(self) -> dict[tuple[str, int], tuple[float, float, int]]:
        return await self.reader.run(bot_ratings)

    @_handle
    async def SubmitBot(self, request: ref_pb.SubmitBotRequest, context) -> ref_pb.SubmitBotResponse:
        who = self.auth.caller(context)
        self._writable()
        name, address, owner = request.name.strip(), request.address.strip(), request.owner.strip()
        if not name:
            raise BadInput("name: must not be empty")
        if not NAME.fullmatch(name):
            raise BadInput(f"name: {name!r} must be 1-40 letters, digits or _.+-")
        if not address.startswith(UNIX_SCHEMES):
            try:
                check_address("address", "address", address)
            except ConfigError as e:
                raise BadInput(f"address: {e.reason}") from None
        if owner and not NAME.fullmatch(owner):
            raise BadInput(f"owner: {owner!r} must be 1-40 letters, digits or _.+-")
        if not who.organiser:
            if owner and owner != who.name:
                raise Denied(f"your token belongs to {who.name!r}; it cannot submit a bot owned by {owner!r}")
            owner = who.name
        elif not owner:
            owner = who.name
        latest = self.registry.bot(name)
        if latest is not None and not who.organiser and latest.owner != who.name:
            raise Denied(f"the bot {name!r} belongs to {latest.owner!r}; choose another name")
        try:
            dial = await resolve(address, self.settings.addresses, self.own_ports)
        except NotAllowed as e:
            raise BadInput(f"address: {address!r}: {e}") from None
        except Unresolved:
            self.log.info("bot refused", bot=name, address=address, reason="the host name does not resolve")
            return ref_pb.SubmitBotResponse(
                refusal=ref_pb.Refusal(check=ref_pb.COMPLIANCE_CHECK_HELLO, reason=UNREACHABLE)
            )
        if (latest is None or latest.owner != owner or latest.state != ACTIVE) and (
            self.registry.active_bots_of(owner) >= self.settings.max_bots_per_author
        ):
            raise Exhausted(
                f"owner: {owner!r} has {self.settings.max_bots_per_author} active bots, the limit per author; "
                "retire one, or submit a new version of one",
            )
        if any(b.owner != owner and same_place(b.address, dial) for b in self.registry.bots(active_only=True)):
            raise AlreadyExists(f"address: {address!r} is where another author's bot is submitted")
        if name in self.submitting:
            raise Busy(f"bot {name!r} is being validated already; wait for that to finish")
        self.submitting.add(name)
        try:
            self.log.info("validating bot", bot=name, address=address, dial=dial, owner=owner)
            outcome = await check_bot(name, dial, self.settings, self.store.data / VALIDATION)
        finally:
            self.submitting.discard(name)
        if not isinstance(outcome, Passed):
            self.log.info("bot refused", bot=name, reason=outcome.reason)
            return ref_pb.SubmitBotResponse(refusal=outcome)
        self._writable()
        bot = self.registry.add_bot(name, dial, owner, outcome.hello.version, outcome.hello.author, outcome.game_id)
        joined = ladders.enter(self.store, self.registry, bot)
        self.log.info("bot accepted", bot=bot.entrant_id, owner=owner, ladders=joined)
        return ref_pb.SubmitBotResponse(entrant=entrant_pb(bot, None, True))

    @_handle
    async def ListEntrants(self, request: ref_pb.ListEntrantsRequest, context) -> ref_pb.ListEntrantsResponse:
        who = self.auth.reader(context)
        after, size = _page(request)
        rows = self.registry.bots_page(request.active_only, after or None, size + 1)
        ratings = await self._ratings()
        return ref_pb.ListEntrantsResponse(
            entrants=[
                entrant_pb(b, ratings.get((b.name, b.version)), private_to(who, b.owner)) for _, b in rows[:size]
            ],
            next_page_token=str(rows[size - 1][0]) if len(rows) > size else "",  # the row the next page is older than
        )

    def _bot(self, name: str, version: int = 0):
        if not name:
            raise BadInput("name: must not be empty")
        bot = self.registry.bot(name, version)
        if bot is None:
            raise NotFound(f"no bot {name!r}" + (f" version {version}" if version else "") + " on this server")
        return bot

    @_handle
    async def GetEntrant(self, request: ref_pb.GetEntrantRequest, context) -> ref_pb.Entrant:
        who = self.auth.reader(context)
        bot = self._bot(request.name, request.version)
        return entrant_pb(bot, (await self._ratings()).get((bot.name, bot.version)), private_to(who, bot.owner))

    @_handle
    async def RetireEntrant(self, request: ref_pb.RetireEntrantRequest, context) -> ref_pb.Entrant:
        who = self.auth.caller(context)
        self._writable()
        bot = self._bot(request.name)
        if not who.organiser and bot.owner != who.name:
            raise Denied(f"the bot {bot.name!r} belongs to {bot.owner!r}; only they or an organiser may retire it")
        if bot.state != RETIRED:
            self.registry.retire_bot(bot.name, bot.version)
            left = ladders.withdraw(self.store, self.registry, bot)
            self.log.info("bot retired", bot=bot.entrant_id, by=who.name, ladders=left)
        ratings = await self._ratings()
        return entrant_pb(self._bot(bot.name, bot.version), ratings.get((bot.name, bot.version)), True)

    # -- tournaments --------------------------------------------------------------------------------------------

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
        )

    def _config(self, c: ref_pb.TournamentConfig) -> tuple[dict[str, Any], dict[str, tuple[str, int]]]:
        """The request's config as the TOML file's mapping, with the server's time control where it sets none and
        each submitted bot it names as its address and owner; and which bot versions it names."""
        if not c.name:
            raise BadInput("config.name: must not be empty")
        d = fields_of(c)
        d["time_control"] = dataclasses.asdict(self.settings.time_control) | d.get("time_control", {})
        links: dict[str, tuple[str, int]] = {}
        for i, entry in enumerate(d.get("entrants", [])):
            at = f"config.entrants[{i}]"
            if c.entrants[i].WhichOneof("source") is None:
                raise BadInput(f"{at}: give one of bot, address or policy")
            entry.setdefault("name", entry.get("bot") or entry.get("policy") or "")
            if "bot" in entry:
                bot = self.registry.bot(entry.pop("bot"))
                if bot is None:
                    raise NotFound(f"{at}.bot: no bot {c.entrants[i].bot!r} on this server")
                if bot.state != ACTIVE:
                    raise Precondition(f"{at}.bot: bot {bot.name!r} is retired")
                entry["address"] = bot.address
                entry["owner"] = bot.owner  # an owner's entrants never receive the same deck
                links[entry["name"]] = (bot.name, bot.version)
        return d, links

    @_handle
    async def CreateTournament(self, request: ref_pb.CreateTournamentRequest, context) -> ref_pb.Tournament:
        who = self.auth.organiser(context, "create a tournament")
        self._writable()
        if not request.HasField("config"):
            raise BadInput("config: missing")
        data, links = self._config(request.config)
        try:
            config = parse(data, "config")
        except ConfigError as e:
            raise BadInput(f"config.{e.key}: {e.reason}") from None
        tid = config.tournament_id
        if self.store.tournament(tid) is not None:
            raise AlreadyExists(
                f"tournament {tid} exists already (same config); change its name or seed for a new one",
            )
        if self.registry.open_tournaments_of(who.name) >= self.settings.max_open_tournaments:
            raise Exhausted(
                f"you have {self.settings.max_open_tournaments} tournaments created or running, the limit per "
                "organiser; start, finish or cancel one first",
            )
        if config.ladder is not None:
            open_ladder(self.store, config, source=f"api:{who.name}")
        else:
            create_tournament(self.store, config, source=f"api:{who.name}")
        self.registry.add_tournament(tid, who.name, links)
        created = self._tournament(tid, addresses=True)
        self.log.info("tournament created", tournament=tid, games=created.games, by=who.name)
        return created

    def _tid(self, tid: str) -> str:
        if not tid:
            raise BadInput("tournament_id: must not be empty")
        if self.store.tournament(tid) is None:
            raise NoTournament(tid, "on this server")
        return tid

    def _organiser_on(self, context: grpc.aio.ServicerContext, tid: str, what: str) -> str:
        """For an organiser's call ``what`` on tournament ``tid`` while the server takes work: its state."""
        self.auth.organiser(context, what)
        self._writable()
        return self.registry.state(self._tid(tid))[0]

    @_handle
    async def StartTournament(self, request: ref_pb.StartTournamentRequest, context) -> ref_pb.Tournament:
        tid = request.tournament_id
        state = self._organiser_on(context, tid, "start a tournament")
        if state in (FINISHED, CANCELLED):
            raise Precondition(f"tournament {tid} is {state}")
        if state == RUNNING:
            return self._tournament(tid, addresses=True)
        row = self.store.tournament(tid)
        assert row is not None
        config = TournamentConfig.from_json(row.config)
        try:
            check_deal_key(self.store, config)
        except NoDealKey as e:  # its text names the data folder: the log's, not the caller's
            self.log.warning("tournament not resumed", tournament=tid, reason=str(e))
            raise Precondition(str(e).replace(f" in {self.store.path}", "")) from None
        try:
            await check_reachable({e.name: e.address for e in config.entrants if e.address})
        except EntrantError as e:
            raise Precondition(f"tournament {tid} did not start: {e}") from None
        self._writable()
        if self.registry.state(tid)[0] not in (CREATED, PAUSED):  # another start won the race while we said Hello
            return self._tournament(tid, addresses=True)
        self.registry.set_state(tid, RUNNING)
        self._start_run(config)
        self.log.info("tournament started", tournament=tid)
        self.hub.publish(tid, ref_pb.TournamentEvent(tournament=self._tournament(tid)))
        return self._tournament(tid, addresses=True)

    @_handle
    async def CancelTournament(self, request: ref_pb.CancelTournamentRequest, context) -> ref_pb.Tournament:
        tid = request.tournament_id
        state = self._organiser_on(context, tid, "cancel a tournament")
        if state == FINISHED:
            raise Precondition(f"tournament {tid} is finished")
        if state == CANCELLED:
            return self._tournament(tid, addresses=True)
        self.registry.set_state(tid, CANCELLED)
        run = self.runs.pop(tid, None)
        if run is not None:
            await run.cancel()
        self.log.info("tournament cancelled", tournament=tid)
        self.hub.publish(tid, ref_pb.TournamentEvent(tournament=self._tournament(tid)))
        self.hub.publish(tid, None)
        return self._tournament(tid, addresses=True)

    @_handle
    async def PauseTournament(self, request: ref_pb.PauseTournamentRequest, context) -> ref_pb.Tournament:
        tid = request.tournament_id
        state = self._organiser_on(context, tid, "pause a ladder")
        self._ladder(tid)
        if state in (FINISHED, CANCELLED):
            raise Precondition(f"ladder {tid} is {state}")
        if state != PAUSED:
            self.registry.set_state(tid, PAUSED)
            run = self.runs.pop(tid, None)
            if run is not None:
                await run.drain(self.settings.shutdown_grace_s)  # the games in flight finish; no new one starts
            self.log.info("ladder paused", tournament=tid)
            self.hub.publish(tid, ref_pb.TournamentEvent(tournament=self._tournament(tid)))
        return self._tournament(tid, addresses=True)

    @_handle
    async def StopTournament(self, request: ref_pb.StopTournamentRequest, context) -> ref_pb.Tournament:
        tid = request.tournament_id
        state = self._organiser_on(context, tid, "stop a ladder")
        self._ladder(tid)
        if state == CANCELLED:
            raise Precondition(f"ladder {tid} is cancelled")
        if state == FINISHED:
            return self._tournament(tid, addresses=True)
        run = self.runs.get(tid)
        if run is not None:
            run.stop()  # it plays the rounds it chose, then finishes
        else:
            finish_tournament(self.store, tid)
            self._finished(tid)
        self.log.info("ladder stopped", tournament=tid)
        return self._tournament(tid, addresses=True)

    def _ladder(self, tid: str) -> None:
        row = self.store.tournament(tid)
        if row is None or "ladder" not in row.config:
            raise Precondition(f"tournament {tid} is not a ladder: only a ladder is paused or stopped")

    @_handle
    async def GetTournament(self, request: ref_pb.GetTournamentRequest, context) -> ref_pb.Tournament:
        who = self.auth.reader(context)
        return self._tournament(self._tid(request.tournament_id), who=who)

    @_handle
    async def ListTournaments(self, request: ref_pb.ListTournamentsRequest, context) -> ref_pb.ListTournamentsResponse:
        who = self.auth.reader(context)
        start, size = _page(request)
        ids = self.registry.tournament_ids(start, size + 1)
        return ref_pb.ListTournamentsResponse(
            tournaments=[self._tournament(tid, who=who) for tid in ids[:size]],
            next_page_token=str(start + size) if len(ids) > size else "",
        )

    @_handle_stream
    @_admitted
    async def WatchTournament(self, request: ref_pb.WatchTournamentRequest, context):
        self.auth.reader(context)
        tid = self._tid(request.tournament_id)
        queue = self.hub.subscribe(tid)
        try:
            now = self._tournament(tid)
            # built now (off the loop) and kept current by each game from here, for every watcher at once
            standings = await self.boards.standings(tid, now.finished)
            yield ref_pb.TournamentEvent(tournament=now)
            if now.finished:
                yield ref_pb.TournamentEvent(standings=standings_pb(standings))
            if now.state in (ref_pb.TOURNAMENT_STATE_FINISHED, ref_pb.TOURNAMENT_STATE_CANCELLED) or self.draining:
                return
            while (event := await queue.get()) is not None:
                if event is FELL_BEHIND:
                    raise Exhausted(
                        f"this watcher fell more than {queue.limit} events behind the tournament and was dropped; "
                        "read the stream as it comes, then watch again",
                    )
                yield event
        finally:
            self.hub.unsubscribe(tid, queue)

    # -- results ------------------------------------------------------------------------------------------------

    @_handle
    async def GetStandings(self, request: ref_pb.GetStandingsRequest, context) -> ref_pb.Standings:
        self.auth.reader(context)
        row = self.store.tournament(self._tid(request.tournament_id))
        assert row is not None
        shown = ladders.shown(self.store, row.id, request.all_versions)
        return standings_pb(await self.boards.standings(row.id, row.done, shown))

    @_handle
    async def ListGames(self, request: ref_pb.ListGamesRequest, context) -> ref_pb.ListGamesResponse:
        self.auth.reader(context)
        fault = request.fault.strip().lower()
        if fault and fault != "any" and fault not in FAULT_PB:
            raise BadInput(f"fault: {request.fault!r} is not 'any' or a fault kind ({', '.join(sorted(FAULT_PB))})")
        start, size = _page(request)
        tids = [self._tid(request.tournament_id)] if request.tournament_id else []
        entrant = request.entrant

        def matching(store: SqliteStore) -> list[ref_pb.GameSummary]:  # on the reader thread: every stored game
            out = []
            for tid in tids or [t.id for t in store.tournaments()]:
                for g in store.games(tid):
                    if entrant and entrant not in g.names:
                        continue
                    if fault == "any" and not any(s.faults for s in g.seats):
                        continue
                    if fault not in ("", "any") and not any(s.faults.get(fault) for s in g.seats):
                        continue
                    out.append(game_summary(tid, g))
            return out

        out = await self.reader.run(matching)
        return ref_pb.ListGamesResponse(
            games=out[start : start + size],
            total=len(out),
            next_page_token=str(start + size) if start + size < len(out) else "",
        )

    def deal_left(self, game_id: str) -> int:
        """How many other games, in any tournament here, still have this game's deal to play or are playing it (its
        deck, and even its public events, would tell the cards to come: visibility.deal_secret)."""
        scheduled = self.registry.scheduled_game(game_id)
        return 0 if scheduled is None else self.store.deal_in_play(scheduled[2], game_id)

    def owners(self, tid: str) -> dict[str, str]:
        """Entrant name -> owner in tournament ``tid`` (only its submitted bots have one), a ladder's entrants too."""
        row = self.store.tournament(tid) if tid else None
        if row is None:
            return {}
        joined = {e.name: e.owner for e in ladder_store.entrants(self.store, tid)} if "ladder" in row.config else {}
        return owners(row.config) | joined

    def _stored_record(self, game_id: str, unfinished: str) -> rec_pb.GameRecord:
        """The record of the finished game ``game_id``; ``unfinished`` is the FAILED_PRECONDITION message for a game
        that is scheduled but not finished. A record that cannot be read is DATA_LOSS."""
        where = self.registry.game_location(game_id)
        if where is None:
            if self.registry.scheduled_game(game_id) is not None:
                raise Precondition(unfinished)
            raise NotFound(f"no game {game_id!r} on this server")
        path = self.store.record_file(where[1])
        if path is None:
            raise NotFound(f"game {game_id} was stored without a record")
        try:
            return read_record(path)
        except RecordError as e:  # the reason names the server's files: for its log only
            self.log.error("record unreadable", game_id=game_id, error=str(e))
            raise DataLoss(f"the record of {game_id} cannot be read; the server's log says why") from None

    @_handle
    async def GetGameRecord(self, request: ref_pb.GetGameRecordRequest, context) -> rec_pb.GameRecord:
        who = self.auth.reader(context)
        if not request.game_id:
            raise BadInput("game_id: must not be empty")
        record = self._stored_record(
            request.game_id, f"game {request.game_id} has not finished; watch it with WatchGame"
        )
        return record_for(who, record, self.owners(record.header.tournament_id), self.deal_left(request.game_id))

    @_handle_stream
    @_admitted
    async def WatchGame(self, request: ref_pb.WatchGameRequest, context):
        who = self.auth.reader(context)
        if not request.game_id:
            raise BadInput("game_id: must not be empty")
        if deal_secret(who, left := self.deal_left(request.game_id)):
            raise Precondition(
                f"game {request.game_id}'s deal is still to be played in {left} other game(s); "
                "it can be watched once they are over"
            )
        live = self.live.get(request.game_id)
        if live is not None:
            async for item in live.follow(self.settings.spectator_delay_ms / 1000):
                yield item
            return
        record = self._stored_record(request.game_id, f"game {request.game_id} has not started yet")
        h = record.header
        from referee.wire import options_from_pb

        yield opening(
            h.game_id,
            h.tournament_id,
            [p.name for p in h.players],
            [p.version for p in h.players],
            options_from_pb(h.options),
            h.seed,
            h.start_seat,
            0,
        )
        for d in record.decisions:
            yield public_decision(d)
        f = record.footer
        yield ref_pb.GameWatchEvent(
            closing=ref_pb.GameClosing(reason=f.reason, scores=f.scores, places=f.places, retired=f.retired)
        )


# -- serving -------------------------------------------------------------------------------------------------------


class ServeError(RefereeError):
    """The server cannot start: the message says why."""


def _check_listen(host: str, tls: tuple[Path, Path] | None, allow_insecure_remote: bool) -> None:
    if tls is None and not is_loopback(host) and not allow_insecure_remote:
        raise ServeError(
            f"refusing to listen in plaintext on {host}, which is not a loopback address: give "
            "--tls-cert and --tls-key, or --allow-insecure-remote if something else encrypts the "
            "traffic"
        )


async def _start_site(
    site: Callable[[RefereeService], Awaitable[Callable[[], Awaitable[None]]]],
    service: RefereeService,
    server: grpc.aio.Server,
) -> Callable[[], Awaitable[None]]:
    """Start ``site`` beside the service; if it cannot start, the service stops too."""
    try:
        return await site(service)
    except BaseException:
        await server.stop(0)
        service.reader.close()
        service.store.close()
        raise


async def serve(
    data: Path,
    host: str,
    port: int,
    settings: Settings,
    *,
    tls: tuple[Path, Path] | None = None,
    allow_insecure_remote: bool = False,
    stop: asyncio.Event | None = None,
    workers: WorkerSettings | None = None,
    site: Callable[[RefereeService], Awaitable[Callable[[], Awaitable[None]]]] | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT (or ``stop``), then shut down gracefully. Prints ``listening on HOST:PORT``.
    Every tournament's games are played on ``workers`` (default: in this process). ``site`` starts something that
    serves beside the service on its loop (the web site, referee/web) and returns how to stop it: it stops after
    the service has drained (which ends its live streams)."""
    _check_listen(host, tls, allow_insecure_remote)
    log = get_logger(service="referee")
    store = open_store(data)
    service = RefereeService(store, settings, workers)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    ref_grpc.add_RefereeServicer_to_server(service, server)
    health = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    names = (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    address = f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"
    if tls is not None:
        try:
            creds = grpc.ssl_server_credentials([(tls[1].read_bytes(), tls[0].read_bytes())])
        except OSError as e:
            store.close()
            raise ServeError(f"cannot read the TLS certificate or key: {e}") from None
    try:
        bound = server.add_secure_port(address, creds) if tls is not None else server.add_insecure_port(address)
    except RuntimeError:  # grpcio raises where it once returned 0: the port is taken or the host is not ours
        bound = 0
    if bound == 0:
        store.close()
        why = " (or the TLS certificate and key are not a PEM pair that match)" if tls is not None else ""
        raise ServeError(f"cannot listen on {address}: the port is in use or the host is not this machine's{why}")
    service.own_ports.add(bound)
    await server.start()
    for name in ("", SERVICE_NAME):
        await health.set(name, health_pb2.HealthCheckResponse.SERVING)
    stop_site = await _start_site(site, service, server) if site is not None else None
    service.resume_running()
    shown = re.sub(r":\d+$", f":{bound}", address)
    print(f"listening on {shown}", flush=True)
    log.info("referee serving", address=shown, data=str(data), tls=tls is not None)

    loop = asyncio.get_running_loop()
    if stop is None:
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        log.info(
            "shutting down",
            grace_s=settings.shutdown_grace_s,
            in_flight=sum(len(r.in_flight) for r in service.runs.values()),
        )
        for name in ("", SERVICE_NAME):
            await health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await service.drain(settings.shutdown_grace_s)
        if stop_site is not None:
            await stop_site()
        await server.stop(2.0)
        service.reader.close()
        store.close()
        log.info("stopped")
