"""The folder of hosted bots' stable socket links (referee/service/hosted.py): the server's own, owner-only, and
gone when it stops. Its name is predictable (it is stored in each hosted bot's address), so another user of the
machine could make it first: the server must then start no hosted bot rather than trust links it does not own."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.fleet import EntrantError
from referee.fleet.sandbox import Limits
from referee.service.hosted import HostedBots


@pytest.fixture
def hosted(tmp_path: Path) -> Iterator[HostedBots]:
    bots = HostedBots(tmp_path / "data", Limits(), 1024)
    yield bots
    if bots.links.is_symlink() or bots.links.is_file():
        bots.links.unlink()
    elif bots.links.exists():
        shutil.rmtree(bots.links)


def test_the_links_folder_is_made_owner_only_and_removed_when_the_server_stops(hosted: HostedBots) -> None:
    folder = hosted.links_folder()
    assert folder.is_dir() and folder.stat().st_mode & 0o777 == 0o700
    asyncio.run(hosted.close())
    assert not os.path.lexists(folder)


def test_an_open_folder_of_ours_is_tightened(hosted: HostedBots) -> None:
    hosted.links.mkdir(mode=0o777)
    hosted.links.chmod(0o777)
    assert hosted.links_folder().stat().st_mode & 0o777 == 0o700


def test_a_link_in_place_of_the_folder_starts_no_hosted_bot(hosted: HostedBots, tmp_path: Path) -> None:
    elsewhere = tmp_path / "theirs"
    elsewhere.mkdir(mode=0o700)
    hosted.links.symlink_to(elsewhere)
    with pytest.raises(EntrantError, match="not an owner-only folder"):
        hosted.links_folder()
    asyncio.run(hosted.close())  # and stopping leaves what it does not own
    assert hosted.links.is_symlink()


@pytest.mark.skipif(os.getuid() != 0, reason="making a folder another user owns needs root")
def test_a_folder_another_user_made_first_starts_no_hosted_bot(hosted: HostedBots) -> None:
    hosted.links.mkdir(mode=0o700)
    os.chown(hosted.links, 65534, 65534)
    with pytest.raises(EntrantError, match="not an owner-only folder"):
        hosted.links_folder()
