"""Standings: ratings, raw and duplicate-adjusted scores with their 95% confidence intervals, faults, decision
times and head to head, all derived from the stored games (in schedule order).

The intervals are analytic, not bootstrapped: a mean over duplicate sets (a deal at a table, or a deal's section
of tables), whose games are not independent, with the cluster-robust standard error of a ratio estimate and
Student's t over the sets (``referee.stats.ratio_ci``; docs/duel.md, "Error bars")."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from referee.proto.abluxxen.v1 import record_pb2
from referee.rating import Rating, Ratings, rate
from referee.records import FAULT_NAME
from referee.stats import Interval, ratio_ci
from referee.store import GameRow

from .history import History
from .pairs import DupSet, PairRows

# Fault kinds that cost no strike: the referee's own failures, and the fallback's turns for a retired seat.
NOT_STRIKES = frozenset(FAULT_NAME[k] for k in (record_pb2.FAULT_KIND_REFEREE, record_pb2.FAULT_KIND_RETIRED))


@dataclass
class Standing:
    rank: int
    entrant: str
    mu: float
    sigma: float
    conservative: float  # mu - 3 sigma, the leaderboard's order
    games: int
    wins: int  # games placed first (a shared first place counts)
    avg_score: float
    dup_avg_score: float  # score minus the average of the others who held the same seat's cards of the same deal
    faults: dict[str, int] = field(default_factory=dict)
    retired: int = 0  # games the fallback had to finish for this entrant
    median_decision_ms: float | None = None
    # the 95% interval of dup_avg_score over the duplicate sets (None: fewer than two sets to compare in)
    dup_ci95: tuple[float, float] | None = None
    # games compared with another holder of the same cards; 0: dup_avg_score is no figure (shown as "-")
    dup_games: int = 0
    # whether this entrant's rating is above the next one's at 95% (``separated``: the order's own quantity, from
    # both entrants' ratings); None for the last one
    separated_from_next: bool | None = None
    # this entrant's lead over the next one: {"mean": (games placed ahead - games placed behind) / games shared,
    # "ci95": [low, high] or None (cluster-robust over their shared duplicate sets), "games": games shared}
    lead_over_next: dict[str, Any] | None = None
    state: str = ""  # "superseded" or "retired": a ladder entrant no longer seated (tournament/board.py)
    health: str = "up"  # "down" or "suspended": a ladder does not seat it now (docs/bot-health.md)

    @property
    def strikes(self) -> int:
        """The faults that cost a strike (every kind but those in ``NOT_STRIKES``)."""
        return sum(n for kind, n in self.faults.items() if kind not in NOT_STRIKES)


_H2H = ("wins", "losses", "ties")


@dataclass
class Standings:
    tournament_id: str
    games: int  # finished games counted
    scheduled: int
    rows: list[Standing]
    head_to_head: Mapping[str, dict[str, dict[str, int]]]  # a -> b -> {"wins", "losses", "ties"} for a against b
    # a -> b -> {"mean_diff": a's score minus b's in the games they shared, "ci95": [low, high] or None, "games"}
    score_diff: Mapping[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def played(self) -> str:
        """The games counted, against what they are compared with: "12/40 games", or for a ladder without a
        budget (``scheduled`` 0) "12 games played"."""
        return f"{self.games}/{self.scheduled} games" if self.scheduled else f"{self.games} games played"

    def to_json(self) -> dict:
        return {
            "tournament_id": self.tournament_id,
            "games": self.games,
            "scheduled": self.scheduled,
            "standings": [asdict(r) for r in self.rows],
            "head_to_head": dict(self.head_to_head),
            "score_diff": dict(self.score_diff),
        }

    def kept(self) -> dict[str, Any]:
        """The JSON a store keeps of these standings (store/standings.py): ``to_json`` with the pair figures only
        for pairs that met, and the names their rows are of (``from_kept`` reads it back)."""
        out = self.to_json()
        for part in ("head_to_head", "score_diff"):
            pairs = getattr(self, part)
            out[part] = pairs.sparse() if isinstance(pairs, PairRows) else out[part]
        h2h = self.head_to_head
        out["names"], out["shown"] = (h2h.names, list(h2h)) if isinstance(h2h, PairRows) else (list(h2h), None)
        return out

    @staticmethod
    def from_kept(kept: dict[str, Any]) -> Standings:
        """The standings ``kept`` gave."""
        rows = [Standing(**{**r, "dup_ci95": None if r["dup_ci95"] is None else tuple(r["dup_ci95"])})
                for r in kept["standings"]]  # fmt: skip
        keep = None if kept["shown"] is None else set(kept["shown"]).__contains__
        h2h = PairRows(kept["names"], kept["head_to_head"], _no_games, keep)
        diff = PairRows(kept["names"], kept["score_diff"], _no_diff, keep)
        return Standings(kept["tournament_id"], kept["games"], kept["scheduled"], rows, h2h, diff)

    def to_csv(self) -> str:
        """One row per entrant: the JSON's columns, a ``faults_KIND`` column per fault kind that occurred, and
        ``vs_OTHER_wins``/``_losses``/``_ties`` columns per opponent (head to head, when there is one)."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        kinds = sorted({k for r in self.rows for k in r.faults})
        others = [r.entrant for r in self.rows] if self.head_to_head else []
        faults = [f"faults_{k}" for k in kinds]
        h2h = [f"vs_{b}_{x}" for b in others for x in _H2H]
        w.writerow(["rank", "entrant", "mu", "sigma", "mu_minus_3sigma", "games", "wins", "avg_score",
                    "dup_avg_score", "dup_ci95_low", "dup_ci95_high", "separated_from_next", "lead_over_next",
                    "lead_over_next_low", "lead_over_next_high", "retired",
                    "median_decision_ms", "state", "health", *faults, *h2h])  # fmt: skip
        for r in self.rows:
            vs = self.head_to_head.get(r.entrant, {})
            w.writerow([r.rank, r.entrant, f"{r.mu:.6f}", f"{r.sigma:.6f}", f"{r.conservative:.6f}", r.games, r.wins,
                        f"{r.avg_score:.4f}", f"{r.dup_avg_score:.4f}",
                        *(["", ""] if r.dup_ci95 is None else [f"{x:.4f}" for x in r.dup_ci95]),
                        "" if r.separated_from_next is None else str(r.separated_from_next).lower(),
                        *_lead_cells(r.lead_over_next), r.retired,
                        "" if r.median_decision_ms is None else f"{r.median_decision_ms:.3f}", r.state, r.health,
                        *[r.faults.get(k, 0) for k in kinds],
                        *[vs[b][x] if b in vs else "" for b in others for x in _H2H]])  # fmt: skip
        return out.getvalue()

    def table(self) -> str:
        """The terminal table, then head to head."""
        head = (
            f"{'#':>2}  {'entrant':<16} {'mu-3sd':>7} {'mu':>6} {'sigma':>5} {'games':>5} {'wins':>5} "
            f"{'avg':>6} {'dup+-':>6} {'95% CI':>6}   {'med ms':>7}  faults"
        )
        lines = [f"tournament {self.tournament_id}: {self.played()}", head, "-" * len(head)]
        for r in self.rows:
            faults = ", ".join(f"{k} {v}" for k, v in sorted(r.faults.items())) or "-"
            if r.retired:
                faults += f" (retired in {r.retired})"
            faults += "".join(f"  [{m}]" for m in (r.state, "" if r.health == "up" else r.health) if m)
            med = "-" if r.median_decision_ms is None else f"{r.median_decision_ms:.2f}"
            ci = "-" if r.dup_ci95 is None else f"±{(r.dup_ci95[1] - r.dup_ci95[0]) / 2:.2f}"
            mark = "~" if r.separated_from_next is False else " "
            lines.append(
                f"{r.rank:>2}  {r.entrant[:16]:<16} {r.conservative:>7.2f}{mark}{r.mu:>6.2f} {r.sigma:>5.2f} "
                f"{r.games:>5} {r.wins:>5} {r.avg_score:>+6.2f} {dup_shown(r):>6} {ci:>6}   {med:>7}  "
                f"{faults}"
            )
        if any(r.separated_from_next is False for r in self.rows):
            lines.append("~ not separated from the next row at 95%: its rating is not above the next one's by 1.96 "
                         "standard deviations of their difference (docs/tournaments.md)")  # fmt: skip
        names = [r.entrant for r in self.rows]
        if len(names) > 1 and self.head_to_head:  # the service's standings carry none (yet)
            lines += ["", "head to head (row vs column: wins-losses, ties in brackets when any; · for a pair that "
                      "never meets: one owner's)"]  # fmt: skip
            cell = {
                (a, b): f"{h['wins']}-{h['losses']}" + (f"({h['ties']})" if h["ties"] else "")
                for a in names
                for b, h in self.head_to_head[a].items()
            }
            width = 2 + max(9, *(len(c) for c in cell.values()), *(min(len(n), 12) for n in names))
            lines.append(" " * 17 + "".join(f"{n[:12]:>{width}}" for n in names))
            for a in names:
                cells = [f"{cell.get((a, b), '·'):>{width}}" for b in names]  # ·: itself, or a pair that never meets
                lines.append(f"{a[:16]:<17}" + "".join(cells))
        if len(names) > 1 and self.score_diff:
            lines += ["", "score difference (row minus column, points a game in the games they shared, ± 95% CI)"]
            diff = {(a, b): _diff_cell(d) for a in names for b, d in self.score_diff.get(a, {}).items()}
            width = 2 + max(9, *(len(c) for c in diff.values()), *(min(len(n), 12) for n in names))
            lines.append(" " * 17 + "".join(f"{n[:12]:>{width}}" for n in names))
            for a in names:
                cells = [f"{'·' if a == b else diff.get((a, b), '-'):>{width}}" for b in names]
                lines.append(f"{a[:16]:<17}" + "".join(cells))
        return "\n".join(lines)


def _lead_cells(lead: dict[str, Any] | None) -> list[str]:
    if not lead or not lead["games"]:
        return ["", "", ""]
    return [f"{lead['mean']:.4f}", *(["", ""] if lead["ci95"] is None else [f"{x:.4f}" for x in lead["ci95"]])]


def _diff_cell(d: dict[str, Any]) -> str:
    if not d["games"]:
        return "-"
    ci = d["ci95"]
    return f"{d['mean_diff']:+.1f}" + ("" if ci is None else f"±{(ci[1] - ci[0]) / 2:.1f}")


class Tally:
    """Standings kept up to date one finished game at a time, in any order: ``standings()`` after adding a set of
    games is what ``compute`` gives for them (the ratings converged, docs/ratings.md; with ``converge`` False, as
    a service keeps them, each game is folded in by a local update and the service refits off its event loop).

    Adding a game costs that game and its duplicate set, not the games before it, so a service that publishes the
    standings after every game of a 1,000-game tournament does not redo 1,000 games each time. ``ratings``: the
    ratings to keep up to date (default: fresh ones that refit on a read now and then; a service passes ones
    that never do, and refits off its event loop)."""

    def __init__(
        self,
        tournament_id: str,
        names: list[str],
        scheduled: int,
        ratings: Ratings | None = None,
        *,
        converge: bool = True,
    ) -> None:
        self.tournament_id = tournament_id
        self.converge = converge  # standings() converges the ratings first (False: a service refits elsewhere)
        self.names = names
        self.scheduled = scheduled
        self.games: dict[int, GameRow] = {}  # slot -> game
        self.rated = Ratings(names) if ratings is None else ratings  # over every finished game
        self.history = History(self.rated, names)  # the ratings after each game, thinned
        self._played: dict[str, int] = defaultdict(int)
        self._wins: dict[str, int] = defaultdict(int)
        self._score_sum: dict[str, int] = defaultdict(int)
        self._retired: dict[str, int] = defaultdict(int)
        self._faults: dict[str, dict[str, int]] = {n: {} for n in names}
        self._times: dict[str, list[int]] = {n: [] for n in names}
        self._unsorted: set[str] = set()  # entrants whose times gained values since they were last sorted
        # only for pairs that met (pairs.py): a -> b -> {"wins", "losses", "ties"}; a -> b -> set -> (a's score minus
        # b's, summed over the set's games they shared; those games); and a's places ahead of b minus behind
        self._h2h: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
        self._diff: dict[str, dict[str, dict[tuple[int, int], tuple[float, int]]]] = defaultdict(dict)
        self._ahead: dict[str, dict[str, dict[tuple[int, int], tuple[float, int]]]] = defaultdict(dict)
        self._sets: dict[tuple[int, int], DupSet] = defaultdict(DupSet)  # (table, deal) -> its running sums
        # entrant -> set -> (the sum of its duplicate-adjusted scores there, the games they come from)
        self._dup: dict[str, dict[tuple[int, int], tuple[float, int]]] = {n: {} for n in names}
        # what the last standings published, each row replaced (never changed) when a game touches it
        self._shown_h2h: dict[str, dict[str, dict[str, int]]] = {}
        self._shown_diff: dict[str, dict[str, dict[str, Any]]] = {}
        self._shown_dup: dict[str, tuple[float, tuple[float, float] | None, int]] = {}
        self._touched: set[tuple[str, str]] = set()  # pairs that met in a game since the last standings
        self._leads: dict[tuple[str, str], dict[str, Any]] = {}  # each neighbouring pair's lead, as last shown
        self._touched_sets: set[tuple[int, int]] = set()
        self._standings: Standings | None = None

    def add(self, g: GameRow) -> None:
        """One finished game (a game already added is ignored)."""
        if g.slot in self.games:
            return
        self.count(g)
        self.rated.add(g.names, g.places)
        self.history.add(g.names, self.rated)

    def load(self, ratings: Ratings) -> None:
        """Ratings that already hold the counted games (a stored or a full fit); the rating plot starts at them."""
        self.rated, self._standings = ratings, None
        self.history = History(ratings, self.names, played=self._played)

    def rerate(self, ratings: Ratings) -> None:
        """New ratings of the same games (a full fit made elsewhere); the rating plot goes on from them."""
        self.rated, self._standings = ratings, None

    def count(self, g: GameRow) -> None:
        """Every figure of the standings but the ratings: wins, scores, faults, head to head, duplicate sets."""
        self.games[g.slot] = g
        self._standings = None
        for s in g.seats:
            n = s.entrant
            self._played[n] += 1
            self._wins[n] += s.place == 1
            self._score_sum[n] += s.score
            self._retired[n] += s.retired
            for kind, count in s.faults.items():
                self._faults[n][kind] = self._faults[n].get(kind, 0) + count
            if s.decision_us:
                self._times[n].extend(s.decision_us)
                self._unsorted.add(n)
        key = (g.table, g.deal)
        for i, a in enumerate(g.seats):
            for b in g.seats[i + 1 :]:
                for x, y in ((a, b), (b, a)):
                    self._touched.add((x.entrant, y.entrant))
                    sets = self._diff[x.entrant].setdefault(y.entrant, {})
                    total, count = sets.get(key, (0.0, 0))
                    sets[key] = (total + x.score - y.score, count + 1)
                    sets = self._ahead[x.entrant].setdefault(y.entrant, {})
                    total, count = sets.get(key, (0.0, 0))
                    sets[key] = (total + (x.place < y.place) - (x.place > y.place), count + 1)
                    h = self._h2h[x.entrant].setdefault(y.entrant, {"wins": 0, "losses": 0, "ties": 0})
                    h["wins" if x.place < y.place else "losses" if x.place > y.place else "ties"] += 1
        self._sets[key].add([(s.entrant, s.score) for s in g.seats])
        self._touched_sets.add(key)

    def _publish(self) -> None:
        """The pair and duplicate figures of what games touched since the last standings, computed again (each
        touched row replaced, so standings handed out before keep theirs)."""
        rows: dict[str, list[str]] = defaultdict(list)
        for a, b in self._touched:
            rows[a].append(b)
            self._leads.pop((a, b), None)
        for a, bs in rows.items():
            self._shown_h2h[a] = {b: dict(h) for b, h in self._h2h[a].items()}
            diff = self._shown_diff[a] = dict(self._shown_diff.get(a, {}))
            for b in bs:
                diff[b] = _score_diff(self._diff[a][b])
        self._touched.clear()
        entrants: set[str] = set()
        for key in self._touched_sets:
            for n, sums in self._sets[key].sums().items():
                self._dup[n][key] = sums
                entrants.add(n)
        self._touched_sets.clear()
        for n in entrants:
            sets = list(self._dup[n].values())
            ci = ratio_ci(sets)  # its mean is the duplicate-adjusted average (0 without a set)
            self._shown_dup[n] = (ci.mean, _bounded(ci), sum(g for _, g in sets))

    def _lead(self, a: str, b: str) -> dict[str, Any]:
        """``a``'s lead over ``b`` (``_lead``), computed again only after a game of both."""
        if (lead := self._leads.get((a, b))) is None:
            lead = self._leads[(a, b)] = _lead(self._ahead.get(a, {}).get(b, {}))
        return lead

    def ratings(self) -> Ratings:
        """The ratings over every added game."""
        return self.rated

    def standings(self, ratings: Ratings | None = None, shown: Collection[str] | None = None) -> Standings:
        """``ratings``, when given, must be the ratings of these games already computed (the runner's live ratings
        after the whole schedule); otherwise they are the tally's own. ``shown``: only these entrants' rows, ranked
        among themselves (a ladder's latest versions), by the same rules."""
        if self._standings is not None and ratings is None and shown is None:
            return self._standings
        if ratings is None or ratings.games != len(self.games):
            ratings = self.ratings()
        if self.converge and not ratings.converged:
            ratings.fit()
        for n in self._unsorted:
            self._times[n].sort()
        self._unsorted.clear()
        self._publish()
        rows = []
        board = [(n, r) for n, r in ratings.leaderboard() if shown is None or n in shown]
        for rank, (n, r) in enumerate(board, start=1):
            k = self._played[n]
            dup_avg, dup_ci, dup_games = self._shown_dup.get(n, (0.0, None, 0))
            rows.append(
                Standing(
                    rank=rank,
                    entrant=n,
                    mu=r.mu,
                    sigma=r.sigma,
                    conservative=r.conservative,
                    games=k,
                    wins=self._wins[n],
                    avg_score=self._score_sum[n] / k if k else 0.0,
                    dup_avg_score=dup_avg,
                    dup_ci95=dup_ci,
                    dup_games=dup_games,
                    faults=dict(sorted(self._faults[n].items())),
                    retired=self._retired[n],
                    median_decision_ms=_median(self._times[n]) / 1000 if self._times[n] else None,
                )
            )
        for upper, lower in itertools.pairwise(rows):
            upper.lead_over_next = self._lead(upper.entrant, lower.entrant)
            upper.separated_from_next = separated(ratings.get(upper.entrant), ratings.get(lower.entrant),
                                                  ratings.difference_sd(upper.entrant, lower.entrant))  # fmt: skip
        keep = None if shown is None else (lambda n: n in shown)
        h2h = PairRows(self.names, dict(self._shown_h2h), _no_games, keep)
        diff = PairRows(self.names, dict(self._shown_diff), _no_diff, keep)
        standings = Standings(self.tournament_id, len(self.games), self.scheduled, rows, h2h, diff)
        if shown is None:
            self._standings = standings
        return standings


def dup_shown(r: Standing) -> str:
    """The duplicate-adjusted score as the table and the report show it: "-" when no game of the entrant had
    another holder of its cards (3 entrants at tables of 2 share no deal), rather than a "+0.00" that was never
    measured."""
    return f"{r.dup_avg_score:+.2f}" if r.dup_games else "-"


def _bounded(ci: Interval) -> tuple[float, float] | None:
    return (ci.low, ci.high) if math.isfinite(ci.low) else None


# how many standard deviations of the difference of two ratings' mu make neighbours "separated": two-sided 95%,
# since the order has already put the higher one first (docs/notes/2026-12-06-separated-mark.md)
SEPARATED_Z = 1.96


def separated(upper: Rating, lower: Rating, sd: float | None = None) -> bool:
    """The leaderboard's "separated from the next" (docs/standings.md): whether the upper entrant's rating is above
    the lower one's at 95%, mu_upper - mu_lower > SEPARATED_Z * sd, ``sd`` the standard deviation of their
    difference (``Ratings.difference_sd``: from the fit's covariance), or without one sqrt(sigma_upper² +
    sigma_lower²). The ratings are the order's own quantity (it ranks by mu - 3 sigma), fitted on every game of
    both entrants, not only the games they shared."""
    return upper.mu - lower.mu > SEPARATED_Z * (math.hypot(upper.sigma, lower.sigma) if sd is None else sd)


def _lead(lead: dict[tuple[int, int], tuple[float, int]]) -> dict[str, Any]:
    ci = ratio_ci(list(lead.values()))
    return {"mean": ci.mean, "ci95": None if (b := _bounded(ci)) is None else list(b),
            "games": sum(n for _, n in lead.values())}  # fmt: skip


def _no_games() -> dict[str, int]:
    return {"wins": 0, "losses": 0, "ties": 0}


def _no_diff() -> dict[str, Any]:
    return _score_diff({})


def _score_diff(sets: dict[tuple[int, int], tuple[float, int]]) -> dict[str, Any]:
    ci = ratio_ci(list(sets.values()))
    return {"mean_diff": ci.mean, "ci95": None if (b := _bounded(ci)) is None else list(b),
            "games": sum(n for _, n in sets.values())}  # fmt: skip


def _median(ordered: list[int]) -> float:
    mid = len(ordered) // 2
    return float(ordered[mid]) if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def compute(
    tournament_id: str, names: list[str], games: list[GameRow], scheduled: int, ratings: Ratings | None = None
) -> Standings:
    """The standings of ``games``, their ratings converged. ``ratings``, when given, must be the ratings of ``games``
    already computed (the runner's live ratings after the whole schedule); otherwise they are computed here."""
    tally = Tally(tournament_id, names, scheduled)
    for g in games:
        tally.count(g)
    if ratings is None or ratings.games != len(tally.games):
        ratings = rate(names, ((g.names, g.places) for g in tally.games.values()))
    elif not ratings.converged:
        ratings.fit()
    tally.load(ratings)
    return tally.standings()


def dumps(standings: Standings) -> str:
    return json.dumps(standings.to_json(), indent=2)
