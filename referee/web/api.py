"""The site's read-only JSON API under ``/api/`` and its record downloads (docs/web.md, "JSON API"). Each answer is
the gRPC API's own message for the same question, as JSON (protobuf's JSON mapping, with the proto's field names),
decided for the reader by the service's own calls and ``referee.service.visibility``: a bot version's private
details for its owner and organisers only (``version_private``), a record as GetGameRecord gives it (``record_as``:
no deck before its reveal)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from referee.errors import DataLoss, NotFound, Precondition
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records import record_bytes
from referee.service.convert import game_summary, standings_pb

from .pages import Pages, kind_of
from .query import board_rows, game_filter, number, paged, text

# What GET /api/ lists: every address of the API, and what it gives.
ENDPOINTS = {
    "/api/tournaments": "the ladders and tournaments, the newest first (start=N pages)",
    "/api/t/ID": "one tournament: its name, kind, state and games played of those scheduled",
    "/api/t/ID/standings": "its standings, as GetStandings (all=1: a ladder's every version; sort, desc=1, q)",
    "/api/t/ID/games": "its finished games, the latest first (entrant, opponent, result, fault; before=SLOT pages)",
    "/api/games/GAME_ID": "a game's record, as GetGameRecord gives it to you",
    "/api/bots": "the submitted bots' latest versions, the newest first (all=1: every version; before=ROW pages)",
    "/api/bots/NAME": "every version of one bot",
    "/api/live": "the games being played now",
}


class JsonResponse(Response):
    """JSON with every character outside ASCII written as an escape: a name's bidi override or control character
    arrives as ``\\u202e``, never raw, whatever shows the body."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, sort_keys=True).encode("ascii")


def as_json(message: Message) -> dict[str, Any]:
    return MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)


def _page(items: list[Any], next_url: str | None) -> JsonResponse:
    return JsonResponse({"items": items, "next": next_url})


Endpoint = Callable[[Request], Awaitable[Response]]


def json_errors(endpoint: Endpoint) -> Endpoint:
    """``endpoint`` answering its errors (400, 404, 409, 503) as JSON: ``{"error": why, "status": code}``."""

    async def call(request: Request) -> Response:
        try:
            return await endpoint(request)
        except HTTPException as e:
            return JsonResponse({"error": e.detail, "status": e.status_code}, e.status_code)

    return call


class Api:
    def __init__(self, pages: Pages) -> None:
        self.pages = pages
        self.site = pages.site
        self.service = pages.service
        self.size = pages.size

    async def index(self, request: Request) -> Response:
        return JsonResponse({"endpoints": ENDPOINTS, "docs": "docs/web.md, JSON API"})

    def _tournament(self, tid: str) -> dict[str, Any]:
        row = self.pages.row_of(tid)
        state = self.service.registry.state(tid, row)[0]
        return {"id": row.id, "name": row.name, "kind": kind_of(row), "state": state, "games": row.games,
                "done": row.done}  # fmt: skip

    async def tournaments(self, request: Request) -> Response:
        start = number(request, "start") or 0
        ids = self.service.registry.tournament_ids(start, self.size + 1)
        more = f"/api/tournaments?start={start + self.size}" if len(ids) > self.size else None
        return _page([self._tournament(t) for t in ids[: self.size]], more)

    async def tournament(self, request: Request) -> Response:
        return JsonResponse(self._tournament(request.path_params["tid"]))

    async def standings(self, request: Request) -> Response:
        standings = await self.pages.standings_of(request, self.pages.row_of(request.path_params["tid"]))
        rows, _, next_start = paged(request, board_rows(request, standings.rows), self.size)
        out = as_json(standings_pb(dataclasses.replace(standings, rows=rows)))
        out["next"] = None if next_start is None else _next(request, "start", next_start)
        return JsonResponse(out)

    async def games(self, request: Request) -> Response:
        tid = request.path_params["tid"]
        self.pages.head_of(tid)  # 404 for a tournament that does not exist
        before = number(request, "before")
        entrant = text(request, "entrant")
        only = game_filter(request, entrant)
        games = await self.service.reader.run(lambda s: s.recent_games(tid, before, self.size + 1, entrant, only))
        more = _next(request, "before", games[self.size - 1].slot) if len(games) > self.size else None
        return _page([as_json(game_summary(tid, g)) for g in games[: self.size]], more)

    async def game(self, request: Request) -> Response:
        return JsonResponse(as_json(self.record(request, request.path_params["game_id"])))

    def record(self, request: Request, game_id: str) -> rec_pb.GameRecord:
        """The record of ``game_id`` as the reader may see it (GetGameRecord's ``record_as``); 404, or 409 for a
        game not finished."""
        try:
            return self.service.record_as(self.site.who(request), game_id)
        except NotFound as e:
            raise HTTPException(404, str(e)) from None
        except Precondition as e:
            raise HTTPException(409, str(e)) from None
        except DataLoss as e:
            raise HTTPException(500, str(e)) from None

    async def bots(self, request: Request) -> Response:
        before = number(request, "before")
        every = request.query_params.get("all") == "1"
        rows = self.service.registry.bots_page(False, before, self.size + 1, every)
        shown = await self.service.entrants_as(self.site.who(request), [b for _, b in rows[: self.size]])
        more = _next(request, "before", rows[self.size - 1][0]) if len(rows) > self.size else None
        return _page([as_json(e) for e in shown], more)

    async def bot(self, request: Request) -> Response:
        versions = self.service.registry.versions(request.path_params["name"])
        if not versions:
            raise HTTPException(404, "no such bot on this server")
        page, _, next_start = paged(request, versions, self.size)
        shown = await self.service.entrants_as(self.site.who(request), page)
        more = None if next_start is None else _next(request, "start", next_start)
        return _page([as_json(e) for e in shown], more)

    def routes(self) -> list[Route]:
        api = [
            ("/api/", self.index), ("/api/tournaments", self.tournaments), ("/api/t/{tid}", self.tournament),
            ("/api/t/{tid}/standings", self.standings), ("/api/t/{tid}/games", self.games),
            ("/api/games/{game_id}", self.game), ("/api/bots", self.bots), ("/api/bots/{name}", self.bot),
            ("/api/live", self.live),
        ]  # fmt: skip
        return [Route(path, json_errors(call)) for path, call in api] + [
            Route("/g/{game_id}/record.{form:str}", self.download)
        ]

    async def live(self, request: Request) -> Response:
        page, _, next_start = paged(request, self.pages.live_games(), self.size)
        return _page(page, None if next_start is None else _next(request, "start", next_start))

    async def download(self, request: Request) -> Response:
        """A game's record to download: ``record.abluxx`` (the record file's format, which ``abluxx verify`` and
        the viewer read) or ``record.json``; 409 while its deal is still to be played (a record without its deck
        is no record file)."""
        game_id, form = request.path_params["game_id"], request.path_params["form"]
        if form not in ("abluxx", "json"):
            raise HTTPException(404, "a record downloads as record.abluxx or record.json")
        record = self.record(request, game_id)
        if form == "json":
            body, media = json.dumps(as_json(record), ensure_ascii=True, indent=1).encode(), "application/json"
        elif record.deal_withheld:
            raise HTTPException(409, "this game's deal is still to be played elsewhere: its record is shown after")
        else:
            body, media = record_bytes(record), "application/octet-stream"
        disposition = f'attachment; filename="{_file_name(game_id)}.{"json" if form == "json" else "abluxx"}"'
        return Response(body, media_type=media, headers={"content-disposition": disposition})


def _file_name(game_id: str) -> str:
    """A game id as a file name: only the characters a file name and a header take as they are."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in game_id)[:100] or "game"


def _next(request: Request, key: str, value: int) -> str:
    """The request's own address with ``key`` set to ``value``: the next page."""
    params = dict(request.query_params)
    params[key] = str(value)
    return f"{request.url.path}?{urlencode(sorted(params.items()))}"
