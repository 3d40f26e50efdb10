"""The ladder's [ladder] table and its pairing: a pure function of the lagged ratings, the present entrants and
the seed (referee/tournament/ladder.py)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from referee.tournament.config import ConfigError, LadderSettings, load
from referee.tournament.ladder import BLOCKS, Meetings, Member, choose

LADDER = """
name = "lad"
table_size = 3
[ladder]
{ladder}
[[entrants]]
name = "a"
policy = "greedy"
[[entrants]]
name = "b"
policy = "counter"
[[entrants]]
name = "c"
policy = "random"
"""


def write(tmp_path: Path, ladder: str, extra: str = "") -> Path:
    p = tmp_path / "l.toml"
    p.write_text(extra + LADDER.format(ladder=ladder))
    return p


def test_the_ladder_table_has_documented_defaults(tmp_path: Path) -> None:
    config = load(write(tmp_path, ""))
    assert config.ladder == LadderSettings()
    assert config.ladder.games is None  # none: until stopped
    assert load(write(tmp_path, "games = 30\ntables = 4\nsigma_target = 1.5")).ladder == LadderSettings(
        tables=4, games=30, sigma_target=1.5
    )
    paced = "games_per_hour = 600\nmax_concurrent = 2\ngames_at_once = 2\ngames_at_once_cap = 3\ndeal_tables = 5"
    assert load(write(tmp_path, paced)).ladder == LadderSettings(
        games_per_hour=600, max_concurrent=2, games_at_once=2, games_at_once_cap=3, deal_tables=5
    )
    assert LadderSettings().games_per_hour == 0 and LadderSettings().games_at_once == 1  # docs/tournaments.md
    # the ladder's settings are part of its identity: another budget is another ladder
    assert load(write(tmp_path, "games = 30")).tournament_id != load(write(tmp_path, "games = 31")).tournament_id


@pytest.mark.parametrize(
    ("ladder", "extra", "key", "words"),
    [
        ("games = 0", "", "ladder.games", "a budget of 0 games plays nothing"),
        ("rounds = 3", "", "ladder.rounds", "unknown key"),
        ("sigma_target = -1", "", "ladder.sigma_target", "above 0"),
        ("games_at_once = 5", "", "ladder.games_at_once", "more than games_at_once_cap (4)"),
        ("games_per_hour = -1", "", "ladder.games_per_hour", ""),
        ("", "deals = 3\n", "deals", "a ladder chooses its tables and deals as it goes"),
    ],
)
def test_a_bad_ladder_table_is_refused_in_plain_words(
    tmp_path: Path, ladder: str, extra: str, key: str, words: str
) -> None:
    with pytest.raises(ConfigError) as e:
        load(write(tmp_path, ladder, extra))
    assert e.value.key == key
    assert words in str(e.value)


def field(n: int, owners: int, seed: int = 1) -> list[Member]:
    rng = random.Random(seed)
    return [Member(f"e{i}", f"o{i % owners}", rng.gauss(25, 4), rng.uniform(1, 8), rng.randrange(30)) for i in range(n)]


def test_no_table_seats_two_entrants_of_one_owner_and_nobody_sits_twice() -> None:
    members = field(60, 7)
    owner = {m.name: m.owner for m in members}
    meetings = Meetings(10)
    for r in range(6):
        tables = choose(r, members, LadderSettings(), 4, 3, meetings)
        assert len(tables) >= 12
        seated = [n for t in tables for n in t]
        assert len(seated) == len(set(seated))
        assert all(len({owner[n] for n in t}) == 4 for t in tables)
        meetings.add_round(tables)


def test_the_round_is_a_pure_function_of_its_inputs() -> None:
    members = field(40, 40)
    a = choose(5, members, LadderSettings(), 4, 9, Meetings(10))
    b = choose(5, list(reversed(members)), LadderSettings(), 4, 9, Meetings(10))
    assert a == b  # the order the entrants are listed in does not matter
    assert choose(5, members, LadderSettings(), 4, 10, Meetings(10)) != a  # the seed breaks ties


def test_new_and_uncertain_entrants_play_first_against_nearby_mu() -> None:
    settled = [Member(f"s{i}", f"s{i}", 10.0 + 3 * i, 1.0, 50) for i in range(40)]  # mu 10 to 127
    new = Member("new", "new", 40.0, 8.3, 0)
    unsure = Member("unsure", "unsure", 70.0, 6.0, 40)
    distances = []
    for seed in range(30):
        tables = choose(0, [*settled, new, unsure], LadderSettings(tables=2), 3, seed, Meetings(10))
        assert len(tables) == 2
        assert "new" in tables[0] and "unsure" in tables[1]  # new first, then the highest sigma
        mu = {m.name: m.mu for m in settled}
        distances += [abs(mu[n] - 40.0) for n in tables[0] if n != "new"]
    everyone = sum(abs(m.mu - 40.0) for m in settled) / len(settled)
    # its opponents are its neighbours in mu, not anyone
    assert sum(distances) / len(distances) < everyone / 2


def test_when_everyone_plays_each_table_is_drawn_from_a_window_of_neighbours_in_mu() -> None:
    """Sixteen entrants well apart in mu, all playing every round at tables of 4, under the default settings: the
    mu order is cut into windows of eight places (two tables), from a place the seed moves, and each window is
    split into two tables at random. So a table's four are never further apart than eight places, the top and the
    bottom of the field never meet, and each entrant meets its near neighbours in turn rather than the same three."""
    members = [Member(f"e{i:02d}", f"e{i:02d}", 10.0 + 2 * i, 1.0, 50) for i in range(16)]
    meetings = Meetings(LadderSettings().meeting_window)
    neighbours = dict.fromkeys(range(15), 0)
    opponents: dict[int, set[int]] = {i: set() for i in range(16)}
    for r in range(20):
        tables = choose(r, members, LadderSettings(), 4, 1, meetings)
        meetings.add_round(tables)
        assert len(tables) == 4
        for t in tables:
            at = sorted(int(n[1:]) for n in t)
            assert at[-1] - at[0] <= 7, t  # inside one window of eight
            for i in range(15):
                neighbours[i] += {i, i + 1} <= set(at)
            for a in at:
                opponents[a] |= set(at) - {a}
    assert min(neighbours.values()) >= 1  # every pair of neighbours met
    assert sum(neighbours.values()) / 15 >= 6  # and in more than a fifth of the rounds (1 in 5 for random tables)
    assert min(len(o) for o in opponents.values()) >= 6  # nobody always meets the same three


def test_choices_stored_before_the_windows_are_made_again_from_blocks_of_neighbours() -> None:
    """The first rule (``BLOCKS``), kept so that a stored choice from before the windows replays as it was made:
    sixteen entrants well apart in mu, all playing every round at tables of 4: each table is a block of four
    neighbours in mu order, cut at a place that moves from round to round (the last block wrapping round)."""
    members = [Member(f"e{i:02d}", f"e{i:02d}", 10.0 + 2 * i, 1.0, 50) for i in range(16)]
    meetings = Meetings(LadderSettings().meeting_window)
    neighbours = dict.fromkeys(range(15), 0)
    blocks = set()
    for r in range(20):
        tables = choose(r, members, LadderSettings(), 4, 1, meetings, rule=BLOCKS)
        meetings.add_round(tables)
        assert len(tables) == 4
        for t in tables:
            at = sorted(int(n[1:]) for n in t)
            assert any({(a + j) % 16 for j in range(4)} == set(at) for a in at), t  # four neighbours
            blocks.add(tuple(at))
            for i in range(15):
                neighbours[i] += {i, i + 1} <= set(at)
    assert min(neighbours.values()) >= 10  # every pair of neighbours met in at least half of the 20 rounds
    assert len(blocks) > 4  # the cuts moved


def test_an_unknown_pairing_rule_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown ladder pairing rule 9: this abluxx knows \(1, 2, 3\)"):
        choose(0, field(8, 8), LadderSettings(), 4, 1, Meetings(10), rule=9)


def test_entrants_who_last_sat_together_sit_together_again_unless_told_not_to() -> None:
    """Four entrants whose last table was one table: by default (nothing in flight) they are seated again; with
    ``no_repeat`` they are not (they wait to mix), whichever rule."""
    members = [Member(n, n, 20.0 + i, 1.0, 12, last=3) for i, n in enumerate("abcd")]
    for rule in (1, 2):
        (table,) = choose(0, members, LadderSettings(), 4, 1, Meetings(10), rule=rule)
        assert sorted(table) == ["a", "b", "c", "d"]
        assert choose(0, members, LadderSettings(), 4, 1, Meetings(10), no_repeat=True, rule=rule) == []


def test_when_a_round_cannot_seat_everyone_the_settled_with_fewest_games_play() -> None:
    """All settled (sigma under sigma_target), one table a round for twelve: the entrant with the fewest games
    scheduled opens it, whatever the seed, and not the one with the highest sigma."""
    settled = [Member(f"e{i:02d}", f"e{i:02d}", 10.0 + 2 * i, 1.0 + i / 20, 40 + i) for i in range(12)]
    for seed in range(30):
        (table,) = choose(0, settled, LadderSettings(tables=1), 3, seed, Meetings(10))
        assert "e00" in table  # 40 games, the fewest; e11 has the highest sigma (1.55) and 51


def test_when_a_round_cannot_seat_everyone_the_settled_keep_playing_evenly() -> None:
    """Sixteen settled entrants, one table of four a round, each round's games counted as they are scheduled:
    after 60 rounds (15 games each on average) nobody has played many more games than anybody else, though the
    opponents of each table are its anchor's neighbours in mu, not the next in line."""
    for seed in range(10):
        games = {f"e{i:02d}": 50 for i in range(16)}
        meetings = Meetings(10)
        for r in range(60):
            members = [Member(n, n, 10.0 + 2 * i, 1.0, games[n]) for i, n in enumerate(games)]
            (table,) = choose(r, members, LadderSettings(tables=1), 4, seed, meetings)
            meetings.add_round([table])
            for n in table:
                games[n] += 1
        assert max(games.values()) - min(games.values()) <= 5, (seed, games)


def most_meetings(cap: int, per_round: int = 0, rounds: int = 10) -> int:
    members = field(24, 24)
    meetings = Meetings(10)
    pairs: dict[frozenset[str], int] = {}
    for r in range(rounds):
        tables = choose(r, members, LadderSettings(max_meetings=cap, tables=per_round), 3, 1, meetings)
        meetings.add_round(tables)
        for t in tables:
            for i, a in enumerate(t):
                for b in t[i + 1 :]:
                    pairs[frozenset((a, b))] = pairs.get(frozenset((a, b)), 0) + 1
    return max(pairs.values())


def test_the_pair_cap_spreads_the_meetings() -> None:
    # with entrants to spare, the cap holds (here the same five entrants open the tables every round, and after
    # 6 rounds one of them has met nearly everyone it may meet: then no table fits and the cap is relaxed)
    assert most_meetings(1, per_round=5, rounds=6) == 1
    assert most_meetings(2, per_round=5) == 2
    # with every entrant seated every round it is relaxed, step by step, and still spreads the meetings
    assert most_meetings(1) < most_meetings(100)


def test_a_ladder_file_from_before_continuous_choices_keeps_its_tournament_id(tmp_path: Path) -> None:
    """The [ladder] keys added since (games_per_hour, games_at_once, ...) at their defaults leave the identity as
    it was, so rerunning an older file resumes its ladder; set, they make another ladder."""
    text = ('name = "lad"\nseed = 4\ntable_size = 3\n[ladder]\ngames = 40\nsigma_target = 2.5\n'
            + "".join(f'[[entrants]]\nname = "{n}"\npolicy = "{p}"\n'
                      for n, p in (("a", "random"), ("b", "greedy"), ("c", "counter"))))  # fmt: skip
    (tmp_path / "l.toml").write_text(text)
    assert load(tmp_path / "l.toml").tournament_id == "lad-316cc648"  # as the referee before them computed it
    (tmp_path / "l.toml").write_text(text.replace("games = 40\n", "games = 40\ngames_at_once = 2\n"))
    assert load(tmp_path / "l.toml").tournament_id != "lad-316cc648"
