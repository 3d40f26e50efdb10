"""Duels between built-in policies played in-process, to validate the test (docs/duel.md, "Validation"): A/A
error rates, A/B power and games used, and the variance that pairing saves. The games are real games of the
match runner (the engine, the bot kit's policies, the referee's checks), without records or gRPC.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from referee.match import ChannelPool
from referee.stats import Sequential, Sprt, Verdict, variance
from referee.tournament.config import EntrantConfig
from referee.tournament.deals import fresh_seed

from .runner import MEASURE_DEFAULT, DuelSettings, InProcess, PairPlan, default_field, play_pair


def settings_for(candidate: str, baseline: str, table_size: int = 2, test: Sprt | None = None,
                 max_games: int = 4000, measure: str = "") -> DuelSettings:  # fmt: skip
    """A duel of two built-in policies (the candidate named ``cand-POLICY``, the baseline ``base-POLICY``)."""
    return DuelSettings(
        candidate=EntrantConfig(name=f"cand-{candidate}", policy=candidate),
        baseline=EntrantConfig(name=f"base-{baseline}", policy=baseline),
        field=default_field(table_size),
        table_size=table_size,
        max_games=max_games,
        test=test or MEASURE_DEFAULT,
        measure=measure,
    )


async def _pair(
    settings: DuelSettings, i: int, pool: ChannelPool, deck_seed: int | None = None
) -> tuple[float, list[int], list[int]]:
    """One pair's difference, and the candidate's and the baseline's scores by the seats they held."""
    plan = PairPlan(i, fresh_seed() if deck_seed is None else deck_seed, i % settings.table_size, f"sim-{i}")
    row = await play_pair(settings, plan, InProcess(pool), "sim")
    first, second = row.games
    mine = [s for s, r in enumerate(first["roles"]) if r in ("candidate", "baseline")]
    # seat s: who held it in the first game and who in the second
    cand = [first["scores"][s] if first["roles"][s] == "candidate" else second["scores"][s] for s in mine]
    base = [second["scores"][s] if first["roles"][s] == "candidate" else first["scores"][s] for s in mine]
    return row.diff, cand, base


async def play_pairs(settings: DuelSettings, pairs: int, seed: int | None = None) -> list[float]:
    """The paired differences of ``pairs`` pairs on fresh deals, in order; with ``seed``, deals drawn from it (the
    same pairs every time: the built-in policies' seeds follow from the deal)."""
    rng = random.Random(seed)
    async with ChannelPool() as pool:
        return [(await _pair(settings, i, pool, None if seed is None else rng.getrandbits(63)))[0]
                for i in range(pairs)]  # fmt: skip


@dataclass(frozen=True)
class DuelOutcome:
    verdict: Verdict
    games: int


async def duel(settings: DuelSettings, pool: ChannelPool) -> DuelOutcome:
    """One duel to its verdict, pairs in order, as ``abluxx duel`` plays it (one pair at a time)."""
    run = Sequential(settings.test, settings.max_pairs)
    while not run.done:
        run.add((await _pair(settings, run.n, pool))[0])
    return DuelOutcome(run.verdict, 2 * run.n)


async def duels(settings: DuelSettings, count: int) -> list[DuelOutcome]:
    async with ChannelPool() as pool:
        return [await duel(settings, pool) for _ in range(count)]


@dataclass(frozen=True)
class Pairing:
    """What pairing saves: the variance of the paired difference against the unpaired one (the candidate's score
    on one deal minus the baseline's on another, seat for seat), over ``pairs`` pairs."""

    pairs: int
    mean_paired: float
    sd_paired: float
    sd_unpaired: float

    @property
    def ratio(self) -> float:
        """How many times more games an unpaired test needs for the same power (variance ratio)."""
        return (self.sd_unpaired / self.sd_paired) ** 2 if self.sd_paired else math.inf


async def pairing(settings: DuelSettings, pairs: int) -> Pairing:
    async with ChannelPool() as pool:
        played = [await _pair(settings, i, pool) for i in range(pairs)]
    paired = [d for d, _, _ in played]
    unpaired = []
    for i in range(pairs - 1):  # pair i's candidate games against pair i+1's baseline games: independent deals
        cand, base = played[i][1], played[i + 1][2]
        unpaired.append(sum(c - b for c, b in zip(cand, base, strict=True)) / len(cand))
    return Pairing(pairs, sum(paired) / pairs, math.sqrt(variance(paired)), math.sqrt(variance(unpaired)))


def shifted(pool: Sequence[float], mean: float, keep_ties: bool = False) -> list[float]:
    """``pool`` moved to have mean ``mean``: every value by the same shift; or, with ``keep_ties``, the ties (0)
    kept and the differing pairs moved alone, so far that the whole pool's mean is ``mean`` (a patch that changes
    play on few deals gains all it gains there)."""
    differing = [d for d in pool if d != 0] if keep_ties else list(pool)
    if not differing:
        raise ValueError("a pool of ties only cannot be moved to another mean with its ties kept")
    shift = (mean - statistics.fmean(pool)) * len(pool) / len(differing)
    return [d + shift if d != 0 or not keep_ties else 0.0 for d in pool]


def bootstrap_duels(
    pool: Sequence[float], mean: float, test: Sprt, count: int, seed: int, max_pairs: int = 2000,
    keep_ties: bool = False,
) -> list[DuelOutcome]:  # fmt: skip
    """``count`` duels whose pairs are drawn at random (with replacement, seeded) from ``pool``, real pairs'
    differences shifted to have mean ``mean`` (``shifted``): the shape of real differences (their spread, skew and
    ties) at a true mean the test should call H0 (0) or H1 (M). Each runs the duel's own test (stats.Sequential)."""
    values = shifted(pool, mean, keep_ties)
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        run = Sequential(test, max_pairs)
        while not run.done:
            run.add(rng.choice(values))
        out.append(DuelOutcome(run.verdict, 2 * run.n))
    return out
