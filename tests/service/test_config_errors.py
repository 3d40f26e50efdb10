"""How the service words a refused tournament config: a problem with one key names it as ``config.KEY``; a
config with several problems is one line ``config: N problems:`` and a line for each (no stray empty key)."""

from __future__ import annotations

import pytest

from referee.errors import BadInput
from referee.service.tournaments import checked


def test_one_problem_names_its_key() -> None:
    with pytest.raises(BadInput) as e:
        checked(
            {
                "name": "x",
                "table_size": 9,
                "entrants": [{"name": "a", "policy": "random"}, {"name": "b", "policy": "greedy"}],
            }
        )
    assert str(e.value).startswith("config.table_size: ")


def test_several_problems_are_one_message_without_an_empty_key() -> None:
    with pytest.raises(BadInput) as e:
        checked(
            {
                "name": "bad name!",
                "table_size": 9,
                "entrants": [{"name": "a", "policy": "random"}, {"name": "b", "policy": "nosuch"}],
            }
        )
    text = str(e.value)
    assert text.startswith("config: ") and "problems:" in text.splitlines()[0]
    assert "config.:" not in text
