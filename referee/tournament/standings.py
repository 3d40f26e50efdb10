"""Standings: ratings, raw and duplicate-adjusted scores, faults, decision times and head to head, all derived
from the stored games (in schedule order)."""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from referee.rating import Ratings, rate
from referee.store import GameRow


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
    dup_avg_score: float  # score minus the average score of the same seat across its duplicate set
    faults: dict[str, int] = field(default_factory=dict)
    retired: int = 0  # games the fallback had to finish for this entrant
    median_decision_ms: float | None = None


@dataclass
class Standings:
    tournament_id: str
    games: int  # finished games counted
    scheduled: int
    rows: list[Standing]
    head_to_head: dict[str, dict[str, dict[str, int]]]  # a -> b -> {"wins", "losses", "ties"} for a against b

    def to_json(self) -> dict:
        return {
            "tournament_id": self.tournament_id,
            "games": self.games,
            "scheduled": self.scheduled,
            "standings": [asdict(r) for r in self.rows],
            "head_to_head": self.head_to_head,
        }

    def to_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        kinds = sorted({k for r in self.rows for k in r.faults})
        w.writerow(["rank", "entrant", "mu", "sigma", "mu_minus_3sigma", "games", "wins", "avg_score",
                    "dup_avg_score", "retired", "median_decision_ms", *[f"faults_{k}" for k in kinds]])  # fmt: skip
        for r in self.rows:
            w.writerow([r.rank, r.entrant, f"{r.mu:.6f}", f"{r.sigma:.6f}", f"{r.conservative:.6f}", r.games, r.wins,
                        f"{r.avg_score:.4f}", f"{r.dup_avg_score:.4f}", r.retired,
                        "" if r.median_decision_ms is None else f"{r.median_decision_ms:.3f}",
                        *[r.faults.get(k, 0) for k in kinds]])  # fmt: skip
        return out.getvalue()

    def table(self) -> str:
        """The terminal table, then head to head."""
        head = (
            f"{'#':>2}  {'entrant':<16} {'mu-3sd':>7} {'mu':>6} {'sigma':>5} {'games':>5} {'wins':>5} "
            f"{'avg':>6} {'dup+-':>6} {'med ms':>7}  faults"
        )
        lines = [f"tournament {self.tournament_id}: {self.games}/{self.scheduled} games", head, "-" * len(head)]
        for r in self.rows:
            faults = ", ".join(f"{k} {v}" for k, v in sorted(r.faults.items())) or "-"
            if r.retired:
                faults += f" (retired in {r.retired})"
            med = "-" if r.median_decision_ms is None else f"{r.median_decision_ms:.2f}"
            lines.append(
                f"{r.rank:>2}  {r.entrant[:16]:<16} {r.conservative:>7.2f} {r.mu:>6.2f} {r.sigma:>5.2f} "
                f"{r.games:>5} {r.wins:>5} {r.avg_score:>+6.2f} {r.dup_avg_score:>+6.2f} {med:>7}  {faults}"
            )
        names = [r.entrant for r in self.rows]
        if len(names) > 1:
            lines += ["", "head to head (row vs column: wins-losses, ties in brackets when any)"]
            cell = {
                (a, b): f"{h['wins']}-{h['losses']}" + (f"({h['ties']})" if h["ties"] else "")
                for a in names
                for b, h in self.head_to_head[a].items()
            }
            width = 2 + max(9, *(len(c) for c in cell.values()), *(min(len(n), 12) for n in names))
            lines.append(" " * 17 + "".join(f"{n[:12]:>{width}}" for n in names))
            for a in names:
                cells = [f"{'·' if a == b else cell[(a, b)]:>{width}}" for b in names]
                lines.append(f"{a[:16]:<17}" + "".join(cells))
        return "\n".join(lines)


def ratings_of(names: Iterable[str], games: list[GameRow]) -> Ratings:
    """Ratings from stored games; ``games`` must be in schedule order (SqliteStore.games gives that)."""
    return rate(names, ((g.names, g.places) for g in games))


def compute(
    tournament_id: str, names: list[str], games: list[GameRow], scheduled: int, ratings: Ratings | None = None
) -> Standings:
    """``ratings``, when given, must be ``ratings_of(names, games)`` already computed (the runner's live ratings
    after the whole schedule); otherwise they are computed here."""
    if ratings is None or ratings.games != len(games):
        ratings = ratings_of(names, games)
    played: dict[str, int] = defaultdict(int)
    wins: dict[str, int] = defaultdict(int)
    score_sum: dict[str, int] = defaultdict(int)
    dup_sum: dict[str, float] = defaultdict(float)
    retired: dict[str, int] = defaultdict(int)
    faults: dict[str, dict[str, int]] = {n: {} for n in names}
    times: dict[str, list[int]] = {n: [] for n in names}
    h2h = {a: {b: {"wins": 0, "losses": 0, "ties": 0} for b in names if b != a} for a in names}

    # the average score of each seat over its duplicate set (the games of that set that have finished)
    seat_scores: dict[tuple[int, int], dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for g in games:
        for seat, s in enumerate(g.seats):
            seat_scores[(g.table, g.deal)][seat].append(s.score)

    for g in games:
        par = seat_scores[(g.table, g.deal)]
        for seat, s in enumerate(g.seats):
            n = s.entrant
            played[n] += 1
            wins[n] += s.place == 1
            score_sum[n] += s.score
            dup_sum[n] += s.score - statistics.fmean(par[seat])
            retired[n] += s.retired
            for kind, count in s.faults.items():
                faults[n][kind] = faults[n].get(kind, 0) + count
            times[n].extend(s.decision_us)
        for i, a in enumerate(g.seats):
            for b in g.seats[i + 1 :]:
                if a.place < b.place:
                    h2h[a.entrant][b.entrant]["wins"] += 1
                    h2h[b.entrant][a.entrant]["losses"] += 1
                elif a.place > b.place:
                    h2h[a.entrant][b.entrant]["losses"] += 1
                    h2h[b.entrant][a.entrant]["wins"] += 1
                else:
                    h2h[a.entrant][b.entrant]["ties"] += 1
                    h2h[b.entrant][a.entrant]["ties"] += 1

    rows = []
    for rank, (n, r) in enumerate(ratings.leaderboard(), start=1):
        k = played[n]
        rows.append(
            Standing(
                rank=rank,
                entrant=n,
                mu=r.mu,
                sigma=r.sigma,
                conservative=r.conservative,
                games=k,
                wins=wins[n],
                avg_score=score_sum[n] / k if k else 0.0,
                dup_avg_score=dup_sum[n] / k if k else 0.0,
                faults=dict(sorted(faults[n].items())),
                retired=retired[n],
                median_decision_ms=statistics.median(times[n]) / 1000 if times[n] else None,
            )
        )
    return Standings(tournament_id, len(games), scheduled, rows, h2h)


def dumps(standings: Standings) -> str:
    return json.dumps(standings.to_json(), indent=2)
