"""Bots as the command line gives them (``abluxx match``, ``abluxx duel``, ``abluxx gauntlet``): one parser.

A bot is ``host:port`` (or ``NAME=host:port``) for a bot already running, a built-in policy name, or, where the
command starts bots itself, a command line with a space in it (or ``NAME=COMMAND``), e.g. ``"python3 bot.py --port
0"``, which must print ``listening on HOST:PORT`` once it serves (docs/tournaments.md, Entrants).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from referee.errors import BadInput
from referee.match import builtin_names, is_builtin
from referee.terminal import printable
from referee.tournament.config import EntrantConfig, address_problem

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.+-]+")
MAX_COMMAND_NAME_CHARS = 40  # a command bot's name, made from its command line when it is given none
MAX_HELLO_NAME_CHARS = 40  # a bot's Hello name as `match` shows it (docs/security.md)


def hello_name(name: str) -> str:
    """A bot's Hello name as `match` shows and records it: one line, at most MAX_HELLO_NAME_CHARS, its control
    characters written as escapes (``\\x1b``), as every name the CLI prints is (terminal.printable): one rendering
    whether the name came from Hello or from the command line."""
    return printable(name.strip()).replace("\n", "\\n")[:MAX_HELLO_NAME_CHARS]


def _command_name(argv: list[str]) -> str:
    return _NAME_CHARS.sub("_", " ".join(argv)).strip("_")[:MAX_COMMAND_NAME_CHARS] or "command"


def parse_seats(
    args: Sequence[str], labels: Sequence[str] | None = None, *, commands: bool = False
) -> tuple[EntrantConfig, ...]:
    """The bots ``args`` name, in order; BadInput names the first bad one by its label (default ``seat i``).
    A name used twice (two seats of one policy) gets ``#i`` after it. ``commands`` allows command lines."""
    labels = labels or [f"seat {i}" for i in range(len(args))]
    known = builtin_names()
    out = []
    for arg, label in zip(args, labels, strict=True):
        name, named, rest = arg.partition("=") if "=" in arg else ("", "", arg)
        if named and " " in name.strip():  # "python3 bot.py --x=1" names no bot
            name, named, rest = "", "", arg
        if commands and " " in rest.strip():
            try:
                argv = shlex.split(rest)
            except ValueError as e:
                raise BadInput(f"{label}: cannot read the command {rest!r}: {e}") from None
            out.append(EntrantConfig(name=name.strip() or _command_name(argv), command=tuple(argv)))
        elif named or ":" in rest:
            if problem := address_problem(rest):
                raise BadInput(f"{label}: {problem}")
            if named and not name.strip():
                raise BadInput(f"{label}: {arg!r} names no bot before '='; write NAME=HOST:PORT")
            out.append(EntrantConfig(name=name.strip() or rest, address=rest))
        elif is_builtin(arg):
            out.append(EntrantConfig(name=arg, policy=arg))
        else:
            command = ', or a command line such as "python3 bot.py --port 0"' if commands else ""
            raise BadInput(
                f"{label}: {arg!r} is neither HOST:PORT nor a built-in policy ({', '.join(known)}, or a noisy "
                f"one such as greedy+eps0.2){command}; "
                "a bot may be named with NAME=HOST:PORT"
            )
    names = [e.name for e in out]
    return tuple(
        EntrantConfig(name=f"{e.name}#{i}", address=e.address, command=e.command, policy=e.policy)
        if names.count(e.name) > 1 else e
        for i, e in enumerate(out)
    )  # fmt: skip


async def asked_name(address: str) -> str | None:
    """The name the bot at ``address`` gives in Hello, as `match` shows it (``hello_name``); None when it gives
    none or cannot be reached (the game then plays it with the fallback and says so)."""
    from referee.match.hello import HelloError, hello

    try:
        return hello_name((await hello(address)).name) or None
    except HelloError:
        return None


def _unnamed(e: EntrantConfig) -> bool:
    """Whether ``parse_seats`` made ``e``'s name of its address or command line (the user gave it none)."""
    made = e.address if e.address else _command_name(list(e.command)) if e.command else None
    return made is not None and e.name.split("#")[0] == made


def named_by_hello(bots: tuple[EntrantConfig, ...], log_dir: Path) -> tuple[EntrantConfig, ...]:
    """``bots`` with each bot that was given no name named by its Hello name, as `match` names them: a bare
    ``host:port`` is asked at its address; a command bot (``parse_seats`` made its name of its command line,
    ``tmp_nc_gopath_src_gobot_gobot_--port_0``) is started once, asked Hello, and stopped. A bot that gives no
    usable name keeps the one made of its address or command line."""
    unnamed = [i for i, e in enumerate(bots) if _unnamed(e)]
    if not unnamed:
        return bots
    import asyncio

    from referee.fleet import Bot, EntrantError, LocalBots

    async def ask() -> dict[int, str]:
        names = {i: await asked_name(a) for i in unnamed if (a := bots[i].address)}
        commands = [i for i in unnamed if bots[i].command]
        # a sandboxed command is asked in its sandbox too: it never runs outside it
        starting = tuple(Bot(f"hello-{i}", command=bots[i].command, sandbox=bots[i].bot().sandbox) for i in commands)
        try:
            if starting:
                async with LocalBots(starting, log_dir, "hello") as started:
                    for i, e in zip(commands, starting, strict=True):
                        names[i] = await asked_name(started.addresses[e.name])
        except EntrantError:  # it does not start: the duel says so when it starts it
            pass
        made = {i: _NAME_CHARS.sub("_", n).strip("_")[:MAX_COMMAND_NAME_CHARS] for i, n in names.items() if n}
        return {i: n for i, n in made.items() if n}

    names = asyncio.run(ask())
    out = [replace(e, name=names.get(i, e.name.split("#")[0])) for i, e in enumerate(bots)]
    taken = [e.name for e in out]
    return tuple(
        replace(e, name=f"{e.name}#{i}") if i in unnamed and taken.count(e.name) > 1 else e
        for i, e in enumerate(out)
    )  # fmt: skip
