"""The tournament configuration file (TOML): parsing and checking it before anything runs.

A mistake is refused with a ``ConfigError`` that names the file, the key and the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from referee.engine import Options
from referee.errors import BadInput
from referee.match.spec import RANGES, EntrantRef, TimeControl

SEAT_ORDERS = ("across", "rotations", "all")
_ADDRESS = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})")  # whole strings only:
_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,40}")  # fullmatch, since $ also matches before a final newline


class ConfigError(BadInput):
    """A configuration that cannot run. The message names the file, the key and the reason; a problem with the
    file as a whole has no key (its reason names the file)."""

    local = True  # it names files, folders or bot addresses

    def __init__(self, source: str, key: str, reason: str) -> None:
        super().__init__(f"{source}: {key}: {reason}" if key else reason)
        self.source, self.key, self.reason = source, key, reason


def said(value: Any) -> str:
    """A value as the TOML file spells it (``true``, ``"two"``), for messages: never a Python repr like None."""
    if value is None:
        return "nothing"
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


@dataclass(frozen=True)
class EntrantConfig:
    """One entrant: a running bot at ``address``, a local bot ``command`` the referee starts, or a built-in
    ``policy``. Entrants with the same ``owner`` never receive the same deck (None: the entrant is its own owner)."""

    name: str
    address: str | None = None
    command: tuple[str, ...] | None = None
    policy: str | None = None
    owner: str | None = None

    def ref(self, address: str | None = None) -> EntrantRef:
        """The match runner's view of this entrant; a command entrant needs the address it came up on."""
        return EntrantRef(name=self.name, address=address or self.address, policy=self.policy)


BACKENDS = ("inline", "processes", "ray")  # where the games are played (docs/scale.md)
MAX_WORKERS = 256


@dataclass(frozen=True)
class WorkerSettings:
    """Where a tournament's games are played: ``inline`` in the coordinator's loop, or on ``count`` local worker
    ``processes`` or ``ray`` actors (on the cluster at ``ray_address``, else a local Ray). How, not what: it
    is not part of the tournament's identity."""

    backend: str = "inline"
    count: int = 1
    ray_address: str | None = None


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    entrants: tuple[EntrantConfig, ...]
    seed: int = 1
    table_size: int = 2
    deals: int = 1
    tables: int = 0  # 0: every set of `table_size` entrants; N: a balanced sample of about N tables
    # "across": each deal at several tables, never twice to an entrant or owner (the default when there are more
    # entrants than seats); "rotations": k games per deal at one table; "all": every seat order (k! games)
    seat_orders: str = "across"
    concurrency: int = 8
    max_strikes: int = 3
    # true: decks follow from ``seed`` (reproducible from this file; unsafe with untrusted bots, deals.py)
    public_deals: bool = False
    fresh_process: bool = False  # start command entrants afresh for every game, so they cannot remember a deal
    workers: WorkerSettings = field(default_factory=WorkerSettings)
    options: Options = field(default_factory=Options)
    time_control: TimeControl = field(default_factory=TimeControl)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["entrants"] = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in e.items() if v is not None}
                         for e in d["entrants"]]  # fmt: skip
        if not d["public_deals"]:
            del d["public_deals"]  # the default is left out, so configs written before it keep their identity
        d["workers"] = {k: v for k, v in d["workers"].items() if v is not None}
        if self.workers == WorkerSettings():
            del d["workers"]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TournamentConfig:
        return parse(d, "<stored config>")

    def identity(self) -> str:
        """A short hash of everything that decides the games (not ``concurrency``, ``fresh_process`` or
        ``workers``, which say how they are run): the same file names the same tournament, so running it again
        resumes it."""
        d = self.to_json()
        d.pop("concurrency")
        d.pop("fresh_process")
        d.pop("workers", None)
        blob = json.dumps(d, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:8]

    @property
    def tournament_id(self) -> str:
        return f"{self.name}-{self.identity()}"


def load(path: str | Path) -> TournamentConfig:
    """Read and check a TOML tournament file."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(source, "", f"cannot read {source}: {(e.strerror or str(e)).lower()}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(source, "", f"{source} is not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(source, "", f"{source} is not valid TOML: {e}") from None
    return parse(data, source, default_name=Path(path).stem)


_TOP = {"name", "seed", "table_size", "deals", "tables", "seat_orders", "concurrency", "max_strikes", "public_deals",
        "fresh_process", "workers", "options", "time_control", "entrants"}  # fmt: skip
_WORKERS = {"backend", "count", "ray_address"}
_OPTIONS = {"draw_one", "end_on_empty_pile"}
_TIME = {"decision_ms", "bank_ms", "grace_ms"}
_ENTRANT = {"name", "address", "command", "policy", "owner"}
POLICIES = ("random", "greedy", "counter")


def _int(src: str, key: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(src, key, f"must be a whole number, not {said(value)}")
    if not lo <= value <= hi:
        raise ConfigError(src, key, f"{value} is out of range ({lo} to {hi})")
    return value


def _unknown(src: str, prefix: str, got: dict, known: set[str]) -> None:
    for key in got:
        if key not in known:
            raise ConfigError(src, prefix + key, f"unknown key (known: {', '.join(sorted(known))})")


def address_problem(address: Any) -> str | None:
    """Why ``address`` is not a bot's host:port (port 1 to 65535), or None when it is one."""
    if not isinstance(address, str) or not (m := _ADDRESS.fullmatch(address)):
        return f"bad address {said(address)}: expected host:port, e.g. 127.0.0.1:50051"
    if not 1 <= int(m["port"]) <= 65535:
        return f"bad address {said(address)}: port must be 1 to 65535"
    return None


def check_address(src: str, key: str, address: Any) -> str:
    if problem := address_problem(address):
        raise ConfigError(src, key, problem)
    return address


def parse(data: dict[str, Any], source: str, default_name: str = "tournament") -> TournamentConfig:
    """Check a parsed config mapping; raises ConfigError on the first mistake."""
    src = source
    _unknown(src, "", data, _TOP)
    name = data.get("name", default_name)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(src, "name", f"the tournament's name {said(name)} must be 1-40 letters, digits or _.+-")

    raw = data.get("entrants")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(src, "entrants", "missing: list at least 2 entrants as [[entrants]] tables")
    entrants: list[EntrantConfig] = []
    seen: set[str] = set()
    for i, e in enumerate(raw):
        at = f"entrants[{i}]."
        who = f"entrant {i + 1}"  # people count from 1; the key keeps the list index
        if not isinstance(e, dict):
            raise ConfigError(src, f"entrants[{i}]", f"{who} must be a table with name and address, command or policy")
        _unknown(src, at, e, _ENTRANT)
        ename = e.get("name")
        if ename is None or ename == "":
            raise ConfigError(src, at + "name", f"{who} has no name (give it 1-40 letters, digits or _.+-)")
        if not isinstance(ename, str) or not _NAME.fullmatch(ename):
            raise ConfigError(src, at + "name", f"{who}'s name {said(ename)} must be 1-40 letters, digits or _.+-")
        if ename in seen:
            raise ConfigError(src, at + "name", f"{who}'s name {said(ename)} is used twice")
        seen.add(ename)
        given = [k for k in ("address", "command", "policy") if k in e]
        if len(given) != 1:
            raise ConfigError(src, at + "address", f"{who} ({ename}): give exactly one of address, command or policy")
        address = command = policy = None
        if "address" in e:
            address = check_address(src, at + "address", e["address"])
        elif "command" in e:
            c = e["command"]
            parts = shlex.split(c) if isinstance(c, str) else c
            if not isinstance(parts, list) or not parts or not all(isinstance(p, str) and p for p in parts):
                raise ConfigError(src, at + "command", f"{who} ({ename}): the command must be a non-empty string "
                                  "or list of strings")  # fmt: skip
            command = tuple(parts)
        else:
            policy = e["policy"]
            if policy not in POLICIES:
                known = ", ".join(POLICIES)
                raise ConfigError(src, at + "policy", f"{who} ({ename}): no policy {said(policy)} (known: {known})")
        owner = e.get("owner")
        if owner is not None and (not isinstance(owner, str) or not _NAME.fullmatch(owner)):
            raise ConfigError(src, at + "owner", f"{who}'s owner {said(owner)} must be 1-40 letters, digits or _.+-")
        entrants.append(EntrantConfig(ename, address, command, policy, owner))
    if len(entrants) < 2:
        raise ConfigError(src, "entrants", "a tournament needs at least 2 entrants")

    table_size = _int(src, "table_size", data.get("table_size", 2), 2, 5)
    if table_size > len(entrants):
        raise ConfigError(src, "table_size", f"{table_size} is more than the {len(entrants)} entrants")
    # head to head (as many entrants as seats) has no other table to take a deal across to
    seat_orders = data.get("seat_orders", "across" if len(entrants) > table_size else "rotations")
    if seat_orders not in SEAT_ORDERS:
        raise ConfigError(src, "seat_orders", f"{said(seat_orders)} must be one of: {', '.join(SEAT_ORDERS)}")
    if seat_orders == "across" and len(entrants) == table_size:
        raise ConfigError(src, "seat_orders", f'"across" needs more entrants than the {table_size} seats; use '
                          '"rotations" (it trusts the bots to forget a deal between its games)')  # fmt: skip
    owners = [e.owner or e.name for e in entrants]
    if seat_orders == "across" and len(set(owners)) < table_size:
        # across tables never seats two entrants of one owner at a table, where their author would see both hands
        raise ConfigError(src, "seat_orders", f'"across" seats entrants of {table_size} different owners at each '
                          f"table, and these entrants have {len(set(owners))}; add entrants of other owners, or use "
                          '"rotations" (it trusts the bots and their authors with a deal)')  # fmt: skip
    fresh_process = data.get("fresh_process", False)
    if not isinstance(fresh_process, bool):
        raise ConfigError(src, "fresh_process", f"must be true or false, not {said(fresh_process)}")

    public_deals = data.get("public_deals", False)
    if not isinstance(public_deals, bool):
        raise ConfigError(src, "public_deals", f"must be true or false, not {said(public_deals)}")

    workers = _workers(src, data.get("workers", {}))
    opts = data.get("options", {})
    if not isinstance(opts, dict):
        raise ConfigError(src, "options", "must be a table")
    _unknown(src, "options.", opts, _OPTIONS)
    for k, v in opts.items():
        if not isinstance(v, bool):
            raise ConfigError(src, f"options.{k}", f"must be true or false, not {said(v)}")
    tc = data.get("time_control", {})
    if not isinstance(tc, dict):
        raise ConfigError(src, "time_control", "must be a table")
    _unknown(src, "time_control.", tc, _TIME)
    default_tc = TimeControl()
    time_control = TimeControl(**{
        k: _int(src, f"time_control.{k}", tc.get(k, getattr(default_tc, k)), *RANGES[k])
        for k in ("decision_ms", "bank_ms", "grace_ms")
    })  # fmt: skip
    from .schedule import MAX_GAMES, size

    deals = _int(src, "deals", data.get("deals", 1), 1, 100_000)
    tables = _int(src, "tables", data.get("tables", 0), 0, 1_000_000)
    games = size(len(entrants), table_size, tables, deals, seat_orders, owners)
    if games > MAX_GAMES:
        raise ConfigError(
            src,
            "entrants",
            f"{len(entrants)} entrants at tables of {table_size} make a schedule of {games:,} games; at most "
            f"{MAX_GAMES:,}: sample the tables (tables = N), or play fewer deals or entrants",
        )
    return TournamentConfig(
        name=name,
        entrants=tuple(entrants),
        seed=_int(src, "seed", data.get("seed", 1), 0, 2**63 - 1),
        table_size=table_size,
        deals=deals,
        tables=tables,
        seat_orders=seat_orders,
        concurrency=_int(src, "concurrency", data.get("concurrency", 8), 1, 1024),
        max_strikes=_int(src, "max_strikes", data.get("max_strikes", 3), *RANGES["max_strikes"]),
        public_deals=public_deals,
        fresh_process=fresh_process,
        workers=workers,
        options=Options(**opts),
        time_control=time_control,
    )


def _workers(src: str, raw: Any) -> WorkerSettings:
    """The ``[workers]`` table: ``count`` alone means local worker processes."""
    if not isinstance(raw, dict):
        raise ConfigError(src, "workers", "must be a table: [workers] with count, backend, ray_address")
    _unknown(src, "workers.", raw, _WORKERS)
    backend = raw.get("backend", "ray" if "ray_address" in raw else "processes" if "count" in raw else "inline")
    if backend not in BACKENDS:
        raise ConfigError(src, "workers.backend", f"{said(backend)} must be one of: {', '.join(BACKENDS)}")
    count = _int(src, "workers.count", raw.get("count", 1 if backend == "inline" else default_workers()), 1,
                 MAX_WORKERS)  # fmt: skip
    address = raw.get("ray_address")
    if address is not None and (backend != "ray" or not isinstance(address, str) or not address):
        raise ConfigError(src, "workers.ray_address", 'names a Ray cluster (host:port) for backend = "ray" only')
    return WorkerSettings(backend, count, address)


def default_workers() -> int:
    """Workers when none are counted: one per core of this machine."""
    import os

    return max(1, os.cpu_count() or 1)
