"""The repository's docs stand alone: every relative link in README.md and docs/ leads to a file in the repo, and
no tracked file points outside it (a clone has nothing beside it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_every_relative_link_in_the_docs_leads_to_a_file_in_the_repo() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *ROOT.glob("clients/*/README.md")]:
        for target in LINK.findall(page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            path = (page.parent / target).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_no_tracked_file_points_outside_the_repo() -> None:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    outside = []
    for name in files:
        path = ROOT / name
        if path.suffix in {".abluxx", ".png"} or not path.is_file() or path == Path(__file__).resolve():
            continue
        text = path.read_text(errors="replace")
        if any(x in text for x in ("../shared", "/work/shared", "RULES.md", "DESIGN.md")):  # the team's papers
            outside.append(name)
    assert outside == []
