"""The service's Watch* streams: a tournament's events and a game's, live or from its record."""

from __future__ import annotations

from referee.errors import BadInput, Exhausted, Precondition
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

from .base import admitted, handle_stream
from .convert import standings_pb
from .results import ResultCalls
from .runs import FELL_BEHIND, opening, public_decision
from .visibility import deal_secret


class WatchCalls(ResultCalls):
    @handle_stream
    @admitted
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

    @handle_stream
    @admitted
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
