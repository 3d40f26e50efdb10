"""Every mistake of a tournament file at once: check it, set the mistake aside, check the rest again.

A file with four wrong keys used to report only the first, so fixing it took four runs.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any, TypeVar

from referee.errors import BadInput

T = TypeVar("T")
MAX_PROBLEMS = 20  # a config's mistakes reported at once, at most


class ConfigError(BadInput):
    """A configuration that cannot run. The message names the file, the key and the reason; a problem with the
    file as a whole has no key (its reason names the file)."""

    local = True  # it names files, folders or bot addresses

    def __init__(self, source: str, key: str, reason: str) -> None:
        super().__init__(f"{source}: {key}: {reason}" if key else reason)
        self.source, self.key, self.reason = source, key, reason


def every_problem(check: Callable[[dict[str, Any]], T], data: dict[str, Any], source: str) -> T:
    """``check(data)``'s result; or ConfigError naming every mistake it finds (up to MAX_PROBLEMS), one line each:
    after each one the wrong value is set aside (a wrong key dropped, so its default applies; a wrong entrant
    replaced by a placeholder) and the rest checked again, until the rest is right or a mistake cannot be set aside
    (a file-level one, or one that comes back). One mistake is raised as it is."""
    problems: list[ConfigError] = []
    rest = copy.deepcopy(data)
    while True:
        try:
            result = check(rest)
        except ConfigError as e:
            if any(p.key == e.key for p in problems):  # a consequence of setting an earlier one aside
                break
            problems.append(e)
            if len(problems) >= MAX_PROBLEMS or not set_aside(rest, e.key):
                break
            continue
        if not problems:
            return result
        break
    if len(problems) == 1:
        raise problems[0]
    raise ConfigError(source, "", f"{len(problems)} problems:\n" + "\n".join(f"  {p}" for p in problems))


def set_aside(data: dict[str, Any], key: str) -> bool:
    """Drop the value at ``key`` (``time_control.grace``, ``seed``) from ``data`` so that its default applies, or
    replace the entrant that ``entrants[i]...`` names by a placeholder; False when there is nothing to set aside."""
    if m := re.fullmatch(r"entrants\[(\d+)\](\..*)?", key):
        entrants = data.get("entrants")
        if not isinstance(entrants, list) or int(m[1]) >= len(entrants):
            return False
        entrants[int(m[1])] = {"name": f"set-aside-{m[1]}", "policy": "random"}
        return True
    *path, leaf = key.split(".") if key else [""]
    table: Any = data
    for part in path:
        table = table.get(part) if isinstance(table, dict) else None
    if not isinstance(table, dict) or leaf not in table or key == "entrants":
        return False
    del table[leaf]
    return True
