"""What a game is asked to be (GameSpec) and what it came to (GameResult): the match runner's contract with the
tournament layer, the service and the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from referee.engine import EndReason, Options


@dataclass(frozen=True)
class TimeControl:
    """The time control (docs/match.md). All in milliseconds; RANGES holds what each may be."""

    decision_ms: int = 1000  # free time per decision
    bank_ms: int = 10_000  # per-game bank a slow decision draws on
    grace_ms: int = 50  # transport allowance, never given to the bot to think


# What a game's settings may be, wherever they come from (a config file, `abluxx match`, the service).
RANGES = {
    "decision_ms": (1, 600_000),
    "bank_ms": (0, 3_600_000),
    "grace_ms": (0, 10_000),
    "max_strikes": (1, 1000),
    "seed": (0, 2**64 - 1),  # a deck seed (deck_from_seed)
}


@dataclass(frozen=True)
class EntrantRef:
    """Who sits in a seat: a remote bot at ``address`` (host:port), or a built-in ``policy`` by name."""

    name: str
    address: str | None = None
    policy: str | None = None  # "random", "greedy", "counter"
    seed: int | None = None  # a built-in policy's seed (None: the game's deck seed); a duel seeds each role its own


@dataclass(frozen=True)
class GameSpec:
    game_id: str
    seed: int  # the deck is deck_from_seed(seed)
    entrants: tuple[EntrantRef, ...]  # by seat
    options: Options = field(default_factory=Options)
    time_control: TimeControl = field(default_factory=TimeControl)
    start_seat: int = 0
    max_strikes: int = 3
    tournament_id: str = ""
    # GameOverNotice reveals the deck and salt; a tournament says False while another game still uses this deal
    reveal_deal: bool = True
    # a seat whose bot cannot be reached at the start (no connection, no Hello): False, the fallback plays it from
    # the start; True (a ladder), the game does not start and raises SeatsAbsent, so nobody wins by its absence
    absent_aborts: bool = False


@dataclass
class SeatStats:
    faults: dict[str, int] = field(default_factory=dict)  # fault kind name ("timeout", ...) -> count
    decision_us: list[int] = field(default_factory=list)  # the bot's time for each decision it answered
    retired: bool = False
    first_fault: str = ""  # "invalid at decision 31: the bot raised KeyError: 7", the first strike's fault line
    transport: str = ""  # how the seat was asked: "stream", "unary" or "builtin" ("" if it never connected)


@dataclass
class GameResult:
    game_id: str
    scores: tuple[int, ...]
    places: tuple[int, ...]  # R15, retired seats last
    end_reason: EndReason
    seats: list[SeatStats]
    decisions: int
    final_digest: str
    record_path: Path | None
    referee_faults: int = 0  # decisions lost to the referee's own failures (not charged to bots)
