"""What the docs say agrees with the code: the policies `abluxx match --help` lists are the README's, and the
duel's measured game counts are possible at the duel's own minimum of pairs."""

from __future__ import annotations

import re
from pathlib import Path

from referee.match import builtin_names
from referee.stats import MIN_PAIRS

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_names_every_policy_match_help_lists() -> None:
    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| `abluxx match "))
    assert [name for name in builtin_names() if f"`{name}`" not in row] == []


def test_every_median_the_duel_pages_quote_is_possible_at_its_minimum_of_pairs() -> None:
    # a verdict needs MIN_PAIRS pairs, two games each: a median below that was measured under an older minimum
    text = (ROOT / "docs" / "duel.md").read_text() + (ROOT / "docs/notes/2026-12-03-duel-error-rates.md").read_text()
    quoted = [(int(n), rest) for n, rest in re.findall(r"median (\d+) games([^|]*)", text)]
    assert quoted
    stale = [(n, rest) for n, rest in quoted if n < 2 * MIN_PAIRS and f"MIN_PAIRS {MIN_PAIRS}" not in rest]
    assert stale == [], f"medians below {2 * MIN_PAIRS} games, the fewest a verdict needs: {stale}"


def test_the_service_walkthrough_promises_the_games_its_tournament_makes() -> None:
    """docs/service.md's cup.toml: alice submits both bots, so across tables they never share one."""
    from referee.tournament.schedule import size

    text = (ROOT / "docs" / "service.md").read_text()
    cup = text.split("cat > cup.toml <<'EOF'\n", 1)[1].split("\nEOF", 1)[0]
    deals = int(re.search(r"^deals = (\d+)", cup, flags=re.M).group(1))
    submitted_by_alice = re.findall(r"^abluxx submit (\S+) ", text, flags=re.M)
    owners = [("alice" if m.group(1) in submitted_by_alice else m.group(1)) if m else "?"
              for m in (re.search(r'(?:bot|name) = "(\S+)"', e) for e in cup.split("[[entrants]]")[1:])]  # fmt: skip
    promised = int(re.search(r"# created cup-\w+: (\d+) games", text).group(1))
    assert promised == size(len(owners), 2, 0, deals, "across", owners)
    assert f"0/{promised} games" in text and f"finished, {promised}/{promised} games" in text
