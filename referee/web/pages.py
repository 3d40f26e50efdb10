"""The site's pages (docs/web.md). Each reads what it shows through the service (its store, the reader thread for
anything that grows with the store, the standings boards) and decides what a reader may see with
``referee.service.visibility``, the API's own rules."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from referee.event_loop import wait_for
from referee.records import FAULT_PB, RecordError, read_record
from referee.records.paths import VALIDATION, record_in
from referee.service import ladders
from referee.service.submit import refusals_of
from referee.service.visibility import private_to, version_private
from referee.store import TournamentRow
from referee.store import health as health_store
from referee.store import ladder as ladder_store
from referee.tournament.standings import Standings

from .app import Site
from .games import REPLAYS, Replays, game_page, replay_page
from .plot import plot
from .query import board_rows, digits, filter_query, game_filter, kept, number, paged, text

BUILD_WAIT_S = 3.0  # how long a page waits for standings being built before it says so


@dataclass(frozen=True)
class Played:
    """A leaderboard's games played and scheduled: all it shows of its standings, whose head to head (a lazy
    mapping of every pair) stays on the service's loop rather than going to a render process (render.py)."""

    games: int
    scheduled: int


def kind_of(row: TournamentRow) -> str:
    """What the site calls a stored tournament: a ladder (its config has a [ladder] table) or a tournament."""
    return "ladder" if row.config.get("ladder") else "tournament"


class Pages:
    def __init__(self, site: Site) -> None:
        self.site = site
        self.service = site.service
        self.size = site.http.page_size
        self.replays = Replays(REPLAYS)
        self.heads: dict[str, TournamentRow] = {}

    def row_of(self, tid: str) -> TournamentRow:
        """The tournament with its progress counted now (a count of its schedule: on a page that shows it)."""
        row = self.service.store.tournament(tid)
        if row is None:
            raise HTTPException(404, "no such tournament or ladder on this server")
        self.heads[tid] = row
        return row

    def head_of(self, tid: str) -> TournamentRow:
        """The tournament's name and config, which never change: read once (its counts may be old)."""
        return self.heads.get(tid) or self.row_of(tid)

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
        start = number(request, "start") or 0
        ids = self.service.registry.tournament_ids(start, self.size + 1)
        rows = [r for r in (self.service.store.tournament(t) for t in ids[: self.size]) if r is not None]
        states = {r.id: self.service.registry.state(r.id, r)[0] for r in rows}
        return self.site.render(
            request, "home.html", rows=rows, kinds={r.id: kind_of(r) for r in rows}, states=states,
            live=self.live_games()[: self.size], start=start,
            next_start=start + self.size if len(ids) > self.size else None,
        )  # fmt: skip

    async def live(self, request: Request) -> Response:
        live, start, next_start = paged(request, self.live_games(), self.size)
        return self.site.render(request, "live.html", live=live, start=start, next_start=next_start)

    async def standings_of(self, request: Request, row: TournamentRow) -> Standings:
        """The standings a leaderboard shows: a ladder's each bot's latest version, or with ``all=1`` every one."""
        every = request.query_params.get("all") == "1"  # a ladder's every version, not only each bot's latest
        shown = ladders.shown(self.service.store, row.id, every) if "ladder" in row.config else None
        return await self._standings(row, shown)

    async def _board(self, request: Request, tid: str) -> dict[str, Any]:
        row = self.row_of(tid)
        ladder = "ladder" in row.config
        every = request.query_params.get("all") == "1"
        standings = await self.standings_of(request, row)
        ordered = board_rows(request, standings.rows)
        rows, start, next_start = paged(request, ordered, self.size)
        return {
            "row": row, "kind": kind_of(row), "state": self.service.registry.state(tid, row)[0], "standings": standings,
            "rows": rows, "start": start, "every": every, "ladder": ladder, "next_start": next_start,
            "keep": kept(request, "all", "sort", "desc", "q"), "sort": request.query_params.get("sort", "rank"),
            "q": request.query_params.get("q", ""), "shown": len(ordered),
            "request_desc": request.query_params.get("desc") == "1",
            "versions": self._versions(tid, ladder), "live": self.live_games(tid), "hello": self._hello(tid, ladder),
            "waiting": self.service.waiting(tid),
            "health": health_store.get(self.service.store, [r.entrant for r in rows]),
        }  # fmt: skip

    async def _standings(self, row: TournamentRow, shown: Collection[str] | None = None) -> Standings:
        """The standings, or 503 (the page reloads itself) while they are first built from a big store: the build
        goes on, off the event loop, for the next reader."""
        try:
            return await wait_for(self.service.boards.standings(row.id, row.done, shown), BUILD_WAIT_S)
        except TimeoutError:
            raise HTTPException(503, f"The standings of these {row.done} games are being computed; this page "
                                     "reloads itself.") from None  # fmt: skip

    def _versions(self, tid: str, ladder: bool) -> dict[str, tuple[str, int]]:
        """Entrant name -> (submitted bot, version) of the entrants that are submitted bots."""
        if ladder:
            return {e.name: (e.bot, e.version) for e in ladder_store.entrants(self.service.store, tid)}
        return self.service.registry.linked(tid)

    def _hello(self, tid: str, ladder: bool) -> dict[str, str]:
        """Entrant name -> the version its bot's Hello gave at submission, beside the referee's ``vN``."""
        out = {}
        for name, (bot, version) in self._versions(tid, ladder).items():
            found = self.service.registry.bot(bot, version)
            if found is not None and found.bot_version and found.name == bot:
                out[name] = found.bot_version
        return out

    async def _board_plotted(self, request: Request) -> dict[str, Any]:
        """The leaderboard's context with its rating plot (of the entrants on its page)."""
        tid = request.path_params["tid"]
        context = await self._board(request, tid)
        names = [r.entrant for r in context["rows"]]
        marks = {r.entrant: r.state for r in context["rows"]}
        played = Played(context["standings"].games, context["standings"].scheduled)  # what the page shows of them
        return {**context, "standings": played, "plot": plot(self.service.boards.history(tid), names, marks)}

    async def board(self, request: Request) -> Response:
        return self.site.render(request, "board.html", **await self._board_plotted(request))

    async def board_table(self, request: Request) -> Response:
        """The leaderboard's live parts, its table, rating plot and games being played now: what the page's script
        fetches when the live stream says a game started or ended, and swaps in by their ids."""
        return self.site.render(request, "board_live.html", **await self._board_plotted(request))

    async def games(self, request: Request) -> Response:
        tid = request.path_params["tid"]
        row = self.head_of(tid)
        before = number(request, "before")
        entrant = text(request, "entrant")
        only = game_filter(request, entrant)
        games = await self.service.reader.run(lambda s: s.recent_games(tid, before, self.size + 1, entrant, only))
        return self.site.render(
            request, "games.html", row=row, kind=kind_of(row), games=games[: self.size],
            next_before=games[self.size - 1].slot if len(games) > self.size else None, entrant=entrant,
            only=only, keep=kept(request, "entrant") + filter_query(only), fault_kinds=sorted(FAULT_PB),
        )  # fmt: skip

    async def entrant(self, request: Request) -> Response:
        tid, name = request.path_params["tid"], request.path_params["name"]
        row = self.row_of(tid)
        standings = await self._standings(row)
        standing = next((r for r in standings.rows if r.entrant == name), None)
        if standing is None:
            raise HTTPException(404, "no such entrant in this tournament")
        before = number(request, "before")
        only = game_filter(request, name)
        games = await self.service.reader.run(lambda s: s.recent_games(tid, before, self.size + 1, name, only))
        linked = self._versions(tid, "ladder" in row.config).get(name)
        hello = self._hello(tid, "ladder" in row.config).get(name, "")
        health = health_store.get(self.service.store, [name]).get(name, health_store.HealthRow(name))
        h2h, h2h_start, h2h_next = paged(request, sorted(standings.head_to_head.get(name, {}).items()), self.size)
        return self.site.render(
            request, "entrant.html", row=row, kind=kind_of(row), s=standing, name=name,
            h2h=h2h, h2h_start=h2h_start, h2h_next=h2h_next, diff=standings.score_diff.get(name, {}),
            plot=plot(self.service.boards.history(tid), [name]), games=games[: self.size],
            next_before=games[self.size - 1].slot if len(games) > self.size else None, linked=linked,
            hello=hello, health=health, only=only, keep=filter_query(only), fault_kinds=sorted(FAULT_PB),
        )  # fmt: skip

    async def game(self, request: Request) -> Response:
        return await game_page(self.site, request, request.path_params["game_id"], self.replays)

    async def bots(self, request: Request) -> Response:
        before = number(request, "before")
        every = request.query_params.get("all") == "1"  # every version, not only each bot's latest
        rows = self.service.registry.bots_page(False, before, self.size + 1, every)
        return self.site.render(
            request, "bots.html", bots=[b for _, b in rows[: self.size]], every=every,
            next_before=rows[self.size - 1][0] if len(rows) > self.size else None,
        )  # fmt: skip

    async def bot(self, request: Request) -> Response:
        name = request.path_params["name"]
        versions = self.service.registry.versions(name)
        if not versions:
            raise HTTPException(404, "no such bot on this server")
        shown, start, next_start = paged(request, versions, self.size)
        who = self.site.who(request)
        return self.site.render(
            request, "bot.html", name=name, owner=versions[0].owner, versions=shown, start=start,
            next_start=next_start, private={b.version: version_private(who, b) for b in shown},
            entries=self.service.registry.entries(name),
            health=health_store.get(self.service.store, [b.entrant_id for b in shown]),
        )  # fmt: skip

    async def validation(self, request: Request) -> Response:
        """A version's validation game in the replay viewer, for its owner and organisers only (its record shows
        the bot's faults and their details, the bot's own error texts)."""
        name, version = request.path_params["name"], request.path_params["version"]
        bot = self.service.registry.bot(name, int(version)) if digits(version) and len(version) < 10 else None
        if bot is None or not bot.validation_game or not version_private(self.site.who(request), bot):
            raise HTTPException(404, "no such validation game, or it is not yours to see")
        path = record_in(self.service.store.data / VALIDATION, bot.validation_game)
        try:
            record = await asyncio.to_thread(read_record, path)
        except (OSError, RecordError):
            raise HTTPException(404, "this validation game's record is not on the server any more") from None
        return await replay_page(self.site, request, record, "")

    async def author(self, request: Request) -> Response:
        name = request.path_params["name"]
        who = self.site.who(request)
        mine = [b for b in self.service.registry.bots() if b.owner == name]
        shown, start, next_start = paged(request, mine, self.size)
        folder = self.service.store.data / VALIDATION
        refused = await asyncio.to_thread(refusals_of, folder, name) if private_to(who, name) else []
        return self.site.render(request, "author.html", name=name, bots=shown, start=start, next_start=next_start,
                                private=private_to(who, name), refused=refused[: self.size],
                                health=health_store.get(self.service.store, [b.entrant_id for b in shown]),
                                mine={b.entrant_id: version_private(who, b) for b in shown})  # fmt: skip
