"""``abluxx duel CANDIDATE BASELINE``: is the candidate better than the baseline? Paired games on the same deals and a
sequential test with stated error rates (docs/duel.md). ``abluxx duel --resume ID`` plays on after an
interruption."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from referee.duel.measure import DEFAULT_MARGIN, MEASURES, check_margin, default_measure, unit
from referee.duel.runner import (
    DEFAULT_MAX_GAMES,
    MAX_CONCURRENCY,
    DuelError,
    DuelSettings,
    DuelState,
    default_field,
    field_size,
    new_id,
    run_duel,
)
from referee.duel.store import DUELS_DB, DuelStore
from referee.errors import BadInput, Interrupted, NotFound
from referee.event_loop import run as run_games
from referee.fleet import WorkerSettings
from referee.fleet import settings_from as fleet_settings
from referee.gc_policy import tune_gc
from referee.stats import Sprt, Summary, Verdict
from referee.terminal import StatusLine, say

from .args import add_data_arg, add_worker_args
from .logs import add_log_format, configure_logs
from .seats import named_by_hello, parse_seats

EXIT = {Verdict.H1: 0, Verdict.H0: 1, Verdict.INCONCLUSIVE: 3}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "duel",
        help="is CANDIDATE better than BASELINE? paired games on the same deals, a sequential test (exit 0/1/3)",
        description="Plays pairs of games on the same fresh deal, seat and field, once with each bot, until a "
        "sequential test (GSPRT) decides: H1 (candidate better by MARGIN in the measure's unit, exit 0), H0 (not "
        "better by MARGIN, exit 1), or inconclusive after --max-games (exit 3). A bot is HOST:PORT, NAME=HOST:PORT, a "
        'built-in policy, or a command line with a space ("python3 bot.py --port 0"), started afresh for every '
        "game. docs/duel.md",
    )
    p.add_argument("candidate", nargs="?", help="the bot under test")
    p.add_argument("baseline", nargs="?", help="the bot to beat")
    p.add_argument("--resume", metavar="ID", help="play on with a stored duel (its bots and settings are kept)")
    _common(p)
    p.set_defaults(func=run)


def _common(p: argparse.ArgumentParser, field: bool = True) -> None:
    test = Sprt()
    p.add_argument("--table-size", type=int, default=2, help="players per game, 2 to 5 (default 2)")
    if field:
        p.add_argument("--field", nargs="+", default=None, metavar="BOT",
                       help="the other seats when --table-size is above 2 (default: the example bots)")  # fmt: skip
    p.add_argument("--max-games", type=int, default=None,
                   help=f"stop, inconclusive, after this many games (default {DEFAULT_MAX_GAMES}; with --resume, a new "
                   "budget for the stored duel)")  # fmt: skip
    p.add_argument("--alpha", type=float, default=test.alpha, help="false positive rate, 0 to 0.5 (default 0.05)")
    p.add_argument("--beta", type=float, default=test.beta, help="false negative rate, 0 to 0.5 (default 0.05)")
    p.add_argument("--margin", type=float, default=None,
                   help="M: the gain worth detecting, in the measure's unit: points a game for score (default "
                   f"{DEFAULT_MARGIN['score']:g}), points a game against the table for table (default "
                   f"{DEFAULT_MARGIN['table']:g}), places a game for place (default {DEFAULT_MARGIN['place']:g}); "
                   "below what the measure can reach (docs/duel.md)")  # fmt: skip
    p.add_argument("--measure", choices=MEASURES, default=None,
                   help="what a pair's difference measures: score (points a game), table (the score minus the mean of "
                   "the other seats', against the baseline's) or place; default score at 2 players, table at 3 to 5 "
                   "(docs/duel.md)")  # fmt: skip
    p.add_argument("--concurrency", "-c", type=int, default=4, help="pairs at once (default 4)")
    p.add_argument("--sandbox", action="store_true", help="run every command bot in the sandbox, as a server runs "
                   "an uploaded bot, with the current folder as its files (docs/sandbox.md)")  # fmt: skip
    add_worker_args(p, "in this process")
    add_data_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object at the end instead of text")
    p.add_argument("--no-progress", action="store_true", help="no progress bar or progress lines")
    add_log_format(p)


def check_common(args: argparse.Namespace) -> None:
    """The flags a resume takes too."""
    if args.max_games is not None and args.max_games < 2:
        raise BadInput(f"--max-games must be at least 2 (one pair of games), got {args.max_games}")
    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise BadInput(f"--concurrency must be 1 to {MAX_CONCURRENCY}, got {args.concurrency}")
    workers_from(args)


def workers_from(args: argparse.Namespace) -> WorkerSettings:
    """Where the duel's games are played (--workers, --backend, --ray-address); BadInput names a bad flag."""
    return fleet_settings(WorkerSettings(), args.workers, args.backend, args.ray_address)


def check_test(args: argparse.Namespace) -> Sprt:
    """The test the flags ask for (and the table size); BadInput names what is wrong."""
    if not 2 <= args.table_size <= 5:
        raise BadInput(f"--table-size must be 2 to 5, got {args.table_size}")
    for flag in ("alpha", "beta"):
        value = getattr(args, flag)
        if not 0 < value < 0.5:
            raise BadInput(f"--{flag} must be between 0 and 0.5 (both excluded), got {value}")
    measure = args.measure or default_measure(args.table_size)
    margin = DEFAULT_MARGIN[measure] if args.margin is None else args.margin
    try:
        check_margin(margin, measure, args.table_size)
    except ValueError as e:
        raise BadInput(str(e)) from None
    check_common(args)
    return Sprt(args.alpha, args.beta, margin)


def settings_from(args: argparse.Namespace, candidate: str, baseline: str) -> DuelSettings:
    """The duel the flags ask for; BadInput names what is wrong."""
    test = check_test(args)
    field = args.field or []
    if args.field is not None and len(field) != field_size(args.table_size):
        raise BadInput(
            f"--table-size {args.table_size} needs a --field of {field_size(args.table_size)} bot(s) (every seat "
            f"but the candidate's, or the baseline's; none at 2 players), got {len(field)}"
        )
    labels = ["candidate", "baseline", *(f"--field bot {i + 1}" for i in range(len(field)))]
    seats = parse_seats([candidate, baseline, *field], labels, commands=True)
    if getattr(args, "sandbox", False):  # every command in the sandbox, its files the current folder (docs/sandbox.md)
        seats = tuple(dataclasses.replace(e, sandbox=True, files=str(Path.cwd())) if e.command else e for e in seats)
    bots = named_by_hello(seats, args.data / "logs")
    return DuelSettings(
        candidate=bots[0],
        baseline=bots[1],
        field=bots[2:] if args.field is not None else default_field(args.table_size),
        table_size=args.table_size,
        max_games=args.max_games or DEFAULT_MAX_GAMES,
        test=test,
        measure=args.measure or "",
    )


def same_bot_warning(settings: DuelSettings) -> str | None:
    c, b = settings.candidate, settings.baseline
    if (c.address, c.command, c.policy) == (b.address, b.command, b.policy):
        where = c.address or c.policy or " ".join(c.command or ())
        return (f"warning: the candidate and the baseline are the same bot ({where}): this is an A/A test, "
                "which should end H0 (or, at rate alpha, H1)")  # fmt: skip
    return None


def _ci(s: Summary) -> str:
    low, high = s.ci95
    return "± ?" if not math.isfinite(low) else f"± {(high - low) / 2:.2f}"


def status_line(state: DuelState) -> str:
    s = state.summary()
    lower, upper = s.bounds
    return (f"{state.games} games, {s.pairs} pairs  diff {s.mean_diff:+.2f} {_ci(s)}  "
            f"LLR {s.llr:.2f} ({lower:.2f}, {upper:.2f})  pairs W-L-T {s.wins}-{s.losses}-{s.ties}")  # fmt: skip


class Progress:
    """A bar redrawn in place on a terminal; otherwise a line every ``every_s`` seconds (to stderr)."""

    def __init__(self, total: int, enabled: bool, every_s: float = 10.0) -> None:
        self.total = total
        self.enabled = enabled
        self.tty = enabled and sys.stderr.isatty()
        self.every_s = every_s
        self._last = 0.0
        self.bar = StatusLine(sys.stderr)

    def __call__(self, state: DuelState) -> None:
        now = time.monotonic()
        if not self.enabled or now - self._last < (0.1 if self.tty else self.every_s):
            return
        self._last = now
        if self.tty:
            fill = min(24, 24 * state.games // max(1, self.total))
            self.bar.draw(f"[{'#' * fill}{'.' * (24 - fill)}] {status_line(state)}")
        else:
            say(status_line(state), file=sys.stderr, flush=True)

    def clear(self) -> None:
        self.bar.clear()


def verdict_words(s: Summary, games: int, margin: float) -> str:
    if s.verdict is Verdict.H1:
        return "H1 (candidate better)"
    if s.verdict is Verdict.H0:
        return f"H0 (not better by {margin:g})"
    return f"inconclusive after {games} games"


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def result_json(state: DuelState) -> dict[str, Any]:
    s = state.summary()
    t = state.settings.test
    return {
        "duel_id": state.duel_id,
        "verdict": s.verdict.value,
        "games": state.games,
        "pairs": s.pairs,
        "mean_diff": s.mean_diff,
        "ci95": [_finite(s.ci95[0]), _finite(s.ci95[1])],
        "llr": s.llr,
        "skew": s.skew,
        "bounds": list(s.bounds),
        "wins": s.wins,
        "losses": s.losses,
        "ties": s.ties,
        "place_diff": state.place_diff(),
        "later_pairs": len(later := state.later()),
        "later_mean_diff": sum(p.diff for p in later) / len(later) if later else None,
        "alpha": t.alpha,
        "beta": t.beta,
        "margin": t.margin,
        "measure": state.settings.measure,
        "max_games": state.settings.max_games,
    }


def report(state: DuelState, as_json: bool) -> str:
    if as_json:
        return json.dumps(result_json(state))
    st = state.settings
    s = state.summary()
    who = f"{st.candidate.name} (candidate) vs {st.baseline.name} (baseline)"
    if st.field:
        who += f", field {', '.join(e.name for e in st.field)}"
    return "\n".join([
        f"duel {state.duel_id}: {who}",
        status_line(state),
        f"mean place difference {state.place_diff():+.2f} (positive: the candidate placed better)",
        *_later_line(state),
        f"verdict: {verdict_words(s, state.games, st.test.margin)}  "
        f"(alpha {st.test.alpha:g}, beta {st.test.beta:g}, margin {st.test.margin:g} {unit(st.measure)})",
    ])  # fmt: skip


def _later_line(state: DuelState) -> list[str]:
    """The pairs that finished after the verdict's pair count (they were in flight): stored, shown, not counted."""
    later = state.later()
    if not later:
        return []
    mean = sum(p.diff for p in later) / len(later)
    return [f"{len(later)} pair(s) finished after the verdict's pair count: stored, not counted (their mean diff "
            f"{mean:+.2f})"]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if args.resume is None:
        if args.candidate is None or args.baseline is None:
            raise BadInput("give CANDIDATE and BASELINE, or --resume ID")
        settings = settings_from(args, args.candidate, args.baseline)
    elif args.candidate is not None:
        raise BadInput("--resume plays a stored duel: give no CANDIDATE or BASELINE with it")
    else:
        check_common(args)
    configure_logs(args, text_level="error")
    with open_duels(args.data, args.resume) as store:
        if args.resume is not None:
            row = store.duel(args.resume)
            if row is None:
                known = ", ".join(d.id for d in store.duels()[-5:]) or "none"
                raise NotFound(f"no duel {args.resume!r} in {store.path} (latest: {known})")
            state = DuelState.stored(store, row)
            if args.max_games is not None and args.max_games != state.settings.max_games and state.kept is None:
                state.settings = dataclasses.replace(state.settings, max_games=args.max_games)
                store.update_settings(row.id, state.settings.to_json())
        else:
            if warning := same_bot_warning(settings):
                say(warning, file=sys.stderr)
            state = DuelState(new_id("duel"), settings, {})
            store.create(state.duel_id, settings.to_json())
        return play(state, store, args)


def open_duels(data: Path, resume: str | None) -> DuelStore:
    """The data folder's duel store; to resume, only one that is there (a mistyped --resume or --data creates
    nothing)."""
    if resume is not None and not (Path(data) / DUELS_DB).is_file():
        raise NotFound(f"no duel or gauntlet {resume!r}: there is no {Path(data) / DUELS_DB} (give --data DIR?)")
    return DuelStore(data)


def drive(state: DuelState, store: DuelStore, args: argparse.Namespace, resume: str, *, told: bool = False) -> None:
    """Run (or resume) ``state`` to its verdict. Ctrl-C or a bot that cannot start: the state so far and the
    command (``resume``) that plays on. ``told``: the caller has said how to resume (a gauntlet, once for all its
    duels), so the duel's first line says only what it plays."""
    progress = Progress(state.settings.max_games, enabled=not args.no_progress)
    if not args.json:
        how = "" if told else f"; stop with Ctrl-C and resume with {resume}"
        say(f"duel {state.duel_id}: up to {state.settings.max_games} games{how}", file=sys.stderr)
    tune_gc()
    try:
        run_games(run_duel(state, store, concurrency=args.concurrency, on_pair=progress, workers=workers_from(args)))
    except KeyboardInterrupt:
        progress.clear()
        raise Interrupted(f"interrupted: {status_line(state)}\nthe duel is stored; play on with: {resume}") from None
    except DuelError as e:
        progress.clear()
        raise DuelError(f"{e}\n{status_line(state)}\nplay on with: {resume}") from None
    progress.clear()


def play(state: DuelState, store: DuelStore, args: argparse.Namespace) -> int:
    """Run (or resume) ``state`` to its verdict and print it; the exit code says which."""
    drive(state, store, args, f"abluxx duel --resume {state.duel_id} --data {args.data}")
    say(report(state, args.json))
    return EXIT[state.summary().verdict]
