"""No function in referee/ runs over 80 lines (issue 12): a longer one is several steps that want names.
Generated code (referee/proto) is exempt."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REFEREE = Path(__file__).resolve().parents[1] / "referee"
MAX_LINES = 80


def long_functions(root: Path, limit: int) -> list[str]:
    """``path:line name (N lines)`` for every function or method under ``root`` longer than ``limit`` lines,
    counted from its ``def`` to its last line; nested functions count within their parent and on their own."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if "proto" in path.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_in_the_referee_is_over_80_lines() -> None:
    assert long_functions(REFEREE, MAX_LINES) == []


@pytest.mark.parametrize("lines, long", [(MAX_LINES, []), (MAX_LINES + 1, ["f"]), (MAX_LINES + 2, ["f", "g"])])
def test_a_method_counts_from_def_to_its_last_line_nested_functions_within_it(
    tmp_path: Path, lines: int, long: list[str]
) -> None:
    statements = "".join("            x = 1\n" for _ in range(lines - 3))  # f: its def, g's def, these, the return
    source = f"class C:\n    def f(self):\n        async def g():\n{statements}            return x\n"
    (tmp_path / "m.py").write_text(source)
    assert [line.split()[1] for line in long_functions(tmp_path, MAX_LINES)] == long
