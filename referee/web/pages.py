"""The site's pages (docs/web.md). Each reads what it shows through the service (its store, the reader thread for
anything that grows with the store, the standings boards) and decides what a reader may see with
``referee.service.visibility``, the API's own rules."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from referee.records import read_record
from referee.records.paths import VALIDATION, record_in
from referee.service.registry import BotVersion
from referee.service.visibility import private_to
from referee.store import TournamentRow

from .app import Site
from .games import game_page
from .markdown import how_to_enter
from .plot import plot

KIND = {"ladder": "ladder"}  # a tournament config's kind -> what the site calls it (default: tournament)


def _number(request: Request, key: str) -> int | None:
    """A paging parameter: a whole number, or None when absent; 400 otherwise."""
    raw = request.query_params.get(key)
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or len(raw) > 12:
        raise HTTPException(400, f"{key} must be a whole number")
    return int(raw)


def kind_of(row: TournamentRow) -> str:
    return KIND.get(str(row.config.get("kind", "")), "tournament")


class Pages:
    def __init__(self, site: Site) -> None:
        self.site = site
        self.service = site.service
        self.size = site.http.page_size

    def _row(self, tid: str) -> TournamentRow:
        row = self.service.store.tournament(tid)
        if row is None:
            raise HTTPException(404, "no such tournament or ladder on this server")
        return row

    def live_games(self, tid: str | None = None) -> list[dict[str, Any]]:
        """The games being played now (of ``tid`` when given): what a tournament watcher hears of them."""
        out = []
        for game_id, live in list(self.service.live.items()):
            opening = live.items[0][1].opening
            if tid is None or opening.tournament_id == tid:
                names = [p.name for p in opening.players]
                out.append({"game_id": game_id, "tid": opening.tournament_id, "names": names})
        return out

    async def home(self, request: Request) -> Response:
        start = _number(request, "start") or 0
        ids = self.service.registry.tournament_ids(start, self.size + 1)
        rows = [r for r in (self.service.store.tournament(t) for t in ids[: self.size]) if r is not None]
        states = {r.id: self.service.registry.state(r.id)[0] for r in rows}
        live = self.live_games()
        return self.site.render(
            request, "home.html", rows=rows, kinds={r.id: kind_of(r) for r in rows}, states=states,
            live=live[: self.size], live_more=len(live) > self.size, start=start,
            next_start=start + self.size if len(ids) > self.size else None,
        )  # fmt: skip

    async def _board(self, request: Request, tid: str) -> dict[str, Any]:
        row = self._row(tid)
        standings = await self.service.boards.standings(tid, row.done)
        start = _number(request, "start") or 0
        linked = self.service.registry.linked(tid)
        return {
            "row": row, "kind": kind_of(row), "state": self.service.registry.state(tid)[0], "standings": standings,
            "rows": standings.rows[start : start + self.size], "start": start,
            "next_start": start + self.size if len(standings.rows) > start + self.size else None,
            "versions": linked, "live": self.live_games(tid),
        }  # fmt: skip

    async def board(self, request: Request) -> Response:
        tid = request.path_params["tid"]
        context = await self._board(request, tid)
        names = [r.entrant for r in context["rows"]]
        return self.site.render(request, "board.html", plot=plot(self.service.boards.history(tid), names), **context)

    async def board_table(self, request: Request) -> Response:
        """The leaderboard's table alone: what the page's script fetches when the live stream says a game ended."""
        return self.site.render(request, "board_table.html", **await self._board(request, request.path_params["tid"]))

    async def games(self, request: Request) -> Response:
        tid = request.path_params["tid"]
        row = self._row(tid)
        before = _number(request, "before")
        games = await self.service.reader.run(lambda store: store.recent_games(tid, before, self.size + 1))
        return self.site.render(
            request, "games.html", row=row, kind=kind_of(row), games=games[: self.size],
            next_before=games[self.size - 1].slot if len(games) > self.size else None, entrant=None,
        )  # fmt: skip

    async def entrant(self, request: Request) -> Response:
        tid, name = request.path_params["tid"], request.path_params["name"]
        row = self._row(tid)
        standings = await self.service.boards.standings(tid, row.done)
        standing = next((r for r in standings.rows if r.entrant == name), None)
        if standing is None:
            raise HTTPException(404, "no such entrant in this tournament")
        before = _number(request, "before")
        games = await self.service.reader.run(lambda store: store.recent_games(tid, before, self.size + 1, name))
        linked = self.service.registry.linked(tid).get(name)
        return self.site.render(
            request, "entrant.html", row=row, kind=kind_of(row), s=standing, name=name,
            h2h=standings.head_to_head.get(name, {}), diff=standings.score_diff.get(name, {}),
            plot=plot(self.service.boards.history(tid), [name]), games=games[: self.size],
            next_before=games[self.size - 1].slot if len(games) > self.size else None, linked=linked,
        )  # fmt: skip

    async def game(self, request: Request) -> Response:
        return await game_page(self.site, request, request.path_params["game_id"])

    async def bots(self, request: Request) -> Response:
        before = _number(request, "before")
        rows = self.service.registry.bots_page(False, before, self.size + 1)
        return self.site.render(
            request, "bots.html", bots=[b for _, b in rows[: self.size]],
            next_before=rows[self.size - 1][0] if len(rows) > self.size else None,
        )  # fmt: skip

    async def bot(self, request: Request) -> Response:
        name = request.path_params["name"]
        versions = self.service.registry.versions(name)
        if not versions:
            raise HTTPException(404, "no such bot on this server")
        who = self.site.who(request)
        private = private_to(who, versions[0].owner)
        validation = None
        if private and (version := _number(request, "validation")) is not None:
            validation = await self._validation(versions, version)
        return self.site.render(
            request, "bot.html", name=name, versions=versions, private=private,
            entries=self.service.registry.entries(name), validation=validation,
        )  # fmt: skip

    async def _validation(self, versions: list[BotVersion], version: int) -> dict[str, Any] | None:
        """The validation game of one version, for its owner: what its record says of each decision's faults."""
        bot = next((b for b in versions if b.version == version), None)
        if bot is None or not bot.validation_game:
            return None
        path = record_in(self.service.store.data / VALIDATION, bot.validation_game)
        try:
            record = await asyncio.to_thread(read_record, path)
        except Exception:
            return {"game_id": bot.validation_game, "faults": [], "missing": True}
        faults = [
            {"seq": d.seq, "seat": record.header.players[d.seat].name, "detail": d.fault_detail or "(none)"}
            for d in record.decisions if d.fault
        ]  # fmt: skip
        return {"game_id": bot.validation_game, "faults": faults, "missing": False, "version": version}

    async def author(self, request: Request) -> Response:
        name = request.path_params["name"]
        who = self.site.who(request)
        mine = [b for b in self.service.registry.bots() if b.owner == name]
        return self.site.render(request, "author.html", name=name, bots=mine, private=private_to(who, name))

    async def how_to_enter(self, request: Request) -> Response:
        return self.site.render(request, "enter.html", body=how_to_enter())

