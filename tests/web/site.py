"""A real ``abluxx serve --http-port 0`` for the site's tests, and plain HTTP to it."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records import record_bytes
from referee.store import open_store
from referee.tournament.config import parse
from referee.tournament.runner import create_tournament
from tests.service.helpers import ABLUXX, ORGANISER, Proc, auth, config, stub, write_settings

from .conftest import _result
from .records import self_play_record

SITE = re.compile(r"site on (http://\S+?)/?$")
LISTENING = re.compile(r"listening on (\S+:\d+)")


@dataclass
class Site:
    proc: Proc
    url: str  # http://127.0.0.1:PORT
    address: str  # the gRPC service's host:port

    def stop(self) -> None:
        self.proc.stop()


def start_site(
    data: Path,
    settings_dir: Path,
    extra_settings: str = "",
    delay_ms: int = 0,
    open_reads: bool = True,
    auth_settings: str = "",
    revoked: tuple[str, ...] = (),
) -> Site:
    """``abluxx serve`` on ``data`` with the service tests' tokens (organiser, alice, bob; less the ``revoked``
    authors'), gRPC and site on free ports; ``auth_settings`` go under ``[auth]``."""
    settings = write_settings(settings_dir, delay_ms=delay_ms, extra=extra_settings)
    if not open_reads:
        auth_settings += "open_reads = false\n"
    text = settings.read_text().replace("[auth]\n", f"[auth]\n{auth_settings}")
    for name in revoked:
        text = text.replace(f'{name} = "{name}-secret"\n', "")
    settings.write_text(text)
    log = settings_dir / f"{data.name}-site.log"
    argv = [*ABLUXX, "serve", "--data", str(data), "--port", "0", "--http-port", "0", "--config", str(settings)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ABLUXX_")}
    with open(log, "ab") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
    assert proc.stdout is not None
    url = address = ""
    deadline = time.monotonic() + 120
    while not (url and address) and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"abluxx serve exited with {proc.wait()}:\n{log.read_text()}")
        if m := SITE.search(line.strip()):
            url = m[1]
        if m := LISTENING.search(line):
            address = m[1]
    site = Site(Proc(proc, address, log), url, address)
    if (data / "abluxx.db").exists() and open_reads:  # closed reads: every page is 401 until signed in
        with open_store(data) as store:
            tids = [t.id for t in store.tournaments()]
        for tid in tids:
            wait_ready(f"{url}/t/{tid}")
    return site


def wait_ready(url: str, timeout_s: float = 300) -> None:
    """Wait until a leaderboard answers: it says 503 while its standings are first built (and scipy imported)."""
    deadline = time.monotonic() + timeout_s
    while (status := get(url)[0]) == 503:
        assert time.monotonic() < deadline, f"{url} still being computed after {timeout_s} s"
        time.sleep(0.5)
    assert status == 200, f"{url}: {status}"


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """(status, headers with lower-case names, body) of a GET, errors included."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()


def half_played(data: Path, names: tuple[str, ...]) -> tuple[str, list[str], list[str]]:
    """A 3-seat tournament with seat rotations in a store in ``data``, only the first game of each duplicate set
    played: every played game's deck is still to be played by the other two. (tournament id, played game ids,
    pending game ids)."""
    entrants = [{"name": f"e{i}", "policy": "random"} for i in range(len(names))]
    spec = {"name": "halfway", "seed": 11, "table_size": 3, "deals": 2, "seat_orders": "rotations"}
    config = parse({**spec, "entrants": entrants}, "<test>")
    config = dataclasses.replace(
        config, entrants=tuple(dataclasses.replace(e, name=n) for e, n in zip(config.entrants, names, strict=True))
    )
    played, pending = [], []
    with open_store(data) as store:
        for slot in create_tournament(store, config, "<test>"):
            if slot.order != 0:
                pending.append(slot.game_id)
                continue
            rec = self_play_record(slot.deck_seed, slot.seats, game_id=slot.game_id, play_seed=slot.slot,
                                   tournament_id=config.tournament_id)  # fmt: skip
            path = store.records / f"{slot.game_id}.abluxx"
            path.write_bytes(record_bytes(rec))
            store.save_game(config.tournament_id, slot, _result(rec, path))
            played.append(slot.game_id)
    return config.tournament_id, played, pending


def slow_game_in_play(site: Site, slow_address: str, name: str = "inplay") -> tuple[str, str]:
    """Starts a tournament ``name`` of the slow bot at ``slow_address`` against a built-in one, two seat orders of
    one deal, and waits for its leaderboard to link a game in play: (tournament id, that game's id)."""
    s = stub(site.address)
    c = config(name, [{"name": "slow", "address": slow_address}, {"name": "house", "policy": "random"}],
               table_size=2, deals=1, seed=2, seat_orders="rotations", concurrency=1)  # fmt: skip
    tid = s.CreateTournament(ref_pb.CreateTournamentRequest(config=c), metadata=auth(ORGANISER)).tournament_id
    s.StartTournament(ref_pb.StartTournamentRequest(tournament_id=tid), metadata=auth(ORGANISER))
    deadline = time.monotonic() + 120
    while not (live := re.findall(r'href="/g/([^"]+)"', get(f"{site.url}/t/{tid}")[2])):
        assert time.monotonic() < deadline, "no game of the tournament was ever in play"
        time.sleep(0.1)
    return tid, live[0]
