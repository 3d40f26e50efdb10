"""``abluxx bot NAME``: serve one of the example bots (clients/python/abluxx_bot/examples.py) over gRPC."""

from __future__ import annotations


def register(sub) -> None:
    from abluxx_bot.examples import REGISTRY

    p = sub.add_parser("bot", help="serve an example bot (random, greedy, counter) over gRPC")
    p.add_argument("name", help=f"which example bot: {', '.join(sorted(REGISTRY))}, or a noisy one (greedy+eps0.2)")
    p.add_argument("--port", type=int, required=True, help="port to listen on; 0 picks a free one")
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
    # before gRPC, which would log and raise its own words (a unix: socket's folder is gRPC's to judge)
    if not args.host.startswith("unix:") and (problem := listen_problem(args.host, args.port)):
        raise BadInput(problem)
    return serve(lambda: make(args.seed), args.port, args.host)
