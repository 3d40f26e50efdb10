"""The List* calls' pages: a request's page token and size."""

from __future__ import annotations

import re
from typing import Any

from referee.errors import BadInput

DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 100, 1000
PAGE_TOKEN = re.compile(r"[0-9]{1,12}")


def page(request: Any) -> tuple[int, int]:
    """A List* request's page: (its token as a number, 0 for the first page; its size)."""
    size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
    if not request.page_token:
        return 0, size
    if not PAGE_TOKEN.fullmatch(request.page_token):
        raise BadInput(f"page_token: {request.page_token[:40]!r} is not a token this server gave")
    return int(request.page_token), size
