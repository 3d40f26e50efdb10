"""The site's render processes (referee/web/render.py): a page is made there as on the site's thread, below the
service's OS priority, and a context that cannot go to a process is rendered on the thread instead of failing."""

from __future__ import annotations

import asyncio
import os

from referee.web.render import RENDER_NICE, Renderer

HOSTILE = {"status": 404, "detail": "<b>\u202eevil</b>", "who": None, "csrf": "t", "path": "/x"}


def test_a_page_made_in_a_render_process_is_the_page_made_here_and_its_process_runs_below_ours() -> None:
    renderer = Renderer(1)
    renderer.start()
    try:
        assert renderer.pool is not None
        made = asyncio.run(renderer.render("error.html", dict(HOSTILE)))
        assert made == renderer.now("error.html", dict(HOSTILE))
        assert "&lt;b&gt;\\u202eevil&lt;/b&gt;" in made  # escaped, and the bidi override written as the CLI does
        pids = list(renderer.pool._processes)  # the process that made it
        assert pids and all(os.getpriority(os.PRIO_PROCESS, p) == os.nice(0) + RENDER_NICE for p in pids)
    finally:
        renderer.close()
    assert renderer.pool is None


def test_a_context_no_process_can_take_is_rendered_on_the_thread_and_none_means_the_thread() -> None:
    renderer = Renderer(1)
    renderer.start()
    try:
        odd = {**HOSTILE, "detail": "kept", "unsent": lambda: None}  # a lambda cannot be pickled
        assert "kept" in asyncio.run(renderer.render("error.html", odd))
    finally:
        renderer.close()
    here = Renderer(0)
    here.start()
    assert here.pool is None
    assert "kept" in asyncio.run(here.render("error.html", {**HOSTILE, "detail": "kept"}))
