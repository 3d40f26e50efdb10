"""The tournament report: one self-contained HTML page, plus viewer pages for its games written beside it.

``report_data`` reads a tournament from the store into plain data (``ReportData``); ``report_html`` draws that
data and nothing else, so the page can be tested from data alone; ``write_report`` does both and writes the
viewer pages the report links to.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

from referee.engine import EndReason
from referee.engine.words import END_WORDS
from referee.errors import NoTournament
from referee.proto.abluxxen.v1 import record_pb2
from referee.rating import MU, SIGMA
from referee.store import SqliteStore
from referee.tournament.history import rating_history
from referee.tournament.standings import Standing, Standings, compute, dup_shown

from .page import asset, json_block, page
from .plot import rating_plot
from .viewer import write_viewer

PAGE_SIZES = (25, 50, 100)  # rows of the games table per page (and "all"); the first is the default


@dataclass
class GameLine:
    slot: int
    game_id: str
    names: list[str]  # by seat
    scores: list[int]
    places: list[int]
    retired: list[int]  # seats
    faults: dict[str, dict[str, int]]  # entrant -> fault kind -> count, only seats that had faults
    end_reason: str
    decisions: int
    biggest_abluxx: int = 0  # most cards in one abluxxed group
    notes: list[str] = field(default_factory=list)  # why it is notable
    record: Path | None = None
    link: str | None = None  # the viewer page, relative to the report

    @property
    def faulted(self) -> bool:
        return bool(self.faults or self.retired)


@dataclass
class ReportData:
    tournament_id: str
    name: str
    games_total: int
    finished: bool
    standings: Standings  # as `abluxx standings` computes them; its rows are in the leaderboard's order
    mean_place: dict[str, float]  # entrant -> its mean place over its games (R15)
    history: dict[str, list[tuple[int, float]]]  # entrant -> (games played, conservative rating after it)
    games: list[GameLine]
    all_linked: bool = True  # False when viewer pages were written only for the notable games

    @property
    def entrants(self) -> list[Standing]:
        """Best conservative rating first."""
        return self.standings.rows

    @property
    def games_done(self) -> int:
        return len(self.games)


def _biggest_abluxx(record: record_pb2.GameRecord) -> int:
    best = 0
    for d in record.decisions:
        for e in d.events:
            if e.WhichOneof("event") == "abluxxed":
                g = e.abluxxed.group
                best = max(best, g.numbers + g.jokers)
    return best


def report_data(store: SqliteStore, tournament_id: str) -> ReportData:
    """Everything the report shows for one tournament, read from ``store``.

    The standings, head to head and faults are the tournament's own (tournament/standings.py, as `abluxx
    standings` prints them); the rating history replays the stored results in schedule order, the order the
    tournament applies them in, so it ends at the tournament's own ratings.
    """
    t = store.tournament(tournament_id)
    if t is None:
        raise NoTournament(tournament_id, f"in {store.path}", [x.id for x in store.tournaments()])
    rows = store.games(tournament_id)
    names = [e["name"] for e in t.config.get("entrants", [])] or sorted({n for r in rows for n in r.names})
    ratings, history = rating_history(names, rows)
    places: dict[str, list[int]] = {n: [] for n in names}
    games = []
    for row in rows:
        for s in row.seats:
            places[s.entrant].append(s.place)
        path = store.record_file(row.record_path)
        games.append(
            GameLine(
                slot=row.slot,
                game_id=row.game_id,
                names=list(row.names),
                scores=[s.score for s in row.seats],
                places=list(row.places),
                retired=[i for i, s in enumerate(row.seats) if s.retired],
                faults={s.entrant: dict(s.faults) for s in row.seats if s.faults},
                end_reason=row.end_reason,
                decisions=row.decisions,
                record=path if path is not None and path.exists() else None,
            )
        )
    return ReportData(
        tournament_id=t.id,
        name=t.name,
        games_total=t.games,
        finished=t.finished_at is not None,
        standings=compute(t.id, names, rows, t.games, ratings),
        mean_place={n: sum(p) / len(p) if p else 0.0 for n, p in places.items()},
        history=history,
        games=games,
    )


def mark_notable(data: ReportData, read_record) -> dict[str, GameLine]:
    """Find the notable games: the highest score, the biggest abluxx, and every faulted game.

    ``read_record(path)`` reads a record file (for the abluxxes). Returns {"highest score": game, ...}.
    """
    for g in data.games:
        if g.record is not None:
            g.biggest_abluxx = _biggest_abluxx(read_record(g.record))
    notable: dict[str, GameLine] = {}
    if data.games:
        top = max(data.games, key=lambda g: (max(g.scores), -g.slot))
        top.notes.append(f"highest score ({max(top.scores)})")
        notable["highest score"] = top
        big = max(data.games, key=lambda g: (g.biggest_abluxx, -g.slot))
        if big.biggest_abluxx:
            big.notes.append(f"biggest abluxx ({big.biggest_abluxx} cards)")
            notable["biggest abluxx"] = big
    for g in data.games:
        if g.faulted:
            g.notes.append("faults")
    return notable


# -- drawing -------------------------------------------------------------------------------------------------------


def _e(x: object) -> str:
    return html.escape(str(x))


def _standings(data: ReportData) -> str:
    rows = []
    for e in data.entrants:
        rows.append(
            f'<tr data-entrant="{_e(e.entrant)}"><td>{e.rank}</td><td class="name">{_e(e.entrant)}</td>'
            f'{_conservative(e)}<td class="mu">{e.mu:.2f}</td>'
            f'<td class="sigma">&plusmn; {e.sigma:.2f}</td><td class="games">{e.games}</td>'
            f"<td>{e.wins}</td><td>{data.mean_place[e.entrant]:.2f}</td><td>{e.avg_score:+.1f}</td>"
            f'<td class="dup">{dup_shown(e)}</td>{_dup_ci(e)}'
            f'<td class="median-ms">{"&ndash;" if e.median_decision_ms is None else f"{e.median_decision_ms:.2f}"}</td>'
            f'<td class="{"fault" if e.strikes or e.retired else ""}">{e.strikes}</td>'
            f'<td class="{"fault" if e.retired else ""}">{e.retired}</td></tr>'
        )
    return (
        '<section class="panel" id="standings"><h2>Standings</h2>'
        '<p class="muted">Ordered by the conservative rating &mu; &minus; 3&sigma; (TrueSkill; a new entrant starts at '
        f"&mu; = {MU:g}, &sigma; = {SIGMA:.2f}).</p>"
        '<p class="swipe muted small">Swipe the table sideways for all its columns; the name stays in sight.</p>'
        + _scroll(
            "standings",
            '<table><thead><tr><th>#</th><th class="name">entrant</th><th>&mu; &minus; 3&sigma;</th><th>&mu;</th>'
            "<th>&sigma;</th><th>games</th><th>wins</th><th>mean place</th><th>mean score</th>"
            '<th title="score minus the mean score of the same seat over its duplicate set">dup &plusmn;</th>'
            '<th title="half width of the 95% interval of dup">95% CI</th>'
            '<th title="median time per decision, as the referee measured it">median ms</th><th>faults</th>'
            f"<th>retired</th></tr></thead><tbody>{''.join(rows)}</tbody></table>",
        )
        + '<p class="muted small">dup &plusmn;: the mean score minus the mean score of the same seat of the same deal '
        "(its duplicate set), so the luck of the cards cancels; 95% CI: its interval's half width (analytic, over "
        "duplicate sets); ~ after &mu; &minus; 3&sigma;: the row is not separated at 95% from the next one (its "
        "rating is not above the next one's by 1.96 standard deviations of their difference); median ms: the "
        "bot's median time per decision. All as <code>abluxx standings</code> shows them.</p></section>"
    )


def _scroll(what: str, table: str) -> str:
    """``table`` in a box of its own that scrolls sideways when it is wider than the screen (report.css keeps the
    entrant's name in sight), so the panel's heading and notes stay put."""
    return f'<div class="scroll" role="region" tabindex="0" aria-label="{what}, scrolls sideways">{table}</div>'


def _dup_ci(e: Standing) -> str:
    if e.dup_ci95 is None:
        return '<td class="dup-ci">&ndash;</td>'
    return f'<td class="dup-ci">&plusmn;{(e.dup_ci95[1] - e.dup_ci95[0]) / 2:.2f}</td>'


def _conservative(e: Standing) -> str:
    """The order's value, with ~ when the row is not separated from the next (standings.separated)."""
    if e.separated_from_next is False:
        return f'<td class="conservative" title="not separated at 95% from the next row">{e.conservative:.2f} ~</td>'
    return f'<td class="conservative">{e.conservative:.2f}</td>'


def _score_diff_words(d: dict | None) -> str:
    if not d or not d["games"]:
        return ""
    ci = d["ci95"]
    spread = "" if ci is None else f" &plusmn; {(ci[1] - ci[0]) / 2:.1f} (95%)"
    return f"; score difference {d['mean_diff']:+.1f}{spread} a game"


def _diff_shown(d: dict | None) -> str:
    """The cell's mean score difference and its 95% interval's half width, in the cell (a phone cannot hover)."""
    if not d or not d["games"]:
        return ""
    ci = d["ci95"]
    spread = "" if ci is None else f'<span class="ci">&plusmn;{(ci[1] - ci[0]) / 2:.1f}</span>'
    return f'<span class="diff">{d["mean_diff"]:+.1f}</span>{spread}'


def _head_to_head(data: ReportData) -> str:
    names = [e.entrant for e in data.entrants]
    head = "".join(f'<th title="{_e(n)}">{_e(n)}</th>' for n in names)
    rows = []
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append('<td class="muted">&mdash;</td>')
                continue
            h = data.standings.head_to_head[a][b]
            w, lost, tied = h["wins"], h["losses"], h["ties"]
            met = w + lost + tied
            if not met:
                cells.append('<td class="muted">&middot;</td>')
                continue
            share = (w + tied / 2) / met
            colour = f"hsl({round(share * 120)}, 55%, 88%)"
            diff = data.standings.score_diff.get(a, {}).get(b)
            shown = _diff_shown(diff)
            cells.append(
                f'<td style="background:{colour}" title="{_e(a)} above {_e(b)} {w}, below {lost}, level {tied}'
                f'{_score_diff_words(diff)}">'
                f"{w}&ndash;{lost}{f'&ndash;{tied}' if tied else ''}{shown}</td>"
            )
        rows.append(f'<tr><th class="name">{_e(a)}</th>{"".join(cells)}</tr>')
    return (
        '<section class="panel" id="head-to-head"><h2>Head to head</h2>'
        '<p class="muted">Each cell: how often the row placed above&ndash;below(&ndash;level with) the column in the '
        "games they played at one table; under it the row's mean score difference a game, and the half width of its "
        "95% interval.</p>"
        + _scroll(
            "head to head",
            f'<table><thead><tr><th class="name"></th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>',
        )
        + "</section>"
    )


def _faults(data: ReportData) -> str:
    kinds = sorted({k for e in data.entrants for k in e.faults})
    if not kinds:
        return '<section class="panel" id="faults"><h2>Faults</h2><p>No bot faulted in this tournament.</p></section>'
    head = "".join(f"<th>{_e(k)}</th>" for k in kinds)
    rows = []
    for e in data.entrants:
        d = e.faults
        cells = "".join(f'<td class="{"fault" if d.get(k) else "muted"}">{d.get(k, 0)}</td>' for k in kinds)
        rows.append(f'<tr data-entrant="{_e(e.entrant)}"><td class="name">{_e(e.entrant)}</td>{cells}'
                    f"<td>{e.retired}</td></tr>")  # fmt: skip
    return (
        '<section class="panel" id="faults"><h2>Faults per bot</h2>'
        + _scroll(
            "faults",
            f'<table><thead><tr><th class="name">entrant</th>{head}<th>games retired</th></tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table>",
        )
        + "</section>"
    )


def _games(data: ReportData, notable: dict[str, GameLine]) -> str:
    def link(g: GameLine, text: str) -> str:
        return f'<a href="{_e(g.link)}">{_e(text)}</a>' if g.link else _e(text)

    items = "".join(
        f'<li class="notable" data-why="{_e(why)}">{_e(why)}: {link(g, g.game_id)} &mdash; '
        + ", ".join(f"{_e(n)} {s:+d}" for n, s in zip(g.names, g.scores, strict=True))
        + "</li>"
        for why, g in notable.items()
    )
    faulted = [g for g in data.games if g.faulted]
    items += "".join(
        f'<li class="notable fault" data-why="faults">faults: {link(g, g.game_id)} &mdash; '
        + "; ".join(f"{_e(n)}: " + ", ".join(f"{_e(k)} &times;{c}" for k, c in d.items()) for n, d in g.faults.items())
        + (" (retired: " + ", ".join(_e(g.names[s]) for s in g.retired) + ")" if g.retired else "")
        + "</li>"
        for g in faulted
    )
    rows = []
    for g in data.games:
        players = " ".join(
            f'<span class="player{" fault" if s in g.retired else ""}" data-entrant="{_e(n)}" data-score="{sc}">'
            f"{_e(n)}&nbsp;{sc:+d}&nbsp;({p})</span>"
            for s, (n, sc, p) in enumerate(zip(g.names, g.scores, g.places, strict=True))
        )
        ended = _end_words(g.end_reason)
        rows.append(
            f'<tr data-game="{_e(g.game_id)}" data-slot="{g.slot}" data-decisions="{g.decisions}" '
            f'data-top="{max(g.scores)}" data-ended="{_e(ended)}" data-notes="{_e(", ".join(g.notes))}" '
            f'class="{"fault" if g.faulted else ""}"><td>{g.slot}</td>'
            f'<td class="name" title="{_e(g.game_id)}">{link(g, g.game_id.removeprefix(data.tournament_id + "-"))}'
            f'</td><td class="name players">{players}</td><td>{g.decisions}</td>'
            f'<td class="name">{_e(ended)}</td><td class="name">{_e(", ".join(g.notes))}</td></tr>'
        )
    linked = sum(g.link is not None for g in data.games)
    said = ("Every game links to its viewer page." if data.all_linked else
            f"Viewer pages were written for the {linked} notable games only (<code>--notable-only</code>); "
            "the other games are listed without a link.")  # fmt: skip
    names = sorted({n for g in data.games for n in g.names})
    options = "".join(f'<option value="{_e(n)}">{_e(n)}</option>' for n in names)
    sizes = "".join(f'<option value="{k}">{k}</option>' for k in PAGE_SIZES) + '<option value="0">all</option>'

    def th(key: str, text: str, cls: str = "") -> str:
        return f'<th class="{cls}" data-sort="{key}" aria-sort="none"><button type="button">{text}</button></th>'

    return (
        '<section class="panel" id="notable"><h2>Notable games</h2>'
        f"<ul>{items or '<li>No games yet.</li>'}</ul></section>"
        f'<section class="panel" id="games"><h2>All games <span class="muted">&middot; {len(data.games)}</span></h2>'
        f'<p class="muted small">{said} Click a heading to sort; choose an entrant to see only its games.</p>'
        '<div class="table-tools"><label>entrant <select id="games-entrant"><option value="">everyone</option>'
        f'{options}</select></label><label>per page <select id="games-size">{sizes}</select></label>'
        '<span id="games-count" class="muted" aria-live="polite"></span>'
        '<span class="pager"><button type="button" id="games-prev">&#x25C0; previous</button>'
        '<span id="games-page"></span><button type="button" id="games-next">next &#x25B6;</button></span></div>'
        '<table id="games-table"><thead><tr>'
        + th("slot", "#")
        + th("game", "game", "name")
        + th("score", "players: score (place)", "name")
        + th("decisions", "decisions")
        + th("ended", "ended by", "name")
        + th("notes", "notes", "name")
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def _end_words(reason: str) -> str:
    try:
        return END_WORDS[EndReason(reason)]
    except ValueError:
        return reason.replace("_", " ")


def report_html(data: ReportData, notable: dict[str, GameLine] | None = None) -> str:
    """The report page for ``data``. Games with a ``link`` are linked to their viewer pages."""
    notable = notable or {}
    status = "finished" if data.finished else "in progress"
    title = f"Abluxxen tournament {data.name}"
    body = (
        f'<header class="page"><h1>{_e(title)}</h1><div class="sub">{_e(data.tournament_id)} &middot; {status} '
        f"&middot; {data.games_done} of {data.games_total} games played</div></header><main>"
        + _standings(data)
        + '<section class="panel" id="ratings"><h2>Conservative rating over games played</h2>'
        + rating_plot(data.history, [e.entrant for e in data.entrants])
        + "</section>"
        + _head_to_head(data)
        + _faults(data)
        + _games(data, notable)
        + "</main>"
    )
    standings = [{"name": e.entrant, "mu": e.mu, "sigma": e.sigma, "games": e.games} for e in data.entrants]
    script = json_block("standings-data", standings) + f"\n<script>\n{asset('report.js')}\n</script>"
    return page(title, body, styles=("base.css", "report.css"), script=script)


@dataclass
class ReportFiles:
    report: Path
    games: dict[str, Path]  # game id -> viewer page
    best_game: Path | None  # the viewer page of the highest-scoring game


def write_report(store: SqliteStore, tournament_id: str, out: Path, all_games: bool = True) -> ReportFiles:
    """Write the report to ``out`` and viewer pages to ``<out stem>-games/`` beside it: one for every game, or for
    the notable ones only (``all_games=False``; the report then says so)."""
    from referee.records.recordfile import read_record

    out = Path(out)
    data = report_data(store, tournament_id)
    notable = mark_notable(data, read_record)
    data.all_linked = all_games
    folder = out.parent / f"{out.stem}-games"
    pages: dict[str, Path] = {}
    for g in data.games:
        if g.record is None or not (all_games or g.notes):
            continue
        path = write_viewer(read_record(g.record), folder / f"{_safe(g.game_id)}.html")
        pages[g.game_id] = path
        g.link = f"{folder.name}/{path.name}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report_html(data, notable), encoding="utf-8")
    best = notable.get("highest score")
    return ReportFiles(out, pages, pages.get(best.game_id) if best else None)


def _safe(game_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in game_id)


def write_demo_pages(
    store: SqliteStore, tournament_id: str, data: Path, best_record: Path | None
) -> tuple[Path, Path | None]:
    """The demo's pages: ``<data>/report.html`` (notable games linked) and the viewer page of ``best_record``."""
    from referee.records import read_record

    files = write_report(store, tournament_id, Path(data) / "report.html")
    if best_record is None:
        return files.report, files.best_game
    record = read_record(best_record)
    page_path = files.games.get(record.header.game_id)
    if page_path is None:
        page_path = write_viewer(record, files.report.parent / "report-games" / f"{_safe(record.header.game_id)}.html")
    return files.report, page_path
