"""``abluxx demo``: the README's main job."""

from __future__ import annotations

import random

from referee.engine import apply, deck_from_seed, new_game, placings, scores
from referee.engine.words import say_event


def register(sub) -> None:
    p = sub.add_parser("demo", help="play a seeded self-play game and print it")
    p.add_argument("--seed", type=int, default=1, help="deal and choice seed (default 1)")
    p.add_argument("--players", type=int, default=4, choices=range(2, 6), help="2 to 5 (default 4)")
    p.set_defaults(func=run)


def run(args) -> int:
    rng = random.Random(args.seed)
    state = new_game(deck_from_seed(args.seed), args.players)
    print(f"seed {args.seed}, {args.players} players, random legal moves")
    while not state.over:
        state, events = apply(state, rng.choice(state.legal))
        for event in events:
            print("  " + say_event(event))
    sizes = [state.hand_size(i) for i in range(state.players)]
    final = scores(state)
    for seat, place in sorted(enumerate(placings(final, sizes)), key=lambda x: x[1]):
        print(f"place {place}: seat {seat}  score {final[seat]:+d}  hand {sizes[seat]}")
    return 0
