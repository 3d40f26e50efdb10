"""scripts/ladder_sim.py (docs/tournaments.md, "What the pairing cannot fix"): the bench's convergence on games
drawn from TrueSkill's own model, to price the pairing's knowledge in seconds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _sim(*args: str) -> dict:
    out = subprocess.run([sys.executable, str(SCRIPTS / "ladder_sim.py"), "--json", "--jobs", "1", *args],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_pairing_by_the_true_order_is_worse_than_by_the_ladders_own_ratings() -> None:
    """The finding the docs report: the leaderboard learns the order of a graded field sooner when the ladder seats
    entrants near in its own ratings than near in the true order (which never gets there in 400 games: 4.8 times
    random tables' games). Seeded games, the same every run. That the ladder also beats random tables takes more
    seeds than a test can afford: over 24 seeds of this field its ratio was 0.80, 90% interval 0.68-0.95
    (docs/ladders.md), but a seed's figure moves by a third either way, and seeds 1-4 give 1.05 (with the draw
    probability 0.05 they gave under 1). So here only what 4 seeds can show: well under the true order's 4.8."""
    common = ("--seeds", "4", "--entrants", "16", "--span", "20", "--budget", "400")
    ladder, truth = _sim(*common), _sim(*common, "--pairing", "true-order")
    assert ladder["games_to_tau90_uniform"] == truth["games_to_tau90_uniform"]  # the same baseline games
    assert ladder["games_to_tau90"] < truth["games_to_tau90"] / 2, (ladder, truth)
    assert ladder["ratio"] < 1.5 < truth["ratio"], (ladder, truth)


def test_model_games_are_a_seeded_permutation_of_places() -> None:
    sys.path.insert(0, str(SCRIPTS))
    try:
        import ladder_sim
    finally:
        sys.path.remove(str(SCRIPTS))
    mus = [30.0, 20.0, 10.0, 0.0]
    seats = ("e02-x", "e00-x", "e03-x", "e01-x")
    places = ladder_sim.model_game(mus, seats, 7, "g1")
    assert sorted(places) == [1, 2, 3, 4]
    assert places == ladder_sim.model_game(mus, seats, 7, "g1")
    # 6 beta from e00 to e03: over 200 games e00 beats e03 nearly always
    wins = sum(ladder_sim.model_game(mus, seats, 7, f"g{i}")[1] < ladder_sim.model_game(mus, seats, 7, f"g{i}")[2]
               for i in range(200))  # fmt: skip
    assert wins > 190


def test_bad_arguments_are_refused() -> None:
    for args, says in ((["--entrants", "10"], "multiple of 4"), (["--lag", "1"], "unrecognized arguments")):
        out = subprocess.run([sys.executable, str(SCRIPTS / "ladder_sim.py"), *args], capture_output=True,
                             text=True, timeout=60)  # fmt: skip
        assert out.returncode == 2 and says in out.stderr, out.stderr


def test_the_calibrations_games_tie_within_the_draw_margin_as_the_model_does() -> None:
    """The calibration's games are TrueSkill's model's, ties included: between equal entrants some neighbouring
    places tie (a generator without ties made the fit's sigma look over-confident), and places are competition
    ranks (1, 1, 3, 4: a tie takes the places it covers)."""
    import itertools
    import random

    sys.path.insert(0, str(SCRIPTS))
    try:
        import rating_calibration
    finally:
        sys.path.remove(str(SCRIPTS))
    games = rating_calibration.games_of([25.0] * 8, 400, random.Random(3))
    tied = sum(len(set(places)) < 4 for _, places in games)
    assert 10 < tied < 50, tied  # about 1 in 18 of 4-seat games between equals hold a tie (22 here; draw prob. 0.01)
    for _, places in games:
        ranked = sorted(places)
        steps = enumerate(itertools.pairwise(ranked), 1)
        assert ranked[0] == 1 and all(p in (q, i + 1) for i, (q, p) in steps), places
