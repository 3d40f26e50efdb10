"""The little Markdown our docs use, as HTML: headings, paragraphs, lists, fenced code, tables, `code`, **bold**
and links. Every piece of text is escaped first; a link is kept only to another page of the docs or an https
address (shown as text, never fetched)."""

from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path

import referee

DOCS = Path(referee.__file__).resolve().parent.parent / "docs"
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
_ITEM = re.compile(r"\s*([-*]|\d+\.) ")


def _inline(text: str) -> str:
    out = html.escape(text, quote=True)
    out = _CODE.sub(r"<code>\1</code>", out)
    out = _BOLD.sub(r"<strong>\1</strong>", out)

    def link(m: re.Match[str]) -> str:
        label, target = m.group(1), m.group(2)
        if target.startswith("https://"):
            return f'<a href="{target}" rel="noreferrer">{label}</a>'
        return f"{label} (<code>docs/{target}</code>)" if target.endswith(".md") else label

    return _LINK.sub(link, out)


def _table(rows: list[str]) -> str:
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows if not re.fullmatch(r"[\s|:-]+", r)]
    head, body = cells[0], cells[1:]
    out = ['<div class="scroll"><table><thead><tr>', *(f"<th>{_inline(c)}</th>" for c in head)]
    out.append("</tr></thead><tbody>")
    for r in body:
        out += ["<tr>", *(f"<td>{_inline(c)}</td>" for c in r), "</tr>"]
    return "".join([*out, "</tbody></table></div>"])


def to_html(text: str) -> str:
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append(f"<pre><code>{html.escape(chr(10).join(lines[i + 1 : j]))}</code></pre>")
            i = j + 1
            continue
        if m := re.match(r"(#{1,4}) (.*)", line):
            level = len(m.group(1)) + 1  # the page's own title is the h1
            out.append(f"<h{level}>{_inline(m.group(2))}</h{level}>")
        elif line.startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out.append(_table(lines[i:j]))
            i = j
            continue
        elif _ITEM.match(line):
            j, items = i, []
            while j < len(lines) and lines[j].strip() and (_ITEM.match(lines[j]) or lines[j][:1] == " "):
                if _ITEM.match(lines[j]):
                    items.append(_ITEM.sub("", lines[j], count=1))
                else:
                    items[-1] += " " + lines[j].strip()
                j += 1
            out.append("<ul>" + "".join(f"<li>{_inline(x)}</li>" for x in items) + "</ul>")
            i = j
            continue
        elif line.strip():
            j, para = i, []
            while j < len(lines) and lines[j].strip() and not re.match(r"(#|```|\||\s*([-*]|\d+\.) )", lines[j]):
                para.append(lines[j])
                j += 1
            out.append(f"<p>{_inline(' '.join(para))}</p>")
            i = j
            continue
        i += 1
    return "\n".join(out)


@cache
def how_to_enter() -> str | None:
    """docs/writing-a-bot.md as HTML (without its title), or None where the docs are not installed."""
    try:
        text = (DOCS / "writing-a-bot.md").read_text(encoding="utf-8")
    except OSError:
        return None
    return to_html(text.split("\n", 1)[1] if text.startswith("# ") else text)
