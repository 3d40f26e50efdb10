"""The how-to-enter page's upload form, in Chromium against a real ``abluxx serve --http-port``: a signed-in
author uploads a Python bot's archive, it is validated in the sandbox, and the page says it was accepted and shows
the bot's own output; an archive with a link out of the upload is refused naming it; a visitor sees no form. A
SIGTERM then stops the server cleanly, its hosted bot's link folder gone."""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import tempfile
from pathlib import Path

from tests.sandbox.conftest import needs_sandbox
from tests.service.helpers import ALICE, terminate

from .site import start_site
from .test_site_browser import SLOW, _sign_in

PY_BOT = b"from abluxx_bot import serve\nfrom abluxx_bot.examples import factory\n\nmake = factory('greedy')\n" \
         b"print('hello from the sandbox', flush=True)\nserve(lambda: make(0), 0)\n"  # fmt: skip


def _archive(path: Path, link_out: bool = False) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("bot.py")
        info.size = len(PY_BOT)
        tar.addfile(info, io.BytesIO(PY_BOT))
        if link_out:
            link = tarfile.TarInfo("keys")
            link.type, link.linkname = tarfile.SYMTYPE, "/etc"
            tar.addfile(link)
    return path


def _upload(page, url: str, name: str, archive: Path) -> str:
    page.goto(url + "/how-to-enter", timeout=SLOW)
    page.fill("#upload input[name=name]", name)
    page.fill("#upload input[name=command]", "python3 bot.py")
    page.set_input_files("#upload input[name=archive]", str(archive))
    page.click("#upload button", timeout=SLOW)
    page.wait_for_selector("#upload .ok, #upload .error", timeout=SLOW)
    return page.inner_text("#upload")


@needs_sandbox()
def test_an_author_uploads_a_bot_from_the_how_to_enter_page(tmp_path: Path, page_for) -> None:
    site = start_site(tmp_path / "data", tmp_path)
    try:
        page = page_for()
        page.goto(site.url + "/how-to-enter", timeout=SLOW)
        assert page.locator("#upload form").count() == 0  # a visitor: how to upload, but no form
        assert "abluxx submit NAME --upload" in page.inner_text("#upload")
        _sign_in(page, site.url, ALICE)
        shown = _upload(page, site.url, "webbot", _archive(tmp_path / "bot.tar.gz"))
        assert "Accepted: webbot.v1" in shown and "hello from the sandbox" in shown
        validation = page.evaluate("fetch('/bots/webbot').then(r => r.text())")
        gid = re.search(r"validate-webbot-[0-9a-f]+", validation)
        assert gid is not None
        page.goto(f"{site.url}/g/{gid[0]}/output/-", timeout=SLOW)
        assert "hello from the sandbox" in page.inner_text("body")  # its author reads its output
        other = page_for()
        assert other.goto(f"{site.url}/g/{gid[0]}/output/-", timeout=SLOW).status == 404  # a visitor does not
        shown = _upload(page, site.url, "linked", _archive(tmp_path / "linked.tar.gz", link_out=True))
        assert "the link 'keys' points outside the upload" in shown and "Accepted" not in shown
        # stopped as a service manager stops it, the server stops its hosted bot and removes its links' folder
        digest = hashlib.sha256(str((tmp_path / "data").resolve()).encode()).hexdigest()[:8]
        links = Path(tempfile.gettempdir()) / f"abluxx-hosted-{digest}"
        assert (links / "webbot.v1.sock").is_symlink()
        assert terminate(site.proc) == 0
        assert not links.exists()
    finally:
        site.stop()
