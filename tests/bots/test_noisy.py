"""Noisy built-in policies (docs/bots.md): ``greedy+eps0.2`` is greedy with a uniform random legal action on 20%
of its decisions. They give the A/A checks of the duel (docs/duel.md) bots whose games vary with their seed."""

from __future__ import annotations

import asyncio

import pytest

from referee.cli import main
from referee.duel.simulate import play_pairs, settings_for
from referee.log import configure
from referee.tournament.config import ConfigError, parse


@pytest.fixture(autouse=True)
def _quiet() -> None:
    configure("error")


def _diffs(policy: str, pairs: int) -> list[float]:
    return _diffs_between(policy, policy, pairs)


def _diffs_between(a: str, b: str, pairs: int, seed: int | None = None) -> list[float]:
    return asyncio.run(play_pairs(settings_for(a, b), pairs, seed=seed))


def test_greedy_with_noise_plays_differently_per_seed_where_greedy_does_not() -> None:
    """Greedy ignores its seed: two seeds of it score the same on the same cards (every paired difference 0).
    greedy+eps0.2 seeded twice plays two different games on most deals."""
    assert _diffs("greedy", 6) == [0.0] * 6
    noisy = _diffs("greedy+eps0.2", 12)
    assert sum(d != 0 for d in noisy) >= 6, noisy


def test_zero_noise_is_the_bot_itself() -> None:
    """eps 0 never replaces a choice: greedy+eps0 against greedy scores the same on the same cards."""
    settings = settings_for("greedy+eps0", "greedy")
    assert asyncio.run(play_pairs(settings, 6)) == [0.0] * 6


def test_hoard_is_the_floor_of_a_graded_field_and_noise_lifts_it_towards_random() -> None:
    """hoard, the deliberately weak example (docs/bots.md), loses to random on every one of 12 paired deals, and
    hoard+eps0.5 lies between them on average: the weak end of bench_ladder's wide graded field is ordered. Seeded
    deals, the same every run."""
    assert all(d < 0 for d in _diffs_between("hoard", "random", 12, seed=12))
    assert sum(_diffs_between("hoard", "hoard+eps0.5", 12, seed=12)) < 0
    assert sum(_diffs_between("hoard+eps0.5", "random", 12, seed=12)) < 0


def test_noisy_policies_on_the_command_line_and_in_a_tournament_file(tmp_path, capsys) -> None:
    assert main(["match", "greedy+eps0.2", "counter+eps0.1", "--data", str(tmp_path), "--seed", "3"]) == 0
    assert "greedy+eps0.2" in capsys.readouterr().out
    def config(policy: str) -> dict:
        return {"name": "n", "entrants": [{"name": "a", "policy": policy}, {"name": "b", "policy": "random"}]}

    assert parse(config("counter+eps0.5"), "<test>").entrants[0].policy == "counter+eps0.5"
    for bad in ("greedy+eps1.5", "greedy+eps", "nobot+eps0.1", "fallback+eps0.1", "greedy+eps-1"):
        with pytest.raises(ConfigError, match=r"greedy\+eps0\.2"):
            parse(config(bad), "<test>")
        assert main(["match", bad, "counter", "--data", str(tmp_path)]) == 2
