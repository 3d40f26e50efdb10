"""What a page's or the JSON API's address asks for (docs/web.md): paging parameters, the games' filters and the
leaderboard's order and search, each checked here, once, with a 400 that names the parameter."""

from __future__ import annotations

from typing import TypeVar
from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request

from referee.records import FAULT_PB
from referee.store import GameFilter
from referee.tournament.standings import Standing

T = TypeVar("T")
MAX_TEXT = 100  # the longest name or search text a filter takes
RESULTS = ("won", "lost")
# The leaderboard's orders: a column's key, and whether larger comes first. "rank" is the standings' own order.
SORTS = {
    "rank": (lambda r: r.rank, False),
    "rating": (lambda r: r.conservative, True),
    "mu": (lambda r: r.mu, True),
    "score": (lambda r: r.dup_avg_score, True),
    "games": (lambda r: r.games, True),
    "wins": (lambda r: r.wins, True),
    "faults": (lambda r: sum(r.faults.values()), True),
    "name": (lambda r: r.entrant.casefold(), False),
}


def number(request: Request, key: str) -> int | None:
    """A paging parameter: a whole number, or None when absent; 400 otherwise."""
    raw = request.query_params.get(key)
    if raw is None or raw == "":
        return None
    if not digits(raw) or len(raw) > 12:
        raise HTTPException(400, f"{key} must be a whole number")
    return int(raw)


def digits(raw: str) -> bool:
    """Only 0-9: ``str.isdigit`` also takes other scripts' digits and superscripts (``²``), which int() refuses."""
    return raw.isascii() and raw.isdigit()


def paged(request: Request, items: list[T], size: int) -> tuple[list[T], int, int | None]:
    """One page of a list held in memory: (its items, where it starts, where the next starts or None)."""
    start = number(request, "start") or 0
    return items[start : start + size], start, start + size if len(items) > start + size else None


def text(request: Request, key: str) -> str | None:
    """A name or search text: None when absent or empty; 400 when too long."""
    raw = request.query_params.get(key, "")
    if len(raw) > MAX_TEXT:
        raise HTTPException(400, f"{key} must be at most {MAX_TEXT} characters")
    return raw or None


def game_filter(request: Request, entrant: str | None) -> GameFilter | None:
    """The games' filters of the address (``opponent``, ``result``, ``fault``), or None when it has none; 400 for
    a result that is not won or lost, a result without an entrant, or a fault that is not "any" or a fault's name."""
    opponent = text(request, "opponent")
    result = request.query_params.get("result", "")
    fault = request.query_params.get("fault", "")
    if result and result not in RESULTS:
        raise HTTPException(400, "result must be won or lost")
    if result and entrant is None:
        raise HTTPException(400, "result needs an entrant: filter one entrant's games (entrant=NAME)")
    if fault and fault != "any" and fault not in FAULT_PB:
        raise HTTPException(400, f"fault must be any or one of: {', '.join(sorted(FAULT_PB))}")
    if not (opponent or result or fault):
        return None
    return GameFilter(opponent=opponent, result=result, fault=fault)


def filter_query(only: GameFilter | None) -> str:
    """The filter's part of a page's next-page address: ``&opponent=...&result=...&fault=...``."""
    if only is None:
        return ""
    pairs = {"opponent": only.opponent or "", "result": only.result, "fault": only.fault}
    return "&" + urlencode({k: v for k, v in pairs.items() if v})


def board_rows(request: Request, rows: list[Standing]) -> list[Standing]:
    """The leaderboard's rows in the address's order (``sort``, ``desc=1`` turns it round) and only those whose
    entrant's name holds the search text ``q`` (case-insensitive); each keeps its rank."""
    sort = request.query_params.get("sort") or "rank"
    if sort not in SORTS:
        raise HTTPException(400, f"sort must be one of: {', '.join(SORTS)}")
    q = (text(request, "q") or "").casefold()
    key, larger_first = SORTS[sort]
    shown = [r for r in rows if q in r.entrant.casefold()]
    return sorted(shown, key=key, reverse=larger_first != (request.query_params.get("desc") == "1"))


def kept(request: Request, *keys: str) -> str:
    """The address's ``keys`` that are set, as ``&k=v...``: what a next-page link carries over (sort, search)."""
    pairs = {k: request.query_params[k] for k in keys if request.query_params.get(k)}
    return "&" + urlencode(pairs) if pairs else ""
