"""The site's render processes (referee/web/render.py): a page is made there as on the site's thread, below the
service's OS priority, and a context that cannot go to a process is rendered on the thread instead of failing."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

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
        below = min(os.nice(0) + RENDER_NICE, 19)  # the kernel caps nice at 19: a suite run at nice 15 gets 19, not 20
        assert pids and all(os.getpriority(os.PRIO_PROCESS, p) == below for p in pids)
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


def test_no_render_process_outlives_the_server_killed(tmp_path) -> None:
    """SIGKILL of ``abluxx serve`` leaves none of its render processes behind (the kernel ends them with it)."""
    import signal
    import subprocess
    import time

    from tests.service.helpers import ABLUXX

    argv = [*ABLUXX, "serve", "--data", str(tmp_path / "data"), "--port", "0", "--http-port", "0"]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        for line in server.stdout:
            if line.startswith("listening on"):
                break
        deadline = time.monotonic() + 120
        while len(children := _children(server.pid)) < 2:  # the render processes, started with the site
            assert time.monotonic() < deadline, f"render processes not started: {children}"
            time.sleep(0.2)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(60)
    deadline = time.monotonic() + 60
    while alive := [p for p in children if Path(f"/proc/{p}").exists() and _state(p) != "Z"]:
        assert time.monotonic() < deadline, f"render processes outlived the server: {alive}"
        time.sleep(0.2)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` that are render processes (multiprocessing's spawn)."""
    out = []
    for task in Path("/proc").glob("[0-9]*"):
        try:
            stat = (task / "stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[1]) == pid and b"spawn_main" in (task / "cmdline").read_bytes():
                out.append(int(task.name))
        except (OSError, IndexError, ValueError):
            continue
    return out


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"
