"""The referee's packages form layers (docs/architecture.md): no module imports from a package above its own.

Every import is read with ``ast``, including those inside functions and under ``TYPE_CHECKING``: a loop the
file-level tools miss (the store importing tournament types while tournament imports the store) is a loop all the
same.
"""

from __future__ import annotations

import ast
from pathlib import Path

import referee

ROOT = Path(referee.__file__).parent

# Bottom to top. A package may import its own modules and those of packages in lower tiers, never one in its own
# tier or above: siblings stay independent. Keep in step with docs/architecture.md ("duel" is placed ahead of the
# package issue 14 adds).
TIERS: list[set[str]] = [
    # the rules; protobuf code; terminal text; error types; stats; the collector's settings
    {"engine", "proto", "terminal", "errors", "stats", "gc_policy"},
    {"wire", "log", "netaddr"},  # engine <-> protobuf; structured logs; addresses to dial or listen on
    {"records"},  # the game-record format
    {"match", "rating"},  # one game; TrueSkill
    {"store"},  # SQLite persistence, with its own row types
    {"tournament"},  # schedules, runs, standings
    {"view", "duel"},  # HTML viewer and report; duels
    {"service"},  # the gRPC service
    {"web"},  # the web site, served beside the service from its loop and store
    {"cli"},  # the abluxx command
]
TIER = {name: i for i, names in enumerate(TIERS) for name in names}


def imported(path: Path, root: Path) -> set[tuple[int, str]]:
    """(line, package) for every referee package that ``path`` (a module under ``root``) imports."""
    here = ("referee", *path.relative_to(root).parts[:-1])  # the package a relative import starts from
    found: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            names = [module, *(f"{module}.{a.name}" for a in node.names)]  # from referee import wire
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.JoinedStr) and arg.values:  # f"referee.cli.{name}"
                arg = arg.values[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names = [arg.value.rstrip(".")]
        for name in names:
            parts = name.split(".")
            if parts[0] == "referee" and len(parts) > 1:
                found.add((node.lineno, parts[1].removesuffix(".py")))
    return found


def upward_imports(root: Path = ROOT) -> list[str]:
    """Every import of a package in the importer's own tier or above, as ``path:line: ...``."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        own = rel.parts[0].removesuffix(".py")
        if own in ("proto", "__init__"):
            continue  # generated code; the package's version string
        if own not in TIER:
            problems.append(f"{rel}:1: referee.{own} has no place in the layers (add it to TIERS and the docs)")
            continue
        for line, other in sorted(imported(path, root)):
            if other != own and other in TIER and TIER[other] >= TIER[own]:
                problems.append(f"{rel}:{line}: {own} (tier {TIER[own]}) imports referee.{other} (tier {TIER[other]})")
    return problems


def test_no_package_imports_one_above_it() -> None:
    assert upward_imports() == []


def test_the_check_sees_imports_inside_functions_and_under_type_checking(tmp_path: Path) -> None:
    """A planted store that imports the tournament two hidden ways is caught on both lines."""
    store = tmp_path / "store"
    store.mkdir()
    (store / "__init__.py").write_text("")
    (store / "sqlite.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from referee.tournament.config import TournamentConfig\n"
        "def slots():\n"
        "    from referee.tournament import schedule\n"
        "    return schedule\n"
    )
    (tmp_path / "wire.py").write_text("import importlib\nimportlib.import_module('referee.match.runner')\n")
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "core.py").write_text("from .. import log\nfrom ..terminal import printable\n")
    found = upward_imports(tmp_path)
    assert [p.split(": ")[0] for p in found] == [
        "engine/core.py:1",
        "engine/core.py:2",
        "store/sqlite.py:3",
        "store/sqlite.py:5",
        "wire.py:2",
    ]
