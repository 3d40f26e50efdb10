"""``abluxx match``: play one game between bots at addresses and built-in policies, and print how it went."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import sys
from datetime import UTC, datetime

from referee.engine import Options
from referee.errors import BadInput
from referee.event_loop import run as run_games
from referee.gc_policy import tune_gc
from referee.match import ChannelPool, EntrantRef, GameSpec, TimeControl, builtin_names, play_game
from referee.match.spec import RANGES
from referee.records import RecordError, read_record, record_path
from referee.records.private import private_folder
from referee.terminal import say
from referee.tournament.deals import fresh_seed

from .args import add_data_arg
from .logs import add_log_format, configure_logs
from .seats import asked_name, parse_seats


def register(sub) -> None:
    p = sub.add_parser(
        "match",
        help="play one game between bots (host:port) and built-in policies; print the result and the record path",
        description="Each seat is HOST:PORT for a bot over gRPC, or a built-in policy name "
        f"({', '.join(builtin_names())}). 2 to 5 seats; the first plays first unless --start-seat says otherwise.",
    )
    p.add_argument("seats", nargs="+", metavar="ADDRESS_OR_POLICY", help="host:port of a bot, or a policy name")
    p.add_argument("--seed", type=int, default=None, help="the deal's seed (default: random)")
    p.add_argument("--decision-ms", type=int, default=TimeControl.decision_ms, help="free time per decision")
    p.add_argument("--bank-ms", type=int, default=TimeControl.bank_ms, help="per-game time bank")
    p.add_argument("--grace-ms", type=int, default=TimeControl.grace_ms, help="transport allowance")
    p.add_argument("--max-strikes", type=int, default=3, help="faults after which the fallback plays a seat")
    p.add_argument("--start-seat", type=int, default=0)
    p.add_argument("--draw-one", action="store_true", help="rule option draw_one")
    p.add_argument("--end-on-empty-pile", action="store_true", help="rule option end_on_empty_pile")
    p.add_argument("--transport", choices=["stream", "unary"], help="force a transport the bots offer")
    p.add_argument("--game-id", help="default: match-<UTC time>-<random>")
    add_data_arg(p)
    add_log_format(p)
    p.set_defaults(func=run)


def _entrants(args: list[str]) -> tuple[EntrantRef, ...]:
    """Seats from the command line: ``host:port`` or ``name=host:port`` for a bot, or a built-in policy name."""
    return tuple(EntrantRef(name=e.name, address=e.address, policy=e.policy) for e in parse_seats(args))


async def _named(entrants: tuple[EntrantRef, ...], args: list[str]) -> tuple[EntrantRef, ...]:
    """A bot seat given as a bare ``host:port`` takes the name its bot gives in Hello (its address when it gives
    none, or cannot be reached; the game then plays it with the fallback and says so)."""

    async def name_of(e: EntrantRef, arg: str) -> str:
        if e.address is None or "=" in arg:
            return e.name
        return await asked_name(e.address) or e.address

    names = await asyncio.gather(*(name_of(e, a) for e, a in zip(entrants, args, strict=True)))
    out = []
    for i, (e, name) in enumerate(zip(entrants, names, strict=True)):
        if names.count(name) > 1 and e.address is not None and "=" not in args[i]:
            name = f"{name}#{i}"  # two bots that call themselves the same
        out.append(dataclasses.replace(e, name=name))
    return tuple(out)


def _seat(e: EntrantRef) -> str:
    """The seat's name, with its address as a detail."""
    return f"{e.name} ({e.address})" if e.address and e.address != e.name else e.name


def run(args) -> int:
    configure_logs(args, text_level="error")  # the summary below names every fault a person needs
    entrants = _entrants(args.seats)
    if not 2 <= len(entrants) <= 5:
        raise BadInput(f"a game needs 2 to 5 seats, got {len(entrants)}")
    if not 0 <= args.start_seat < len(entrants):
        raise BadInput(f"--start-seat must be 0 to {len(entrants) - 1}")
    for flag in ("seed", "decision_ms", "bank_ms", "grace_ms", "max_strikes"):
        lo, hi = RANGES[flag]
        value = getattr(args, flag)
        if value is not None and not lo <= value <= hi:
            raise BadInput(f"--{flag.replace('_', '-')} must be {lo} to {hi}, got {value}")
    seed = args.seed if args.seed is not None else fresh_seed()
    game_id = args.game_id or f"match-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    try:
        path = record_path(args.data, game_id)
    except RecordError as e:  # a --game-id that cannot name a file
        raise BadInput(str(e)) from None
    if path.exists():
        raise BadInput(f"{path} exists: game {game_id} was played before; choose another --game-id")
    private_folder(args.data)  # owner-only, as every other command leaves it, even where an older one left it open
    entrants = asyncio.run(_named(entrants, args.seats))
    spec = GameSpec(
        game_id=game_id,
        seed=seed,
        entrants=entrants,
        options=Options(draw_one=args.draw_one, end_on_empty_pile=args.end_on_empty_pile),
        time_control=TimeControl(args.decision_ms, args.bank_ms, args.grace_ms),
        start_seat=args.start_seat,
        max_strikes=args.max_strikes,
    )

    async def go():
        async with ChannelPool() as pool:
            return await play_game(spec, pool=pool, record_path=path, prefer=args.transport)

    tune_gc()
    result = run_games(go())
    say(f"game {game_id}, seed {seed}: {result.decisions} decisions, ended by {result.end_reason.value}")
    order = sorted(range(len(entrants)), key=lambda i: (result.places[i], i))
    width = max(24, *(len(_seat(e)) for e in entrants))
    for i in order:
        st = result.seats[i]
        faults = ", ".join(f"{k} {v}" for k, v in sorted(st.faults.items())) or "no faults"
        times = sorted(st.decision_us)
        median = f", median {times[len(times) // 2] / 1000:.1f} ms" if times else ""
        retired = ", RETIRED (the fallback finished its game)" if st.retired else ""
        say(f"  place {result.places[i]}: seat {i} {_seat(entrants[i]):<{width}} score {result.scores[i]:+4d}  "
              f"{faults}{median}{retired}")  # fmt: skip
        if st.first_fault:
            say(f"    first fault: {st.first_fault}")
    say(f"record: {path}")
    failed = [i for i, e in enumerate(entrants) if e.address is not None and result.seats[i].retired]
    if failed:  # exit 1: the check the docs recommend for a new bot must not pass when the bot is down
        why = {d.seat: d.fault_detail for d in read_record(path).decisions if d.retired}
        for i in failed:
            say(f"abluxx match: the bot in seat {i}, {_seat(entrants[i])}, retired: {why.get(i, 'see the record')}",
                  file=sys.stderr)  # fmt: skip
    return 1 if failed else 0
