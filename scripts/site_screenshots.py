"""Screenshots of the web site for docs/web.md: serves a data folder with ``abluxx serve --http-port`` and photographs
its pages in Debian's Chromium (through playwright), wide, and the leaderboard and an entrant at a phone's 390 px.

    python3 scripts/site_screenshots.py --data DATA [--out docs/img]

DATA is any data folder with a tournament (``abluxx demo --data DATA`` makes one). Prints the files it wrote as
JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
NARROW = ("leaderboard", "entrant")  # the pages also photographed at 390 px
ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]


def serve(data: Path) -> tuple[subprocess.Popen, str]:
    """``abluxx serve`` on free ports; its site's base URL."""
    proc = subprocess.Popen(
        [*ABLUXX, "serve", "--data", str(data), "--port", "0", "--http-port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:
        if m := re.match(r"site on (http://\S+)/", line):
            return proc, m.group(1)
    proc.kill()
    raise SystemExit("abluxx serve did not start its site")


def pages(base: str, data: Path) -> dict[str, str]:
    """name -> path of each page to photograph: the home, the first tournament's leaderboard, its leader's page,
    one game, and how to enter."""
    from referee.store import open_store

    with open_store(data) as store:
        row = store.tournaments()[0]
        games = store.recent_games(row.id, None, 1)
    out = {"home": "/", "leaderboard": f"/t/{row.id}", "how-to-enter": "/how-to-enter"}
    if games:
        out["entrant"] = f"/t/{row.id}/e/{games[0].seats[0].entrant}"
        out["game"] = f"/g/{games[0].game_id}"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("docs/img"))
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    proc, base = serve(args.data)
    written = []
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            for width, height, suffix in ((1200, 800, ""), (390, 844, "-390")):
                page = browser.new_page(viewport={"width": width, "height": height})
                for name, path in pages(base, args.data).items():
                    if suffix and name not in NARROW:
                        continue
                    page.goto(base + path, timeout=120_000)
                    out = args.out / f"site-{name}{suffix}.png"
                    page.screenshot(path=str(out), full_page=False)
                    written.append(str(out))
                page.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(30)
    print(json.dumps({"screenshots": written}))


if __name__ == "__main__":
    main()
