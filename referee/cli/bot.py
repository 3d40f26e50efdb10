"""``abluxx bot NAME``: serve one of the example bots (clients/python/abluxx_bot/examples.py) over gRPC, or with
``--connect`` dial in to a referee service with it (abluxx_bot.connect, docs/dial-in.md)."""

from __future__ import annotations

import os
from pathlib import Path


def register(sub) -> None:
    from abluxx_bot.examples import REGISTRY

    p = sub.add_parser("bot", help="serve an example bot (random, greedy, counter) over gRPC, or dial in")
    p.add_argument("name", help=f"which example bot: {', '.join(sorted(REGISTRY))}, or a noisy one (greedy+eps0.2)")
    p.add_argument("--port", type=int, help="port to listen on; 0 picks a free one")
    p.add_argument(
        "--connect", metavar="SERVER", help="dial in to the referee at SERVER (HOST:PORT) instead of listening"
    )
    p.add_argument("--token", default=os.environ.get("ABLUXX_TOKEN"), help="with --connect: the author's token "
                   "(default $ABLUXX_TOKEN)")  # fmt: skip
    p.add_argument("--as", dest="entrant", default="", help="with --connect: the entrant's name (default NAME)")
    p.add_argument("--games-at-once", type=int, default=1, help="with --connect: games it plays at once (default 1)")
    p.add_argument("--tls", action="store_true", help="with --connect: TLS, trusting the system's roots")
    p.add_argument("--tls-ca", type=Path, help="with --connect: TLS, trusting this PEM certificate")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1), or unix:PATH for a "
                   "Unix socket (ABLUXX_LISTEN, set by a sandbox, overrides both)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed for the bot's choices (default 0)")
    p.set_defaults(func=run)


def run(args) -> int:
    from abluxx_bot import serve
    from abluxx_bot.examples import REGISTRY, factory

    from referee.errors import BadInput
    from referee.netaddr import listen_problem

    make = factory(args.name)
    if make is None:
        raise BadInput(f"no example bot {args.name!r}: {', '.join(sorted(REGISTRY))}, or NAME+epsP (greedy+eps0.2)")
    if args.connect is not None:
        return _connect(args, lambda: make(args.seed))
    unix = args.host.startswith("unix:") or os.environ.get("ABLUXX_LISTEN", "").startswith("unix:")
    if args.port is None and not unix:
        raise BadInput("give --port P to serve the bot, or --connect SERVER --token T to dial in to a referee")
    # before gRPC, which would log and raise its own words (a unix: socket's folder is gRPC's to judge)
    if not unix and (problem := listen_problem(args.host, args.port)):
        raise BadInput(problem)
    return serve(lambda: make(args.seed), args.port or 0, args.host)


def _connect(args, make) -> int:
    """``--connect``: dial in to a referee (abluxx_bot.connect) instead of listening."""
    from abluxx_bot import connect

    from referee.errors import BadInput
    from referee.netaddr import dial_problem

    if problem := dial_problem(args.connect):
        raise BadInput(f"--connect: {problem}")
    if not args.token:
        raise BadInput("--connect needs the author's token: --token T or $ABLUXX_TOKEN")
    if args.port is not None:
        raise BadInput("give --port or --connect, not both")
    name = args.entrant or args.name
    return connect(make, args.connect, args.token, name=name, games_at_once=args.games_at_once, tls=args.tls,
                   tls_ca=args.tls_ca)  # fmt: skip
