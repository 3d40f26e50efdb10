"""The standings' figures per pair of entrants (head to head, score difference, lead) and per duplicate set, kept
sparse: only pairs that met and sets that were played cost anything, so 1,000 entrants (1,000,000 pairs, most of
which a round robin's fixed sections never seat together) cost what their games cost, and a finished game
recomputes only what it touched (issue 43, docs/notes/2026-12-06-rating-speed.md).

``PairRows`` shows sparse rows as the dense ``a -> b -> figure`` mapping the standings have always had (every
other entrant in each row, a pair that never met at its empty figure), built a row at a time when one is read."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

Row = dict[str, Any]


class PairRows(Mapping[str, Row]):
    """A read-only ``a -> b -> figure`` over ``rows`` (a -> b -> figure, pairs that met), for every name of
    ``names`` that ``keep`` keeps; a pair missing from ``rows`` gets ``empty()``, and ``apart`` (if given) drops
    pairs that can never meet."""

    def __init__(
        self,
        names: list[str],
        rows: Mapping[str, Row],
        empty: Callable[[], Any],
        keep: Callable[[str], bool] | None = None,
        apart: Callable[[str, str], bool] | None = None,
    ) -> None:
        self.names, self.rows, self.empty = names, rows, empty
        self.keep, self.apart = keep, apart
        self._kept = [n for n in names if keep is None or keep(n)]
        self._known = set(self._kept)
        self._built: dict[str, Row] = {}

    def __getitem__(self, a: str) -> Row:
        if a not in self._known:
            raise KeyError(a)
        if (row := self._built.get(a)) is None:
            met = self.rows.get(a, {})
            row = self._built[a] = {
                b: met[b] if b in met else self.empty()
                for b in self._kept
                if b != a and (self.apart is None or not self.apart(a, b))
            }
        return row

    def __iter__(self) -> Iterator[str]:
        return iter(self._kept)

    def __len__(self) -> int:
        return len(self._kept)

    def without(self, apart: Callable[[str, str], bool]) -> PairRows:
        """The same rows without the pairs ``apart`` names (two of one owner: they never meet)."""
        return PairRows(self.names, self.rows, self.empty, self.keep, apart)

    def sparse(self) -> dict[str, Row]:
        """The pairs that met, as plain dicts (what a kept copy of the standings stores)."""

        def shown(a: str, b: str) -> bool:
            return b in self._known and b != a and (self.apart is None or not self.apart(a, b))

        return {a: {b: v for b, v in self.rows.get(a, {}).items() if shown(a, b)} for a in self._kept}


class DupSet:
    """One duplicate set's running sums (a deal at a table, or a deal's section): per seat the games and the total
    score, and per entrant and seat the entrant's score sum and games there. An entrant's duplicate-adjusted sum
    over the set is, over its seats s, S - (C * T_s - S) / (N_s - 1): each of its scores minus the average of the
    others who held the same seat's cards (S, C: its sum and games at s; T_s, N_s: the seat's total and games)."""

    def __init__(self) -> None:
        self.seat_games: dict[int, int] = {}
        self.seat_total: dict[int, int] = {}
        self.held: dict[tuple[str, int], list[int]] = {}  # (entrant, seat) -> [score sum, games]

    def add(self, seats: list[tuple[str, int]]) -> None:
        """One game's (entrant, score) by seat."""
        for seat, (name, score) in enumerate(seats):
            self.seat_games[seat] = self.seat_games.get(seat, 0) + 1
            self.seat_total[seat] = self.seat_total.get(seat, 0) + score
            held = self.held.setdefault((name, seat), [0, 0])
            held[0] += score
            held[1] += 1

    def sums(self) -> dict[str, tuple[float, int]]:
        """Each entrant's (duplicate-adjusted score sum, games) over the set; nothing while no seat has two games
        (a set of one finished game has nobody to compare with)."""
        out: dict[str, tuple[float, int]] = {}
        for (name, seat), (total, games) in self.held.items():
            others = self.seat_games[seat] - 1
            if others < 1:
                continue
            s, c = out.get(name, (0.0, 0))
            out[name] = (s + total - (games * self.seat_total[seat] - total) / others, c + games)
        return out
