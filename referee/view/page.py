"""Self-contained HTML pages: styles, scripts and data inline, nothing fetched from anywhere."""

from __future__ import annotations

import html
import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def asset(name: str) -> str:
    return resources.files("referee.view").joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def json_block(element_id: str, data: Any) -> str:
    """``data`` as a JSON script block that no string inside it can close early."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def page(title: str, body: str, styles: tuple[str, ...] = ("base.css",), script: str = "") -> str:
    css = "\n".join(asset(s) for s in styles)
    # The CSP keeps the page honest: any attempt to load something from elsewhere is refused.
    csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{css}\n</style></head>\n"
        f"<body>\n{body}\n{script}\n</body></html>\n"
    )
