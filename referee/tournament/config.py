"""The tournament configuration file (TOML): parsing and checking it before anything runs.

A mistake is refused with a ``ConfigError`` that names the file, the key and the reason.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shlex
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from referee.engine import Options
from referee.fleet.lineup import Bot
from referee.fleet.sandbox import LIMIT_RANGES, Limits, Sandbox
from referee.fleet.settings import BACKENDS, MAX_WORKERS, WorkerSettings, default_workers
from referee.match.builtin import is_builtin
from referee.match.spec import RANGES, TimeControl
from referee.netaddr import dial_problem
from referee.terminal import said

from .counts import MAX_GAMES, size
from .problems import ConfigError as ConfigError  # where a config's mistakes are collected; callers read it here
from .problems import every_problem
from .table import Table as Table  # the checker of a TOML table; the server's settings read it here

SEAT_ORDERS = ("across", "rotations", "all")
_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,40}")  # whole strings only (fullmatch: $ also matches before a final newline)


@dataclass(frozen=True)
class EntrantConfig:
    """One entrant: a running bot at ``address``, a local bot ``command`` the referee starts, or a built-in
    ``policy``. Entrants with the same ``owner`` never receive the same deck (None: the entrant is its own owner).
    A command with ``sandbox`` runs in the sandbox (docs/sandbox.md), with ``files``, its folder, read-only."""

    name: str
    address: str | None = None
    command: tuple[str, ...] | None = None
    policy: str | None = None
    owner: str | None = None
    sandbox: bool = False
    files: str | None = None

    def bot(self, limits: Limits | None = None) -> Bot:
        """The entrant as the fleet starts, dials or runs it; a sandboxed one under ``limits`` (the defaults)."""
        box = Sandbox(self.files, limits or Limits()) if self.sandbox else None
        return Bot(self.name, self.address, self.command, self.policy, box)


@dataclass(frozen=True)
class LadderSettings:
    """The ``[ladder]`` table: the tournament is a ladder, its tables chosen whenever a game slot and idle
    entrants are free, from the results so far (tournament/ladder.py, docs/tournaments.md "Ladders"). Every key
    has a default."""

    tables: int = 0  # at most this many tables a choice; 0: as many as the free slots and idle entrants fill
    games: int | None = None  # the games budget; None: until stopped
    sigma_target: float = 2.0  # an entrant whose sigma is under it is settled: seated only as an opponent
    new_games: int = 10  # an entrant with fewer scheduled games than this is seated first (0: no preference)
    # one pair meets at most this often within `meeting_window` rounds (relaxed when no other opponent is left);
    # 0, the default: no cap, as neighbours in mu should meet often (docs/tournaments.md, "Ladders")
    max_meetings: int = 0
    meeting_window: int = 10  # in choices
    open: bool = False  # the service adds submitted bots at the next choice (docs/service.md)
    games_per_hour: int = 0  # pacing: at most this many games started an hour; 0: as fast as slots free up
    max_concurrent: int = 0  # at most this many games at once; 0: the run's concurrency
    games_at_once: int = 1  # games one entrant plays at a time, unless its submission asks for more
    games_at_once_cap: int = 4  # the most a submission may ask for
    deal_tables: int = 0  # tables that share one deal (a duplicate set); 0: as many as the owners allow


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
    # a command entrant whose process ends mid-run: "on-crash" starts it again (at most max_restarts times per
    # entrant and run), "never" leaves it down; how the run goes, not what it plays (not in the identity)
    restart: str = "on-crash"
    max_restarts: int = 5
    workers: WorkerSettings = field(default_factory=WorkerSettings)
    options: Options = field(default_factory=Options)
    time_control: TimeControl = field(default_factory=TimeControl)
    ladder: LadderSettings | None = None  # a ladder (docs/tournaments.md "Ladders"); None: a round robin
    sandbox: Limits = field(default_factory=Limits)  # the [sandbox] table: every sandboxed entrant's limits

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["entrants"] = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in e.items()
                          if v is not None and v is not False} for e in d["entrants"]]  # fmt: skip
        if self.sandbox == Limits():
            del d["sandbox"]  # at its defaults it is left out: configs written before it keep their identity
        if not d["public_deals"]:
            del d["public_deals"]  # the default is left out, so configs written before it keep their identity
        d["workers"] = {k: v for k, v in d["workers"].items() if v is not None}
        if self.workers == WorkerSettings():
            del d["workers"]
        if d["ladder"] is None:
            del d["ladder"]  # a round robin's config keeps the identity it had before ladders
        else:
            d["ladder"] = {k: v for k, v in d["ladder"].items() if v is not None}
            for k, default in _LADDER_ADDED.items():  # keys added later: at their default, a stored ladder's
                if d["ladder"].get(k) == default:  # identity stays what it was, so its file still resumes it
                    del d["ladder"][k]
            for k in _NOT_IN_LADDER:  # its rounds decide them
                del d[k]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TournamentConfig:
        return parse(d, "<stored config>")

    def identity(self) -> str:
        """A short hash of everything that decides the games (not ``concurrency``, ``fresh_process``, ``restart``,
        ``max_restarts`` or ``workers``, which say how they are run): the same file names the same tournament, so
        running it again resumes it."""
        d = self.to_json()
        d.pop("concurrency")
        d.pop("fresh_process")
        d.pop("restart")
        d.pop("max_restarts")
        d.pop("workers", None)
        d.pop("sandbox", None)  # how sandboxed bots run, not what they play
        for e in d["entrants"]:
            e.pop("sandbox", None)
        blob = json.dumps(d, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:8]

    @functools.cached_property
    def tournament_id(self) -> str:
        """Its name and identity (kept: a ladder asks for it at every choice and every game)."""
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
        "fresh_process", "restart", "max_restarts", "workers", "options", "time_control", "entrants",
        "ladder", "sandbox"}  # fmt: skip
_LADDER = {"tables", "games", "sigma_target", "new_games", "max_meetings", "meeting_window", "open", "games_per_hour",
           "max_concurrent", "games_at_once", "games_at_once_cap", "deal_tables"}  # fmt: skip
# the [ladder] keys added with continuous choices, and their defaults (left out of the identity at the default)
_LADDER_ADDED = {
    k: getattr(LadderSettings(), k)
    for k in ("games_per_hour", "max_concurrent", "games_at_once", "games_at_once_cap", "deal_tables")
}
_NOT_IN_LADDER = ("deals", "tables", "seat_orders")  # a round robin's keys; a ladder's rounds decide these
_WORKERS = {"backend", "count", "ray_address"}
_OPTIONS = {"draw_one", "end_on_empty_pile"}
_TIME = ("decision_ms", "bank_ms", "grace_ms")
_ENTRANT = {"name", "address", "command", "policy", "owner", "sandbox", "files"}
POLICIES = ("random", "greedy", "counter", "hoard")


def time_control(top: Table) -> TimeControl:
    """The ``[time_control]`` table of ``top``: each of its keys in RANGES (match/spec.py), the default where left
    out. A tournament file and the server's settings share it."""
    tc, default = top.table("time_control", _TIME), TimeControl()
    return TimeControl(**{k: tc.integer(k, getattr(default, k), *RANGES[k]) for k in _TIME})


def address_problem(address: Any) -> str | None:
    """Why ``address`` is not a bot's host:port (port 1 to 65535), or None when it is one."""
    return dial_problem(address)


def check_address(src: str, key: str, address: Any) -> str:
    if problem := address_problem(address):
        raise ConfigError(src, key, problem)
    return address


def parse(data: dict[str, Any], source: str, default_name: str = "tournament") -> TournamentConfig:
    """Check a parsed config mapping; raises ConfigError naming every mistake it finds (problems.every_problem)."""
    return every_problem(lambda rest: _parse(rest, source, default_name), data, source)


def _parse(data: dict[str, Any], source: str, default_name: str) -> TournamentConfig:
    """Check a parsed config mapping; raises ConfigError on the first mistake."""
    src = source
    top = Table(data, src, known=_TOP)
    name = top.get("name", default_name)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(src, "name", f"the tournament's name {said(name)} must be 1-40 letters, digits or _.+-")
    ladder = _ladder(top) if "ladder" in data else None
    open_ladder = ladder is not None and ladder.open
    # an open ladder may list none (its stored form keeps the empty list: the same check reads it back at Start)
    entrants = [] if open_ladder and data.get("entrants") in (None, []) else _entrants(top.get("entrants"), src)
    if len(entrants) < 2 and not open_ladder:
        raise ConfigError(src, "entrants", "a tournament needs at least 2 entrants")
    table_size = top.integer("table_size", 2, 2, 5)
    if table_size > len(entrants) and not open_ladder:
        raise ConfigError(src, "table_size", f"{table_size} is more than the {len(entrants)} entrants")
    if ladder is None:
        seat_orders, deals, tables = _round_robin(top, entrants, table_size)
    else:
        if given := [k for k in _NOT_IN_LADDER if k in data]:
            raise ConfigError(src, given[0], "a ladder chooses its tables and deals as it goes: leave it out (the "
                              "[ladder] table has tables, per choice)")  # fmt: skip
        seat_orders, deals, tables = "across", 1, 0
    opts = top.table("options", _OPTIONS)
    return TournamentConfig(
        name=name,
        entrants=tuple(entrants),
        seed=top.integer("seed", 1, 0, 2**63 - 1),
        table_size=table_size,
        deals=deals,
        tables=tables,
        seat_orders=seat_orders,
        concurrency=top.integer("concurrency", 8, 1, 1024),
        max_strikes=top.integer("max_strikes", 3, *RANGES["max_strikes"]),
        public_deals=top.boolean("public_deals", False),
        fresh_process=top.boolean("fresh_process", False),
        restart=_restart(top),
        max_restarts=top.integer("max_restarts", 5, 0, MAX_RESTARTS),
        workers=_workers(top),
        options=Options(**{k: opts.boolean(k, False) for k in _OPTIONS}),
        time_control=time_control(top),
        ladder=ladder,
        sandbox=sandbox_limits(top),
    )


def sandbox_limits(top: Table) -> Limits:
    """The ``[sandbox]`` table of ``top``: each limit in LIMIT_RANGES (fleet/sandbox.py), the default where left out.
    A tournament file and the server's settings share it."""
    t, default = top.table("sandbox", {*LIMIT_RANGES, "one_cpu"}), Limits()
    sizes = {k: t.integer(k, getattr(default, k), *LIMIT_RANGES[k]) for k in LIMIT_RANGES}
    return Limits(**sizes, one_cpu=t.boolean("one_cpu", default.one_cpu))


RESTARTS = ("on-crash", "never")
MAX_RESTARTS = 1000


def _restart(top: Table) -> str:
    restart = top.get("restart", "on-crash")
    if restart not in RESTARTS:
        raise top.error("restart", f"{said(restart)} must be one of: {', '.join(RESTARTS)}")
    return restart


def _round_robin(top: Table, entrants: list[EntrantConfig], table_size: int) -> tuple[str, int, int]:
    """A round robin's seat_orders, deals and tables, checked against its entrants."""
    src = top.source
    # head to head (as many entrants as seats) has no other table to take a deal across to
    seat_orders = top.get("seat_orders", "across" if len(entrants) > table_size else "rotations")
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
    deals = top.integer("deals", 1, 1, 100_000)
    tables = top.integer("tables", 0, 0, 1_000_000)
    games = size(len(entrants), table_size, tables, deals, seat_orders, owners)
    if games > MAX_GAMES:
        raise ConfigError(
            src,
            "entrants",
            f"{len(entrants)} entrants at tables of {table_size} make a schedule of {games:,} games; at most "
            f"{MAX_GAMES:,}: sample the tables (tables = N), or play fewer deals or entrants",
        )
    return seat_orders, deals, tables


MAX_LADDER_GAMES = 10**9


def _ladder(top: Table) -> LadderSettings:
    """The ``[ladder]`` table: each key checked, the default where left out (LadderSettings)."""
    if not isinstance(top.get("ladder"), dict):
        raise top.error("ladder", "must be a table: [ladder] with tables, games, sigma_target, ...")
    t, d = top.table("ladder", _LADDER), LadderSettings()
    games = None
    if "games" in t.data:
        if t.data["games"] == 0:
            raise t.error("games", "a budget of 0 games plays nothing: give 1 or more, or leave games out to run "
                          "the ladder until it is stopped")  # fmt: skip
        games = t.integer("games", 1, 1, MAX_LADDER_GAMES)
    cap = t.integer("games_at_once_cap", d.games_at_once_cap, 1, 64)
    at_once = t.integer("games_at_once", d.games_at_once, 1, 64)
    if at_once > cap:
        raise t.error("games_at_once", f"{at_once} is more than games_at_once_cap ({cap})")
    sigma = t.get("sigma_target", d.sigma_target)
    if isinstance(sigma, bool) or not isinstance(sigma, int | float) or not 0 < sigma <= 100:
        raise t.error("sigma_target", f"must be a number above 0 and at most 100, not {said(sigma)}")
    return LadderSettings(
        tables=t.integer("tables", d.tables, 0, 100_000),
        games=games,
        sigma_target=float(sigma),
        new_games=t.integer("new_games", d.new_games, 0, 1_000_000),
        max_meetings=t.integer("max_meetings", d.max_meetings, 0, 1_000_000),
        meeting_window=t.integer("meeting_window", d.meeting_window, 1, 1_000_000),
        open=t.boolean("open", d.open),
        games_per_hour=t.integer("games_per_hour", d.games_per_hour, 0, 10_000_000),
        max_concurrent=t.integer("max_concurrent", d.max_concurrent, 0, 1024),
        games_at_once=at_once,
        games_at_once_cap=cap,
        deal_tables=t.integer("deal_tables", d.deal_tables, 0, 1024),
    )


def _entrants(raw: Any, src: str) -> list[EntrantConfig]:
    """The [[entrants]] tables, checked one by one; their names must differ."""
    if not isinstance(raw, list) or not raw:
        raise ConfigError(src, "entrants", "missing: list at least 2 entrants as [[entrants]] tables")
    entrants: list[EntrantConfig] = []
    seen: set[str] = set()
    for i, e in enumerate(raw):
        entrants.append(_entrant(e, i, src, seen))
        seen.add(entrants[-1].name)
    return entrants


def _entrant(e: Any, i: int, src: str, seen: set[str]) -> EntrantConfig:
    """The ``i``-th [[entrants]] table: a name not in ``seen``, exactly one of address, command or policy, and
    maybe an owner."""
    at = f"entrants[{i}]."
    who = f"entrant {i + 1}"  # people count from 1; the key keeps the list index
    if not isinstance(e, dict):
        raise ConfigError(src, f"entrants[{i}]", f"{who} must be a table with name and address, command or policy")
    Table(e, src, f"entrants[{i}]", _ENTRANT)
    ename = e.get("name")
    if ename is None or ename == "":
        raise ConfigError(src, at + "name", f"{who} has no name (give it 1-40 letters, digits or _.+-)")
    if not isinstance(ename, str) or not _NAME.fullmatch(ename):
        raise ConfigError(src, at + "name", f"{who}'s name {said(ename)} must be 1-40 letters, digits or _.+-")
    if ename in seen:
        raise ConfigError(src, at + "name", f"{who}'s name {said(ename)} is used twice")
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
        if not isinstance(policy, str) or policy == "fallback" or not is_builtin(policy):
            known = ", ".join(POLICIES)
            raise ConfigError(src, at + "policy", f"{who} ({ename}): no policy {said(policy)} (known: {known}, "
                              "each also noisy as NAME+epsP, e.g. greedy+eps0.2)")  # fmt: skip
    owner = e.get("owner")
    if owner is not None and (not isinstance(owner, str) or not _NAME.fullmatch(owner)):
        raise ConfigError(src, at + "owner", f"{who}'s owner {said(owner)} must be 1-40 letters, digits or _.+-")
    boxed, files = _sandboxed(Table(e, src, f"entrants[{i}]"), command is not None)
    return EntrantConfig(ename, address, command, policy, owner, boxed, files)


def _sandboxed(e: Table, command: bool) -> tuple[bool, str | None]:
    """An entrant's ``sandbox`` (only for a command) and ``files`` (only with a sandbox: an existing folder, kept
    as its absolute path; a relative one is from the current folder, where commands run)."""
    boxed = e.boolean("sandbox", False)
    if boxed and not command:
        raise e.error("sandbox", "is for command entrants (the referee starts them in the sandbox)")
    files = e.get("files")
    if files is None:
        return boxed, None
    if not boxed:
        raise e.error("files", "is the folder of a sandboxed bot: give sandbox = true too")
    if not isinstance(files, str) or not Path(files).is_dir():
        raise e.error("files", f"{said(files)} is not a folder")
    return boxed, str(Path(files).resolve())


def _workers(top: Table) -> WorkerSettings:
    """The ``[workers]`` table: ``count`` alone means local worker processes."""
    if not isinstance(top.get("workers", {}), dict):
        raise top.error("workers", "must be a table: [workers] with count, backend, ray_address")
    raw = top.table("workers", _WORKERS)
    backend = raw.get(
        "backend", "ray" if "ray_address" in raw.data else "processes" if "count" in raw.data else "inline"
    )
    if backend not in BACKENDS:
        raise raw.error("backend", f"{said(backend)} must be one of: {', '.join(BACKENDS)}")
    count = raw.integer("count", 1 if backend == "inline" else default_workers(), 1, MAX_WORKERS)
    address = raw.get("ray_address")
    if address is not None and (backend != "ray" or not isinstance(address, str) or not address):
        raise raw.error("ray_address", 'names a Ray cluster (host:port) for backend = "ray" only')
    return WorkerSettings(backend, count, address)
