"""scripts/mutation.toml names files, functions (as mutmut names them), tests and equivalent mutants' lines; code
moves, and a stale name quietly mutates nothing (the standings' private helpers were named ``x_lead`` for
``x__lead``, so they were never mutated). The mutation run refuses a config that does not fit the code; this checks
it on every test run, without mutmut."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "mutation.py"


def _script():
    spec = importlib.util.spec_from_file_location("mutation_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_mutation_config_fits_the_code() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr


def test_a_stale_name_or_line_in_the_config_is_named() -> None:
    m = _script()
    assert "x__lead" in m.functions_of(ROOT / "referee/tournament/standings.py")
    assert "xǁTallyǁadd" in m.functions_of(ROOT / "referee/tournament/standings.py")
    split = [{"file": "referee/errors.py"}, {"file": "referee/tournament/redeal.py", "functions": ["x_nothing"]}]
    cfg = {
        "modules": {
            "gone": {"file": "referee/nosuch.py", "tests": ["tests/test_layering.py"]},
            "renamed": {"file": "referee/tournament/standings.py", "functions": ["x_lead", "xǁTallyǁ*"],
                        "tests": ["tests/tournament/nosuch.py::test_x"]},
            "split": {"mutate": split, "tests": ["tests/test_layering.py"]},
        },
        "equivalent": [
            {"file": "referee/terminal.py", "function": "x_said", "before": "return json.dumps(value)", "after": ""},
            {"file": "referee/terminal.py", "function": "x_gone", "before": "", "after": ""},
        ],
    }
    assert m.problems(cfg) == [
        "gone: no file referee/nosuch.py",
        "renamed: 'x_lead' names no function of referee/tournament/standings.py",
        "renamed: no test file tests/tournament/nosuch.py::test_x",
        "split: 'x_nothing' names no function of referee/tournament/redeal.py",
        "equivalent (x_said): the line 'return json.dumps(value)' is no longer in referee/terminal.py",
        "equivalent: no function x_gone in referee/terminal.py",
    ]


def test_a_packages_init_file_is_named_as_mutmut_names_its_mutants() -> None:
    """mutmut names the mutants of ``referee/rating/__init__.py`` ``referee.rating.x_...``: a run that asked for
    ``referee.rating.__init__.*`` checked none of its 186 (run Y counted them all "not checked")."""
    m = _script()
    assert m.dotted("referee/rating/__init__.py") == "referee.rating."
    assert m.dotted("referee/rating/ep.py") == "referee.rating.ep."
    assert m.mangled("referee/rating/__init__.py", "referee.rating.xǁRatingsǁadd__mutmut_3") == "xǁRatingsǁadd"
