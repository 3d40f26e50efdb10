"""The game page: a finished game in the replay viewer (referee/view), or a game in play as its public events,
each only as far as the API would show it (``referee.service.visibility``): no deck, no decision and no live event
while another game still has the deal to play, unless the reader is an organiser."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import Any

from google.protobuf import text_format
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from referee.errors import NotFound
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records import RecordError, read_record
from referee.service.auth import Principal
from referee.service.results import validation_record
from referee.service.runs import LiveGame
from referee.service.submit import VALIDATION_PREFIX
from referee.service.visibility import deal_secret, record_for
from referee.terminal import printable
from referee.view.page import json_block
from referee.view.replay import build_replay
from referee.view.viewer import viewer_body

from .app import Site


def _live_events(live: LiveGame, delay_s: float) -> list[dict[str, Any]]:
    """The public decisions of a game in play that are at least ``delay_s`` old (the spectator delay)."""
    now = time.monotonic()
    names = [p.name for p in live.items[0][1].opening.players]
    out = []
    for t, item in live.items[1:]:
        if t + delay_s > now:
            break
        if item.WhichOneof("event") != "decision":
            continue
        d = item.decision
        out.append({
            "seq": d.seq, "name": names[d.seat] if d.seat < len(names) else "?", "fault": d.fault,
            "events": [text_format.MessageToString(e, as_one_line=True) for e in d.events],
        })  # fmt: skip
    return out


async def game_page(site: Site, request: Request, game_id: str, replays: Replays) -> Response:
    service = site.service
    who = site.who(request)
    left = service.deal_left(game_id)
    live = service.live.get(game_id)
    if live is not None:
        opening = live.items[0][1].opening
        secret = deal_secret(who, left)
        events = [] if secret else _live_events(live, service.settings.spectator_delay_ms / 1000)
        return site.render(
            request, "live_game.html", game_id=game_id, tid=opening.tournament_id, secret=secret, left=left,
            names=[p.name for p in opening.players], events=events[-200:],
        )  # fmt: skip
    row = service.store.game(game_id)
    if row is None and game_id.startswith(VALIDATION_PREFIX) and service.registry.game_location(game_id) is None:
        return await _validation_page(site, request, who, game_id)
    if row is None:
        scheduled = service.registry.scheduled_game(game_id)
        if scheduled is None:
            raise HTTPException(404, "no such game on this server")
        return site.render(request, "pending_game.html", game_id=game_id, tid=scheduled[0])
    tid = service.registry.game_location(game_id)
    tid_s = tid[0] if tid else ""
    if deal_secret(who, left):
        return site.render(request, "result_game.html", game_id=game_id, tid=tid_s, game=row, left=left, missing=False)
    key = (game_id, who)
    if (shown := replays.get(key)) is None:
        path = service.store.record_file(row.record_path)
        try:
            record = await asyncio.to_thread(read_record, path) if path is not None else None
        except RecordError:
            site.log.error("record unreadable", game_id=game_id)
            record = None
        if record is None:
            return site.render(request, "result_game.html", game_id=game_id, tid=tid_s, game=row, left=left,
                               missing=True)  # fmt: skip
        shown = await _replayed(record_for(who, record, service.owners(tid_s), left))
        replays.put(key, shown)
    return _replay_response(site, request, shown, tid_s)


async def _validation_page(site: Site, request: Request, who: Principal | None, game_id: str) -> Response:
    """A validation game (its bot accepted or refused) for its author and organisers, as GetGameRecord serves it."""
    try:
        record = await asyncio.to_thread(validation_record, site.service.store.data, who, game_id)
    except NotFound:
        raise HTTPException(404, "no such game on this server") from None
    except RecordError:
        site.log.error("record unreadable", game_id=game_id)
        raise HTTPException(404, "this validation game's record is not on the server any more") from None
    return await replay_page(site, request, record, "")


class Replays:
    """The replay pages of the last REPLAYS finished games read, per reader (what a reader may see of a record
    differs), so that a game many people open is read and replayed once."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pages: OrderedDict[tuple[str, Principal | None], tuple[str, str, str, str]] = OrderedDict()

    def get(self, key: tuple[str, Principal | None]) -> tuple[str, str, str, str] | None:
        if (page := self.pages.get(key)) is not None:
            self.pages.move_to_end(key)
        return page

    def put(self, key: tuple[str, Principal | None], page: tuple[str, str, str, str]) -> None:
        self.pages[key] = page
        while len(self.pages) > self.size:
            self.pages.popitem(last=False)


REPLAYS = 32  # replay pages kept, each a few hundred KB at most


def _printable(record: rec_pb.GameRecord) -> rec_pb.GameRecord:
    """A copy of ``record`` whose texts a bot or an entrant wrote (names, Hello version and author, fault details)
    have their controls and bidi overrides escaped, as the pages' own texts (render._shown): the viewer's script
    inserts them as they are."""
    shown = rec_pb.GameRecord()
    shown.CopyFrom(record)
    for p in shown.header.players:
        p.name, p.version, p.author = printable(p.name), printable(p.version), printable(p.author)
    for d in shown.decisions:
        if d.fault_detail:
            d.fault_detail = printable(d.fault_detail)
    return shown


async def _replayed(shown: rec_pb.GameRecord) -> tuple[str, str, str, str]:
    """(game id, title, viewer body, data block) of a record already cut to what its reader may see."""
    replay = await asyncio.to_thread(lambda: build_replay(_printable(shown)))
    title, body = viewer_body(replay)
    return shown.header.game_id, title, body, json_block("game-data", replay.to_json())


def _replay_response(site: Site, request: Request, page: tuple[str, str, str, str], tid: str) -> Response:
    game_id, title, body, data = page
    return site.render(request, "game.html", game_id=game_id, tid=tid, title=title, viewer=body, data=data)


async def replay_page(site: Site, request: Request, shown: rec_pb.GameRecord, tid: str) -> Response:
    """A record, already cut to what the reader may see, in the replay viewer."""
    return _replay_response(site, request, await _replayed(shown), tid)
