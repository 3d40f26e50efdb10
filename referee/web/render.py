"""The site's templates, and the processes that render its pages (docs/web.md, "Speed").

A page's data is gathered on the service's loop; its HTML is made here, in ``[http] render_processes`` processes
of their own (0: on the site's thread), each ``RENDER_NICE`` steps below the service in the OS's priority. Jinja's
rendering was most of the site's CPU, and in the service's process it held the interpreter's lock that the gRPC
calls wait for: here it holds none of theirs, and on a busy machine the kernel runs the service first
(docs/notes/2026-12-06-site-loop.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import pickle
import signal
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from referee.log import get_logger
from referee.service.convert import rfc3339
from referee.terminal import printable

TEMPLATES = Path(__file__).parent / "templates"
RENDER_NICE = 5  # how far below the service a render process runs (os.nice)
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _shown(value: Any) -> Any:
    """Every text a page shows, control characters and bidirectional overrides written as escapes, as the CLI
    shows them (``referee.terminal.printable``): a Hello text cannot reorder or hide what is around it. Markup (a
    macro's output, the viewer) is ours and passes as it is."""
    return printable(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def _segment(value: Any) -> str:
    """One path segment, whatever it holds."""
    return quote(str(value), safe="")


def environment() -> jinja2.Environment:
    """The site's templates: every value escaped, and shown as ``_shown`` shows it."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined,
        auto_reload=False,  # the templates are the package's files: no file check at each page
    )  # fmt: skip
    env.filters["seg"] = _segment
    env.filters["when"] = rfc3339
    env.finalize = _shown
    return env


_ENV: list[jinja2.Environment] = []  # a render process's own templates


def _begin() -> None:
    """A render process starts: below the service in priority, with its own templates, and killed by the kernel
    when the thread that started it ends (the site's, or the whole server killed): no render process outlives it."""
    with contextlib.suppress(OSError, AttributeError):  # Linux's prctl; elsewhere the pool's own shutdown
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the server died before the line above
        os._exit(0)
    os.nice(RENDER_NICE)
    _ENV.append(environment())


def _render(template: str, context: dict[str, Any]) -> str:
    return _ENV[0].get_template(template).render(**context)


class Renderer:
    """Renders pages in ``processes`` processes (started with ``start``, on the site's thread), or, with 0, on
    the calling thread."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self.pool: ProcessPoolExecutor | None = None
        self.here = environment()

    def start(self) -> None:
        """The processes, started now (each imports the templates' modules once) rather than at the first page."""
        if self.processes and self.pool is None:
            self.pool = ProcessPoolExecutor(self.processes, get_context("spawn"), initializer=_begin)
            for _ in range(self.processes):
                self.pool.submit(len, "")

    async def render(self, template: str, context: dict[str, Any]) -> str:
        """The page, from a render process; on this thread without them, or when its context cannot be sent to one
        (a value pickle cannot copy: logged, so that the page that gave it is found)."""
        if self.pool is None:
            return self.now(template, context)
        try:
            return await asyncio.get_running_loop().run_in_executor(self.pool, _render, template, context)
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            get_logger(service="site").warning("page rendered on the site's thread", template=template, why=str(e))
            return self.now(template, context)

    def now(self, template: str, context: dict[str, Any]) -> str:
        """Rendered on this thread (an error page, which must not wait or fail on a process)."""
        return self.here.get_template(template).render(**context)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
