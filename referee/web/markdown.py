"""Our docs' Markdown as HTML for the site's pages (the rules, how to write a bot), by markdown-it-py: CommonMark
with GitHub's tables, raw HTML off (any ``<`` in the text is escaped). A link is kept only to another page of the
site (``rules.md``: ``/rules``; ``writing-a-bot.md``: ``/how-to-enter``) or an https address; any other becomes its
text with the doc's name after it. Headings move down one level: the page's own title is its h1."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

import referee

ROOT = Path(referee.__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = {"rules.md": "/rules", "writing-a-bot.md": "/how-to-enter"}  # docs the site shows as its own pages


@cache
def _engine() -> MarkdownIt:
    """The parser and renderer, made at its first use."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.add_render_rule("table_open", lambda *_: '<div class="scroll"><table>\n')
    md.add_render_rule("table_close", lambda *_: "</table></div>\n")
    return md


def _link(token: Token) -> str | None:
    """Where a link of our docs goes on the site, or None (shown as text)."""
    href = str(token.attrGet("href"))  # a link's token always has one
    if href.startswith("https://"):
        return href
    page, _, anchor = href.partition("#")
    if page in PAGES:
        return PAGES[page] + (f"#{anchor}" if anchor else "")
    return None


def _rewrite(tokens: Sequence[Token]) -> None:
    """Headings one level down; links to the site's own pages or https kept, every other one as its text."""
    for t in tokens:
        if t.type in ("heading_open", "heading_close"):
            t.tag = f"h{min(int(t.tag[1]) + 1, 6)}"
        for child in t.children or []:
            _rewrite_link(child)


def _rewrite_link(t: Token) -> None:
    if t.type == "link_open":
        target = _link(t)
        if target is None:
            t.type, t.content = "text", ""  # a text token: its tag is never rendered
        else:
            t.attrSet("href", target)
            if target.startswith("https://"):
                t.attrSet("rel", "noreferrer")
    elif t.type == "link_close" and t.meta.get("dropped"):
        t.type, t.content = "text", t.meta["doc"]


def to_html(text: str) -> str:
    md = _engine()
    tokens = md.parse(text)
    _pair_links(tokens)
    _rewrite(tokens)
    return md.renderer.render(tokens, md.options, {})


def _pair_links(tokens: Sequence[Token]) -> None:
    """Tell each link's closing token whether its opening one is dropped, and the doc it named."""
    for t in tokens:
        opened: list[Token] = []
        for child in t.children or []:
            if child.type == "link_open":
                opened.append(child)
            elif child.type == "link_close" and opened:
                start = opened.pop()
                child.meta["dropped"] = _link(start) is None
                page = str(start.attrGet("href")).split("#")[0]
                child.meta["doc"] = f" (docs/{page})" if page.endswith(".md") and "/" not in page else ""


@cache
def doc(name: str) -> str | None:
    """``docs/NAME`` as HTML without its title, or None where the docs are not installed beside the package."""
    try:
        text = (DOCS / name).read_text(encoding="utf-8")
    except OSError:
        return None
    return to_html(text.split("\n", 1)[1] if text.startswith("# ") else text)


def how_to_enter() -> str | None:
    """docs/writing-a-bot.md as HTML (without its title)."""
    return doc("writing-a-bot.md")


def rules() -> str | None:
    """docs/rules.md as HTML (without its title)."""
    return doc("rules.md")
