"""The service's calls on results: standings, games and their records."""

from __future__ import annotations

from pathlib import Path

from referee.errors import BadInput, DataLoss, NotFound, Precondition
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records import FAULT_PB, RecordError, read_record
from referee.records.paths import VALIDATION, record_in
from referee.store import SqliteStore
from referee.store import ladder as ladder_store

from . import ladders
from .auth import Principal
from .base import ServiceBase, handle
from .convert import game_summary, standings_pb
from .paging import page
from .submit import VALIDATION_PREFIX, owner_of
from .visibility import owners, private_to, record_for


class ResultCalls(ServiceBase):
    @handle
    async def GetStandings(self, request: ref_pb.GetStandingsRequest, context) -> ref_pb.Standings:
        self.auth.reader(context)
        row = self.store.tournament(self._tid(request.tournament_id))
        assert row is not None
        shown = ladders.shown(self.store, row.id, request.all_versions)
        return standings_pb(await self.boards.standings(row.id, row.done, shown))

    @handle
    async def ListGames(self, request: ref_pb.ListGamesRequest, context) -> ref_pb.ListGamesResponse:
        self.auth.reader(context)
        fault = request.fault.strip().lower()
        if fault and fault != "any" and fault not in FAULT_PB:
            raise BadInput(f"fault: {request.fault!r} is not 'any' or a fault kind ({', '.join(sorted(FAULT_PB))})")
        start, size = page(request)
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
        if not request.oldest_first:  # the latest first, as the site and the local `abluxx games` list them
            out.reverse()
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

    @handle
    async def GetGameRecord(self, request: ref_pb.GetGameRecordRequest, context) -> rec_pb.GameRecord:
        who = self.auth.reader(context)
        if not request.game_id:
            raise BadInput("game_id: must not be empty")
        return self.record_as(who, request.game_id)

    def record_as(self, who: Principal | None, game_id: str) -> rec_pb.GameRecord:
        """The record of ``game_id`` as ``who`` may read it (visibility.record_for): GetGameRecord's answer, and the
        site's JSON API and record downloads. A validation game only for its author and organisers (NotFound to
        anyone else); a game scheduled but not finished is FAILED_PRECONDITION."""
        if game_id.startswith(VALIDATION_PREFIX) and self.registry.game_location(game_id) is None:
            return self._validation_record(who, game_id)
        record = self._stored_record(game_id, f"game {game_id} has not finished; watch it with WatchGame")
        return record_for(who, record, self.owners(record.header.tournament_id), self.deal_left(game_id))

    def _validation_record(self, who: Principal | None, game_id: str) -> rec_pb.GameRecord:
        try:
            return validation_record(self.store.data, who, game_id)
        except RecordError as e:
            self.log.error("record unreadable", game_id=game_id, error=str(e))
            raise DataLoss(f"the record of {game_id} cannot be read; the server's log says why") from None


def validation_record(data: Path, who: Principal | None, game_id: str) -> rec_pb.GameRecord:
    """A bot's validation game, accepted or refused, for the author who submitted it and organisers
    (``private_to``); to anyone else it does not exist (NotFound). Its deal was fresh and is never dealt again.
    The API's GetGameRecord and the site's game page both read it here. RecordError: its record is unreadable."""
    folder = data / VALIDATION
    owner = owner_of(folder, game_id)
    if owner is None or not private_to(who, owner):
        raise NotFound(f"no game {game_id!r} on this server")
    record = read_record(record_in(folder, game_id))
    return record_for(who, record, {p.name: owner for p in record.header.players[:1]}, 0)
