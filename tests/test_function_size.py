"""No function in referee/ runs over 80 lines (issue 12): a longer one is several steps that want names. No file in
referee/ runs over 450 lines (issue 23): a longer one holds several concerns that want files of their own, each of
which can be read alone. Generated code (referee/proto) is exempt."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REFEREE = Path(__file__).resolve().parents[1] / "referee"
MAX_LINES = 80
MAX_FILE_LINES = 450


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


def long_files(root: Path, limit: int) -> list[str]:
    """``path (N lines)`` for every Python file under ``root`` (generated code aside) longer than ``limit`` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if "proto" in path.relative_to(root).parts:
            continue
        lines = len(path.read_text().splitlines())
        if lines > limit:
            found.append(f"{path.relative_to(root.parent)} ({lines} lines)")
    return found


def test_no_file_in_the_referee_is_over_450_lines() -> None:
    assert long_files(REFEREE, MAX_FILE_LINES) == []


def test_a_file_over_the_limit_is_named_and_generated_code_is_not(tmp_path: Path) -> None:
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_FILE_LINES)
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_FILE_LINES + 1))
    (tmp_path / "proto").mkdir()
    (tmp_path / "proto" / "generated_pb2.py").write_text("x = 1\n" * (MAX_FILE_LINES * 3))
    assert long_files(tmp_path, MAX_FILE_LINES) == [f"{tmp_path.name}/long.py ({MAX_FILE_LINES + 1} lines)"]
