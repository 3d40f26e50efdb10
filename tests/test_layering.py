"""The referee's packages form layers (docs/architecture.md): no module imports from a package above its own, and
no two modules of one package import each other, directly or round a loop.

Every import is read with ``ast``, including those inside functions and under ``TYPE_CHECKING``: a loop the
file-level tools miss (the store importing tournament types while tournament imports the store) is a loop all the
same.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import referee

ROOT = Path(referee.__file__).parent

# Bottom to top. A package may import its own modules and those of packages in lower tiers, never one in its own
# tier or above: siblings stay independent. Keep in step with docs/architecture.md ("duel" is placed ahead of the
# package issue 14 adds).
TIERS: list[set[str]] = [
    # the rules; protobuf code; terminal text; error types; the empirical likelihood; the collector's settings and
    # the event loop; ending a task from outside it
    {"engine", "proto", "terminal", "errors", "likelihood", "gc_policy", "event_loop", "tasks"},
    # engine <-> protobuf; structured logs; addresses; Prometheus metrics; the duel's statistics
    {"wire", "log", "netaddr", "metrics", "stats"},
    {"records"},  # the game-record format
    {"match", "rating"},  # one game; TrueSkill
    # SQLite persistence, with its own row types; where games are played (worker backends, bot processes). Siblings:
    # the fleet never opens the store (the coordinator above keeps the results and the deal keys), and the store
    # never learns how a game was played
    {"store", "fleet"},
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


def module_name(path: Path, root: Path) -> str:
    """``referee.a.b`` for ``root/a/b.py``; a package's ``__init__.py`` keeps its name (``referee.a.__init__``)."""
    return ".".join(("referee", *path.relative_to(root).with_suffix("").parts))


def module_imports(path: Path, root: Path, modules: set[str]) -> Iterator[tuple[int, str]]:
    """(line, module) for every module of ``modules`` that ``path`` imports, anywhere in the file: ``from . import x``
    is module ``x``, ``from .x import y`` is ``x`` (or ``x.y`` when that is a module), and a package is its
    ``__init__``."""
    here = ("referee", *path.relative_to(root).parts[:-1])

    def resolve(name: str) -> str | None:
        if name in modules:
            return name
        return f"{name}.__init__" if f"{name}.__init__" in modules else None

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        found: list[str | None] = []
        if isinstance(node, ast.Import):
            found = [resolve(a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found = [resolve(f"{module}.{a.name}") or resolve(module) for a in node.names]
        for name in found:
            if name is not None:
                yield node.lineno, name


def import_circles(root: Path = ROOT) -> list[str]:
    """Every import circle among the modules of one package (its ``__init__`` included), as the modules of the
    circle joined by `` -> ``: modules that import each other, directly or round a loop, anywhere in the file."""
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py")) if "proto" not in p.relative_to(root).parts}
    modules = set(paths)
    package = {m: m.rsplit(".", 1)[0] for m in modules}
    edges = {
        m: sorted({n for _, n in module_imports(p, root, modules) if n != m and package[n] == package[m]})
        for m, p in paths.items()
    }
    circles: list[str] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in edges[m]:
            if state.get(n) == 1:
                circles.append(" -> ".join([*path[path.index(n) :], n]))
            elif n not in state:
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(modules):
        if m not in state:
            visit(m)
    return circles


def test_no_import_circle_inside_a_package() -> None:
    assert import_circles() == []


def test_the_circle_check_catches_a_planted_circle(tmp_path: Path) -> None:
    """A package whose modules import each other round a loop (one of them inside a function, one through the
    package's ``__init__``) is caught; the same modules in a line are not."""
    pkg = tmp_path / "tournament"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .runner import run\n")
    (pkg / "runner.py").write_text("from .workers import open_games\ndef run(): ...\n")
    (pkg / "workers.py").write_text("def open_games():\n    from referee.tournament.worker import play\n")
    (pkg / "worker.py").write_text("from referee.tournament import run\ndef play(): ...\n")
    (pkg / "config.py").write_text("from . import schedule\n")
    (pkg / "schedule.py").write_text("import referee.tournament.config\n")
    (tmp_path / "duel").mkdir()
    (tmp_path / "duel" / "runner.py").write_text("from referee.tournament import runner\n")  # across packages: fine
    assert import_circles(tmp_path) == [
        "referee.tournament.__init__ -> referee.tournament.runner -> referee.tournament.workers -> "
        "referee.tournament.worker -> referee.tournament.__init__",
        "referee.tournament.config -> referee.tournament.schedule -> referee.tournament.config",
    ]
    (pkg / "worker.py").write_text("def play(): ...\n")
    (pkg / "schedule.py").write_text("")
    assert import_circles(tmp_path) == []
