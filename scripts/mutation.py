#!/usr/bin/env python3
"""Mutation testing of named modules with mutmut 3 (docs/development.md, "Mutation testing").

    python3 scripts/mutation.py MODULE...      # names from scripts/mutation.toml, e.g. deals schedule
    python3 scripts/mutation.py --all          # every module listed there
    python3 scripts/mutation.py --list         # the names
    python3 scripts/mutation.py --check        # the config still names existing files, functions, tests and lines

Each module runs in its own scratch copy of the tracked tree (``.mutation/NAME/``, wiped first), whose
``pyproject.toml`` gets a ``[tool.mutmut]`` table naming only that file and only the tests listed for it: mutmut
runs those once to learn which tests reach which function, then, for every mutant, only the tests that reach it.
``PYTHONPATH`` points at mutmut's ``mutants/`` copy, so bot and worker processes that a test spawns import the
mutated code too. The kill rate leaves out the equivalent mutants explained in ``scripts/mutation.toml``; every
other survivor is printed with its diff. One JSON line per module goes to stdout; the exit status is 1 when a module
is under its ``min_rate``.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import fnmatch
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "scripts" / "mutation.toml"
SCRATCH = ROOT / ".mutation"
KILLED = {"killed", "timeout", "caught by type check", "segfault"}


# Run at the start of every process a test spawns (PYTHONPATH): while mutmut collects which tests reach which
# function, a mutated function called in such a process asks for mutmut's config, which mutmut reads from the
# working directory's pyproject.toml; a spawned process runs elsewhere (a test's tmp_path), so it is read here.
SITECUSTOMIZE = """\
import os
if os.environ.get("MUTANT_UNDER_TEST") == "stats":
    try:
        import mutmut.configuration as _c
        _cwd = os.getcwd()
        os.chdir({work!r})
        try:
            _c.config()
        finally:
            os.chdir(_cwd)
    except Exception:
        pass
"""


# A pytest plugin on the same path, loaded for every test run (``-p mutation_order``): a mutant's tests run fastest
# first, by the durations mutmut measured in its first run. mutmut passes a mutant's tests as an unordered set and
# stops at the first failure (-x); a mutant that a 0.1 s test kills then no longer waits for a 30 s test that
# happened to come first (the worker replay's real worker processes). Tests it has no duration for run first.
ORDER = ["-p", "mutation_order"]
ORDER_PLUGIN = """\
import json


def pytest_collection_modifyitems(session, config, items):
    try:
        with open("mutmut-stats.json") as f:  # in mutants/, where mutmut runs the tests
            durations = json.load(f)["duration_by_test"]
    except (OSError, ValueError, KeyError):
        return  # mutmut's first run, which measures them
    items.sort(key=lambda item: durations.get(item.nodeid, 0.0))
"""


def load() -> dict[str, Any]:
    with CONFIG.open("rb") as f:
        return tomllib.load(f)


def parts(module: dict[str, Any]) -> list[dict[str, Any]]:
    """What a module mutates: ``[{"file": ..., "functions": [...]}]``, from its ``file`` and ``functions`` or from its
    ``[[modules.NAME.mutate]]`` list (a module that spans files, such as the worker replay)."""
    if "mutate" in module:
        return [{"file": m["file"], "functions": m.get("functions", ["*"])} for m in module["mutate"]]
    return [{"file": module["file"], "functions": module.get("functions", ["*"])}]


def functions_of(path: Path) -> set[str]:
    """The functions and methods of a module as mutmut names them (``x_name``, ``xǁClassǁmethod``)."""
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(f"x_{node.name}")
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(f"xǁ{node.name}ǁ{item.name}")
    return names


def problems(cfg: dict[str, Any], root: Path = ROOT) -> list[str]:
    """What in ``scripts/mutation.toml`` no longer fits the code: a file, a function pattern or a test path that
    names nothing, an equivalent mutant whose lines are gone. (Code moves; a stale name would quietly mutate
    nothing, or an equivalent entry would hide nothing.)"""
    out = []
    for name, module in cfg["modules"].items():
        for part in parts(module):
            path = root / part["file"]
            if not path.is_file():
                out.append(f"{name}: no file {part['file']}")
                continue
            have = functions_of(path)
            out += [f"{name}: {pattern!r} names no function of {part['file']}" for pattern in part["functions"]
                    if not any(fnmatch.fnmatchcase(f, pattern) for f in have)]  # fmt: skip
        out += [f"{name}: no test file {t}" for t in module["tests"] if not (root / t.split("::")[0]).is_file()]
    for e in cfg.get("equivalent", []):
        path = root / e["file"]
        if not path.is_file() or e["function"] not in functions_of(path):
            out.append(f"equivalent: no function {e['function']} in {e['file']}")
            continue
        lines = {ln.strip() for ln in path.read_text().splitlines()}
        out += [f"equivalent ({e['function']}): the line {ln!r} is no longer in {e['file']}"
                for ln in e["before"].splitlines() if ln not in lines]  # fmt: skip
    return out


def scratch_copy(name: str) -> Path:
    """A fresh copy of the tracked files (as they are in the work tree) in ``.mutation/NAME``."""
    work = SCRATCH / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.split(b"\0")
    for raw in files:
        if not raw:
            continue
        rel = Path(raw.decode())
        src = ROOT / rel
        if rel.parts[0] == ".mutation" or not src.is_file():
            continue
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, work / rel)
    return work


def toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def configure(work: Path, module: dict[str, Any], common: dict[str, Any]) -> None:
    """Append this module's ``[tool.mutmut]`` table to the scratch copy's pyproject.toml."""
    table = [
        "",
        "[tool.mutmut]",
        f"source_paths = {toml_list(['referee'])}",
        f"only_mutate = {toml_list([p['file'] for p in parts(module)])}",
        f"also_copy = {toml_list(common['also_copy'])}",
        f"pytest_add_cli_args = {toml_list([*common['pytest_args'], *ORDER, *module.get('pytest_args', [])])}",
        f"pytest_add_cli_args_test_selection = {toml_list(module['tests'])}",
        f'process_isolation = "{common["process_isolation"]}"',
        f"timeout_constant = {float(common['timeout_constant'])}",
        f"timeout_multiplier = {float(common['timeout_multiplier'])}",
        "use_git_change_detection = false",
    ]
    with (work / "pyproject.toml").open("a") as f:
        f.write("\n".join(table) + "\n")


def dotted(module_file: str) -> str:
    """The prefix of a file's mutant names: its module's dotted name and a dot (a package's ``__init__.py`` is the
    package's: mutmut names its mutants ``referee.rating.x_...``, and a pattern with ``__init__`` matched none)."""
    return module_file.removesuffix(".py").removesuffix("/__init__").replace("/", ".") + "."


def mangled(module_file: str, name: str) -> str:
    """A mutant's name without the module prefix and the ``__mutmut_N`` suffix: the function it mutates."""
    return name.removeprefix(dotted(module_file)).rsplit("__mutmut_", 1)[0]


def changed_lines(diff: str) -> tuple[str, str]:
    """The removed and the added lines of a mutant's diff, stripped and joined with newlines."""
    body = [ln for ln in diff.splitlines() if not ln.startswith(("---", "+++"))]
    before = "\n".join(ln[1:].strip() for ln in body if ln.startswith("-"))
    after = "\n".join(ln[1:].strip() for ln in body if ln.startswith("+"))
    return before, after


def is_equivalent(module_file: str, function: str, diff: str, equivalents: list[dict[str, str]]) -> bool:
    before, after = changed_lines(diff)
    return any(
        e["file"] == module_file and e["function"] == function and e["before"] == before and e["after"] == after
        for e in equivalents
    )


def results(work: Path, module: dict[str, Any], equivalents: list[dict[str, str]]) -> dict[str, Any]:
    """Read mutmut's verdicts in ``work``: counts, the kill rate of the non-equivalent mutants, and survivors."""
    from mutmut.configuration import reset_config
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code

    here = Path.cwd()
    os.chdir(work)
    counts: dict[str, int] = {}
    survivors: list[dict[str, str]] = []
    equivalent = 0
    try:
        reset_config()
        for part in parts(module):
            data = SourceFileMutationData(path=Path(part["file"]))
            data.load()
            for name, code in data.exit_code_by_key.items():
                function = mangled(part["file"], name)
                if not any(fnmatch.fnmatchcase(function, p) for p in part["functions"]):
                    continue
                status = status_by_exit_code[code]
                if status not in KILLED:
                    diff = get_diff_for_mutant(name, path=part["file"])
                    if is_equivalent(part["file"], function, diff, equivalents):
                        equivalent += 1
                        continue
                    survivors.append({"mutant": name, "status": status, "diff": diff})
                counts[status] = counts.get(status, 0) + 1
    finally:
        os.chdir(here)
    total = sum(counts.values())
    killed = sum(n for s, n in counts.items() if s in KILLED)
    return {
        "killed": killed, "counted": total, "equivalent": equivalent, "by_status": counts,
        "rate": round(killed / total, 4) if total else 1.0, "survivors": survivors,
    }


def cpu_used() -> float:
    """CPU seconds (user and system) of this process's finished children: the run's cost whatever the machine's load
    (its wall time on a busy machine mostly measures the others' work)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(r.ru_utime + r.ru_stime, 1)


def run_module(
    name: str, module: dict[str, Any], cfg: dict[str, Any], children: int, lock: threading.Lock
) -> dict[str, Any]:
    t0 = time.monotonic()
    cpu0 = cpu_used()
    files = [p["file"] for p in parts(module)]
    work = scratch_copy(name)
    configure(work, module, cfg["common"])
    # Made now, not by mutmut: Python caches a sys.path entry that does not exist yet as "nothing here", and mutmut's
    # own run would then import the original tree.
    (work / "mutants").mkdir()
    env = dict(os.environ)
    # the processes a test starts (bots, workers, the CLI) import the mutated copy, not the original tree
    site = work / ".site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE.format(work=str(work)))
    (site / "mutation_order.py").write_text(ORDER_PLUGIN)
    paths = [work / "mutants", work / "mutants" / "clients" / "python", site]
    env["PYTHONPATH"] = os.pathsep.join(map(str, paths))
    names = [dotted(p["file"]) + f + "__mutmut_*" for p in parts(module) for f in p["functions"]]
    mutmut = [sys.executable, "-c", "import sys; from mutmut.__main__ import cli; sys.exit(cli())"]
    log = work / "mutmut.log"
    with log.open("w") as out:
        proc = subprocess.run(
            [*mutmut, "run", "--max-children", str(children), *names],
            cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    if proc.returncode != 0:  # e.g. a listed test fails without any mutant: the other modules still run
        tail = log.read_text(errors="replace").splitlines()[-30:]
        print(f"mutmut failed on {name} (exit {proc.returncode}); see {log}:\n" + "\n".join(tail), file=sys.stderr)
        # mutmut runs the clean tests in a forked child whose output it drops: run them again where it shows
        args = [*cfg["common"]["pytest_args"], *module.get("pytest_args", []), *module["tests"]]
        again = subprocess.run([sys.executable, "-m", "pytest", *args],
                               cwd=work / "mutants", env=env, capture_output=True, text=True)  # fmt: skip
        print(f"the tests of {name} without mutants (exit {again.returncode}):\n{again.stdout[-4000:]}",
              file=sys.stderr)
        return {"module": name, "files": files, "error": f"mutmut exited {proc.returncode}", "rate": 0.0,
                "survivors": [], "seconds": round(time.monotonic() - t0, 1)}
    with lock:  # results() reads in the scratch folder (a chdir) with mutmut's process-wide config
        found = results(work, module, cfg.get("equivalent", []))
    found.update(module=name, files=files, seconds=round(time.monotonic() - t0, 1), cpu_seconds=cpu_used() - cpu0)
    return found


def main() -> int:
    cfg = load()
    modules: dict[str, Any] = cfg["modules"]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="modules from scripts/mutation.toml")
    ap.add_argument("--all", action="store_true", help="every module in scripts/mutation.toml")
    ap.add_argument("--list", action="store_true", help="print the module names and exit")
    ap.add_argument("--check", action="store_true", help="check that the config fits the code, and exit")
    ap.add_argument("--jobs", type=int, default=1, help="modules run at once (default 1)")
    ap.add_argument("--children", type=int, default=4,
                    help="mutants tested at once (default 4: their tests often wait on bots and workers)")
    args = ap.parse_args()
    if args.list:
        for n, m in modules.items():
            print(f"{n}\t{' '.join(p['file'] for p in parts(m))}\t{m.get('about', '')}")
        return 0
    if stale := problems(cfg):
        print("scripts/mutation.toml does not fit the code:\n  " + "\n  ".join(stale), file=sys.stderr)
        return 2
    if args.check:
        return 0
    names = list(modules) if args.all else args.names
    unknown = [n for n in names if n not in modules]
    if unknown or not names:
        ap.error(f"name modules from: {', '.join(modules)}" + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
    t0 = time.monotonic()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    load_at_start = os.getloadavg()[0]
    low = []
    lock = threading.Lock()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        runs = [pool.submit(run_module, n, modules[n], cfg, args.children, lock) for n in names]
        for run in concurrent.futures.as_completed(runs):
            found = run.result()
            if args.jobs > 1:  # children's CPU is counted per process: with modules at once, only the total
                found.pop("cpu_seconds", None)
            for s in found["survivors"]:
                print(f"# {s['mutant']}: {s['status']}\n{s['diff']}\n", file=sys.stderr)
            print(json.dumps({k: v for k, v in found.items() if k != "survivors"}), flush=True)
            if found["rate"] < cfg["common"]["min_rate"]:
                low.append(found["module"])
    print(json.dumps({"modules": len(names), "seconds": round(time.monotonic() - t0, 1), "cpu_seconds": cpu_used(),
                      "under_min_rate": low,
                      "commit": commit.strip(), "load_at_start": load_at_start, "load_at_end": os.getloadavg()[0]}))
    return 1 if low else 0


if __name__ == "__main__":
    sys.exit(main())
