"""The uploaded bots the server runs itself (docs/sandbox.md): each active version in its sandbox, one process
reused by every game of every ladder it plays (started again if it crashes, up to MAX_RESTARTS times), at a
stable address: ``unix:<links>/<bot>.v<N>.sock``, a link the server points at the sandbox's socket each time the
bot starts. ``<links>`` is a folder in the system's temporary folder named after the data folder (an address is
stored, so it must be the same after a restart): it must be the server's own, owner-only folder, or no hosted bot
starts (another user of the machine who made it first could point the links at their own sockets), and the server
removes it when it stops. Its files are ``<data>/uploads/<bot>/<N>/`` (uploads.py), its output
``<data>/logs/hosted-*.log``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from referee.fleet import Bot, EntrantError, LocalBots
from referee.fleet.sandbox import Limits, Sandbox
from referee.log import get_logger
from referee.records.private import private_folder, write_private

from .registry import BotVersion
from .uploads import UPLOADS

SAFE = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]{0,199}")  # a game id or entrant id that may name a file
OUTPUT = "output"  # under the data folder: output/<game id>/<entrant id>.out, each game's share of a hosted bot's log
MAX_RESTARTS = 100  # a hosted bot that crashes is started again this often, then left down (health probes see it)


def files_of(data: Path, name: str, version: int | str) -> Path:
    """Where a bot version's uploaded files are kept."""
    return data / UPLOADS / name / str(version)


def tail(path: Path, limit: int, start: int = 0) -> str:
    """The last ``limit`` bytes of the file ``path`` from byte ``start`` on, as text ("" when there is none)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(start, os.fstat(f.fileno()).st_size - limit))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def output_path(data: Path, game_id: str, entrant_id: str) -> Path | None:
    """Where an uploaded bot's output in a game is kept; None for ids that cannot name a file."""
    if not (SAFE.fullmatch(game_id) and SAFE.fullmatch(entrant_id)) or ".." in game_id + entrant_id:
        return None
    return data / OUTPUT / game_id / f"{entrant_id}.out"


class _Link(dict[str, str]):
    """The addresses LocalBots gives its bot (``shared``): each one points the stable link at the new socket."""

    def __init__(self, link: Path) -> None:
        super().__init__()
        self.link = link

    def __setitem__(self, name: str, address: str) -> None:
        super().__setitem__(name, address)
        fresh = self.link.with_suffix(".new")
        with contextlib.suppress(FileNotFoundError):
            fresh.unlink()
        os.symlink(address.removeprefix("unix:"), fresh)
        os.replace(fresh, self.link)


class HostedBots:
    """The server's running uploaded bots, by entrant id (``bot.vN``)."""

    def __init__(self, data: Path, limits: Limits, output_limit: int) -> None:
        self.data, self.limits, self.output_limit = data, limits, output_limit
        self._marks: dict[str, dict[str, int]] = {}  # game id -> hosted seat -> its log's size when the game began
        digest = hashlib.sha256(str(data.resolve()).encode()).hexdigest()[:8]
        self.links = Path(tempfile.gettempdir()) / f"abluxx-hosted-{digest}"  # short: a socket path has 107 bytes
        self.running: dict[str, LocalBots] = {}
        self.log = get_logger(service="referee")

    def address(self, entrant_id: str) -> str:
        return f"unix:{self.links}/{entrant_id}.sock"

    def bot(self, key: str, command: tuple[str, ...], files: Path) -> Bot:
        return Bot(key, command=command, sandbox=Sandbox(str(files), self.limits))

    @contextlib.asynccontextmanager
    async def trial(self, key: str, command: tuple[str, ...], files: Path) -> AsyncIterator[str]:
        """The bot started in its sandbox for its checks (its output in ``logs/upload-<key>.log``), stopped after."""
        async with LocalBots((self.bot(key, command, files),), self.data / "logs", "upload") as bots:
            yield bots.addresses[key]

    def links_folder(self) -> Path:
        """The links' folder, made owner-only; EntrantError if it is not a folder of this user's that only they
        may enter (made by someone else first, or a link): the links in it would not be the server's alone."""
        private_folder(self.links)
        st = self.links.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise EntrantError(f"{self.links} is not an owner-only folder of this user's: hosted bots are not started")
        return self.links

    async def start(self, bot: BotVersion) -> None:
        """Run ``bot`` (an uploaded version) at its address; a bot that does not start is logged (its health
        probes find it down)."""
        assert bot.command is not None
        try:
            folder = self.links_folder()
        except (EntrantError, OSError) as e:
            self.log.error("hosted bot did not start", bot=bot.entrant_id, error=str(e))
            return
        link = _Link(folder / f"{bot.entrant_id}.sock")
        command = tuple(json.loads(bot.command))
        local = LocalBots((self.bot(bot.entrant_id, command, files_of(self.data, bot.name, bot.version)),),
                          self.data / "logs", "hosted", restart="on-crash", max_restarts=MAX_RESTARTS,
                          shared=link)  # fmt: skip
        try:
            await local.__aenter__()
        except EntrantError as e:
            self.log.error("hosted bot did not start", bot=bot.entrant_id, error=str(e))
            return
        self.running[bot.entrant_id] = local

    def log_of(self, entrant_id: str) -> Path:
        return self.data / "logs" / f"hosted-{entrant_id}.log"

    def game_started(self, game_id: str, seats: tuple[str, ...]) -> None:
        """Note where each hosted seat's log stands as ``game_id`` begins."""
        marks = {}
        for seat in seats:
            if seat in self.running:
                with contextlib.suppress(OSError):
                    marks[seat] = self.log_of(seat).stat().st_size
        if marks:
            self._marks[game_id] = marks

    def game_done(self, game_id: str) -> None:
        """Keep each hosted seat's output while ``game_id`` ran (the last ``output_limit`` bytes), owner-only. With
        several games at once, a bot's output in that time is each game's."""
        for seat, start in self._marks.pop(game_id, {}).items():
            if (path := output_path(self.data, game_id, seat)) is not None:
                write_private(path, tail(self.log_of(seat), self.output_limit, start))

    async def stop(self, entrant_id: str) -> None:
        local = self.running.pop(entrant_id, None)
        if local is not None:
            await local.stop()
            with contextlib.suppress(FileNotFoundError):
                (self.links / f"{entrant_id}.sock").unlink()

    async def close(self) -> None:
        """Stop every hosted bot, and remove the links' folder (left if anything else is in it)."""
        for entrant_id in list(self.running):
            await self.stop(entrant_id)
        with contextlib.suppress(OSError):
            self.links.rmdir()
