"""The repository's docs stand alone: every relative link in README.md, docs/ (docs/notes/ too) and the clients'
READMEs leads to a file in the repo, and a link to a heading (`page.md#anchor`) to a heading that page has; every
page of docs/ is reachable from docs/index.md, the map; no user page is over 300 lines (research goes to
docs/notes/); and no tracked file points outside the repo (a clone has nothing beside it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)")
MAX_USER_PAGE_LINES = 300
# Pages allowed over MAX_USER_PAGE_LINES for now, each with why. Remove an entry once its page is split.
OVER_LENGTH_ALLOWED: set[str] = set()  # none: every user page is under the limit


def doc_pages() -> list[Path]:
    return sorted([*DOCS.glob("*.md"), *DOCS.glob("notes/*.md")])


def pages_with_links() -> list[Path]:
    return [ROOT / "README.md", *doc_pages(), *sorted(ROOT.glob("clients/*/README.md"))]


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # a '#' line in a code block is no heading
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def links(page: Path) -> list[tuple[str, str]]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return [(t, a) for t, a in LINK.findall(text) if "://" not in t and not t.startswith("mailto:")]


def test_every_relative_link_in_the_docs_leads_to_a_file_in_the_repo() -> None:
    broken = []
    for page in pages_with_links():
        for target, _ in links(page):
            if not target:
                continue
            path = (page.parent / target).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_every_link_to_a_heading_finds_it() -> None:
    dead = []
    for page in pages_with_links():
        for target, anchor in links(page):
            path = (page.parent / target).resolve() if target else page
            if anchor and path.suffix == ".md" and path.exists() and anchor not in anchors(path):
                dead.append(f"{page.relative_to(ROOT)} -> {target}#{anchor}")
    assert dead == []


def test_every_docs_page_is_reachable_from_the_index() -> None:
    seen, todo = set(), [DOCS / "index.md"]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        for target, _ in links(page):
            path = (page.parent / target).resolve()
            if target and path.suffix == ".md" and path.is_relative_to(DOCS) and path.exists():
                todo.append(path)
    assert [str(p.relative_to(ROOT)) for p in doc_pages() if p not in seen] == []


def test_no_user_page_is_over_300_lines() -> None:
    long = {p.name: n for p in DOCS.glob("*.md") if (n := len(p.read_text().splitlines())) > MAX_USER_PAGE_LINES}
    assert set(long) <= OVER_LENGTH_ALLOWED, f"over {MAX_USER_PAGE_LINES} lines (move research to docs/notes/): {long}"


def test_notes_are_dated_one_study_a_file() -> None:
    names = [p.name for p in DOCS.glob("notes/*")]
    assert names and all(re.fullmatch(r"\d{4}-\d\d-\d\d-[a-z0-9-]+\.md", n) for n in names), names


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
