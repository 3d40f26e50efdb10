"""What a duel's pair measures (docs/duel.md, "What is measured"), in which unit, how far it can go, and the margin
each measure takes when none is given (docs/duel.md, "The default margin")."""

from __future__ import annotations

from referee.engine import DECK_SIZE

MEASURES = ("score", "table", "place")  # what a pair's difference measures
# the margin M of each measure when none is given, in its unit: a score point a game (score, and against the
# table), a tenth of a place a game (at 2 players, 5 games in 100 won more)
DEFAULT_MARGIN = {"score": 1.0, "table": 1.0, "place": 0.1}
_UNITS = {"score": "points a game", "table": "points a game against the table", "place": "places a game"}


def default_measure(table_size: int) -> str:
    """The score difference at 2 players, where the table measure is the same up to a factor 2 (so M keeps its
    meaning); the table-relative score at 3 to 5, where a bot's score also moves the field's (docs/duel.md)."""
    return "score" if table_size == 2 else "table"


def reach(measure: str, table_size: int) -> float:
    """How far a pair's difference can go either way: K - 1 places at K players (first against last); 2 * 109
    points for scores, with or without the table (a seat's score, and its score against the table, lie within
    +-109: each card of the deck counts +1 or -1 for one seat at most, R14)."""
    return table_size - 1 if measure == "place" else 2 * DECK_SIZE


def check_margin(margin: float, measure: str, table_size: int) -> None:
    """ValueError, naming the range, for a margin no duel of this measure could show: at or beyond its ``reach``
    (a place margin of 1 at 2 players asks for a candidate ahead in every game)."""
    top = reach(measure, table_size)
    if not 0 < margin < top:
        raise ValueError(
            f"--margin must be above 0 and below {top:g} {_UNITS[measure]} for --measure {measure} at --table-size "
            f"{table_size} (a pair's difference lies within +-{top:g}), got {margin:g}"
        )


def unit(measure: str) -> str:
    """The unit of the measure's differences, and of its margin."""
    return _UNITS[measure]
