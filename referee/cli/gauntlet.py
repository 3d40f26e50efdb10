"""``abluxx gauntlet CANDIDATE --field BOT...``: the candidate against a fixed field, one duel per field bot on
duplicate deals, and its duplicate-adjusted score over them all (docs/duel.md, "Gauntlet"). ``abluxx gauntlet
--resume ID`` plays on after an interruption."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from referee.duel.runner import DEFAULT_MAX_GAMES, DuelSettings, DuelState, field_size, new_id
from referee.errors import BadInput, NotFound
from referee.stats import mean_ci
from referee.terminal import say

from .duel import _common, check_common, check_test, drive, open_duels, result_json, status_line, verdict_words
from .logs import configure_logs
from .seats import named_by_hello, parse_seats


def register(sub: Any) -> None:
    p = sub.add_parser(
        "gauntlet",
        help="the candidate against each bot of a fixed field: a duel each, and its duplicate-adjusted score",
        description="Plays one duel (abluxx duel) of CANDIDATE against each bot of --field in turn, as the baseline, "
        "on fresh duplicate deals; at 3 to 5 players the other seats are the rest of the field. Prints each duel's "
        "verdict and the candidate's duplicate-adjusted score over every pair with its 95% interval. Exit 0 when "
        "every duel says H1, 1 when one says H0, else 3. docs/duel.md",
    )
    p.add_argument("candidate", nargs="?", help="the bot under test")
    p.add_argument("--field", nargs="+", metavar="BOT", help="the reference bots, each the baseline of one duel")
    p.add_argument("--resume", metavar="ID", help="play on with a stored gauntlet")
    _common(p, field=False)
    p.set_defaults(func=run)


def settings_for(args: argparse.Namespace) -> list[DuelSettings]:
    """One duel per field bot; BadInput names what is wrong."""
    test = check_test(args)
    field = args.field or []
    k = args.table_size
    if len(field) < 1 + field_size(k):
        raise BadInput(f"--field needs at least {1 + field_size(k)} bot(s) at --table-size {k} (each is the "
                       f"baseline of one duel, the others fill the other seats), got {len(field)}")  # fmt: skip
    labels = ["candidate", *(f"--field bot {i + 1}" for i in range(len(field)))]
    candidate, *bots = named_by_hello(parse_seats([args.candidate, *field], labels, commands=True), args.data / "logs")
    out = []
    for i, baseline in enumerate(bots):
        others = bots[i + 1 :] + bots[:i]  # the rest of the field, from the next bot on
        out.append(DuelSettings(candidate, baseline, tuple(others[: field_size(k)]), k,
                                args.max_games or DEFAULT_MAX_GAMES, test, args.measure or ""))  # fmt: skip
    return out


def _verdict(states: list[DuelState]) -> tuple[str, int]:
    verdicts = [s.summary().verdict.value for s in states]
    if all(v == "H1" for v in verdicts):
        return "H1", 0
    if "H0" in verdicts:
        return "H0", 1
    return "inconclusive", 3


def report(gauntlet_id: str, states: list[DuelState], as_json: bool) -> str:
    diffs = [p.diff for s in states for p in s.counted()]
    overall = mean_ci(diffs)
    bounded = [overall.low, overall.high] if len(diffs) > 1 else [None, None]
    verdict, _ = _verdict(states)
    if as_json:
        return json.dumps({
            "gauntlet_id": gauntlet_id, "verdict": verdict, "games": sum(s.games for s in states),
            "pairs": len(diffs), "mean_diff": overall.mean, "ci95": bounded,
            "duels": [{"baseline": s.settings.baseline.name, **result_json(s)} for s in states],
        })  # fmt: skip
    c = states[0].settings.candidate.name
    lines = [f"gauntlet {gauntlet_id}: {c} against {len(states)} bot(s)"]
    for s in states:
        sm = s.summary()
        lines.append(f"  vs {s.settings.baseline.name}: {status_line(s)}  "
                     f"{verdict_words(sm, s.games, s.settings.test.margin)}")  # fmt: skip
    ci = f"± {overall.half_width:.2f}" if len(diffs) > 1 else "± ?"
    lines.append(f"duplicate-adjusted score of {c}: {overall.mean:+.2f} {ci} (95%) points a game over "
                 f"{len(diffs)} pairs (its score minus the field bot's on the same cards)")  # fmt: skip
    lines.append(f"verdict: {verdict} ({'better than every field bot' if verdict == 'H1' else 'see the duels'})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.resume is None:
        if args.candidate is None:
            raise BadInput("give CANDIDATE and --field BOT..., or --resume ID")
        duels = settings_for(args)
    elif args.candidate is not None or args.field:
        raise BadInput("--resume plays a stored gauntlet: give no CANDIDATE or --field with it")
    else:
        check_common(args)
    configure_logs(args, text_level="error")
    with open_duels(args.data, args.resume) as store:
        if args.resume is not None:
            rows = store.gauntlet(args.resume)
            if not rows:
                raise NotFound(f"no gauntlet {args.resume!r} in {store.path}")
            gauntlet_id = args.resume
            states = [DuelState.stored(store, r) for r in rows]
        else:
            gauntlet_id = new_id("gauntlet")
            states = []
            for i, settings in enumerate(duels):
                state = DuelState(f"{gauntlet_id}-d{i}", settings, {})
                store.create(state.duel_id, settings.to_json(), gauntlet=gauntlet_id)
                states.append(state)
        resume = f"abluxx gauntlet --resume {gauntlet_id} --data {args.data}"
        if not args.json:
            say(f"gauntlet {gauntlet_id}: {len(states)} duels; stop with Ctrl-C and resume with {resume}",
                file=sys.stderr)  # fmt: skip
        for state in states:
            drive(state, store, args, resume, told=True)
        say(report(gauntlet_id, states, args.json))
        if not args.json:
            say(f"(each duel: abluxx duel --resume DUEL_ID --data {args.data} with a bigger --max-games plays on)",
                file=sys.stderr)  # fmt: skip
        return _verdict(states)[1]
