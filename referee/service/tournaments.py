"""The service's calls on tournaments: create, start, cancel, get and list."""

from __future__ import annotations

import dataclasses
from typing import Any

import grpc

from referee.errors import AlreadyExists, BadInput, Exhausted, NotFound, Precondition
from referee.fleet import EntrantError, check_reachable
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.tournament.config import ConfigError, TournamentConfig, parse
from referee.tournament.ladder_run import open_ladder
from referee.tournament.runner import NoDealKey, check_deal_key, create_tournament, finish_tournament

from .base import ServiceBase, handle
from .convert import fields_of
from .paging import page
from .registry import ACTIVE, CANCELLED, CREATED, FINISHED, PAUSED, RUNNING


def checked(data: dict[str, Any]) -> TournamentConfig:
    """The one check of a config, at Create and again at Start: the mapping parsed, and its stored form (what Start
    reads back) parsed again, so that Create accepts no config that Start would refuse."""
    try:
        return parse(parse(data, "config").to_json(), "config")
    except ConfigError as e:
        raise BadInput(f"config.{e.key}: {e.reason}" if e.key else f"config: {e.reason}") from None


class TournamentCalls(ServiceBase):
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

    @handle
    async def CreateTournament(self, request: ref_pb.CreateTournamentRequest, context) -> ref_pb.Tournament:
        who = self.auth.organiser(context, "create a tournament")
        self._writable()
        if not request.HasField("config"):
            raise BadInput("config: missing")
        data, links = self._config(request.config)
        config = checked(data)
        tid = config.tournament_id
        if tid in self.creating or self.store.tournament(tid) is not None:
            raise AlreadyExists(
                f"tournament {tid} exists already (same config); change its name or seed for a new one",
            )
        creating = sum(by == who.name for by in self.creating.values())
        if self.registry.open_tournaments_of(who.name) + creating >= self.settings.max_open_tournaments:
            raise Exhausted(
                f"you have {self.settings.max_open_tournaments} tournaments created or running, the limit per "
                "organiser; start, finish or cancel one first",
            )
        source = f"api:{who.name}"
        self.creating[tid] = who.name  # no await since the checks: a concurrent call sees this one
        try:
            if config.ladder is not None:
                open_ladder(self.store, config, source=source)
            else:  # up to MAX_GAMES slots built and inserted: on the reader thread, so the loop keeps answering
                await self.reader.run(lambda store: create_tournament(store, config, source=source))
        finally:
            del self.creating[tid]
        self.registry.add_tournament(tid, who.name, links)
        created = self._tournament(tid, addresses=True)
        self.log.info("tournament created", tournament=tid, games=created.games, by=who.name)
        return created

    def _organiser_on(self, context: grpc.aio.ServicerContext, tid: str, what: str) -> str:
        """For an organiser's call ``what`` on tournament ``tid`` while the server takes work: its state."""
        self.auth.organiser(context, what)
        self._writable()
        return self.registry.state(self._tid(tid))[0]

    @handle
    async def StartTournament(self, request: ref_pb.StartTournamentRequest, context) -> ref_pb.Tournament:
        tid = request.tournament_id
        state = self._organiser_on(context, tid, "start a tournament")
        if state in (FINISHED, CANCELLED):
            raise Precondition(f"tournament {tid} is {state}")
        if state == RUNNING:
            return self._tournament(tid, addresses=True)
        row = self.store.tournament(tid)
        assert row is not None
        config = checked(row.config)
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

    @handle
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

    @handle
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

    @handle
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

    @handle
    async def GetTournament(self, request: ref_pb.GetTournamentRequest, context) -> ref_pb.Tournament:
        who = self.auth.reader(context)
        return self._tournament(self._tid(request.tournament_id), who=who)

    @handle
    async def ListTournaments(self, request: ref_pb.ListTournamentsRequest, context) -> ref_pb.ListTournamentsResponse:
        who = self.auth.reader(context)
        start, size = page(request)
        ids = self.registry.tournament_ids(start, size + 1)
        return ref_pb.ListTournamentsResponse(
            tournaments=[self._tournament(tid, who=who) for tid in ids[:size]],
            next_page_token=str(start + size) if len(ids) > size else "",
        )
