"""The server's own settings: a TOML file (``abluxx serve --config FILE``) and the environment.

    [auth]
    organiser_tokens = ["s3cret"]          # may do everything
    open_reads = true                      # false: read calls need a token too
    max_failed_signins = 10                # unknown tokens per address, and per token, in one window ...
    signin_window_s = 60                   # ... of this long; past it, sign-ins from there are refused
    [auth.authors]                         # author name = token; may submit and retire their own bots
    alice = "alice-token"

    [service]
    spectator_delay_ms = 2000              # WatchGame runs this far behind a live game
    shutdown_grace_s = 30                  # SIGTERM: how long in-flight games may take to finish
    validation_opponents = ["greedy", "random"]   # built-in bots the validation game is played against
    max_watchers = 1000                    # Watch* streams open at once, in all
    max_watchers_per_client = 20           # ... per token, or per address for callers without one
    watch_queue = 5000                     # game events waiting for a slow tournament watcher; one more drops it
    watch_write_timeout_s = 60             # a Watch stream whose client takes no message for this long is ended
    max_bots_per_author = 20               # active bots one author may own
    max_open_tournaments = 20              # created or running tournaments per organiser
    max_dialins = 500                      # bots dialled in (BotGateway connections) at once, in all
    max_dialins_per_author = 8             # ... per author
    dialin_hello_s = 10                    # a new connection must send its DialIn within this
    keepalive_s = 30                       # a ping on every connection this often (a half-open one is found) ...
    keepalive_timeout_s = 10               # ... answered within this, or the connection is closed

    [http]                                 # the web site (docs/web.md); served only with a port, here or --http-port
    port = 8080                            # 0 picks a free one
    host = "127.0.0.1"
    max_event_streams = 200                # the site's live-update (SSE) streams open at once, in all
    max_event_streams_per_client = 4       # ... per signed-in author, or per address for visitors
    page_size = 50                         # rows in each page of a list
    session_hours = 12                     # how long a sign-in lasts
    allowed_hosts = ["site.example"]       # Host names the site answers to, beside localhost and its own address
    header_timeout_s = 10                  # a connection must send a whole request head within this
    idle_timeout_s = 5                     # an idle kept-alive connection is closed after this
    render_processes = 2                   # processes that render pages, below the service's priority (0: none)
    grpc_address = "referee.example.org:50050"  # the address entrants dial, shown on the how-to-enter page
    trusted_proxies = ["127.0.0.1"]        # proxies whose X-Forwarded-For/-Proto the site believes
    public_origin = "https://site.example" # the address readers use: Secure cookies, forms accepted from it

    [health]                               # a ladder's down bots (docs/bot-health.md)
    first_probe_s = 5                      # a down bot's first Hello probe; the interval doubles ...
    max_probe_s = 600                      # ... up to this
    suspend_after_s = 86400                # down longer than this: suspended until its author submits again
    probe_timeout_s = 10                   # one probe's wait for the Hello

    [time_control]                         # the normal time control: validation games and tournament default
    decision_ms = 1000
    bank_ms = 10000
    grace_ms = 50

    [uploads]                              # uploaded bots (docs/sandbox.md)
    max_mb = 32                            # an upload's size, as sent
    unpacked_mb = 128                      # its files unpacked, together
    max_files = 2000                       # its files, folders and links
    output_kb = 64                         # the bot's own output kept from its checks

    [sandbox]                              # each uploaded bot's limits (docs/sandbox.md): memory_mb, processes,
    memory_mb = 2048                       # open_files, file_size_mb, tmp_mb, one_cpu

    [addresses]                            # where SubmitBot may dial (addresses.py)
    allow = []                             # CIDR networks; empty: anywhere not denied
    deny = ["169.254.0.0/16", "fe80::/10"] # the default: link-local (cloud metadata services live there)
    allow_unix = false                     # unix: and unix-abstract: sockets

Tokens may also come from the environment: ``ABLUXX_ORGANISER_TOKENS=tok1,tok2`` and
``ABLUXX_AUTHOR_TOKENS=alice:tok,bob:tok``. A mistake is refused with a ``ConfigError`` naming the key.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from referee.fleet.sandbox import Limits
from referee.match.spec import TimeControl
from referee.tournament.config import POLICIES, ConfigError, Table, said, sandbox_limits, time_control
from referee.tournament.health import HealthSettings

from .addresses import AddressPolicy
from .uploads import UploadSettings

NAME = re.compile(r"[A-Za-z0-9_.+-]{1,40}")  # fullmatch only: $ also matches before a final newline
MIN_TOKEN_CHARS = 8
_LIMITS = {  # [service] key: (default, highest allowed); docs/security.md lists each
    "max_watchers": (1000, 1_000_000),
    "max_watchers_per_client": (20, 1_000_000),
    "watch_queue": (5000, 1_000_000),
    "max_bots_per_author": (20, 1_000_000),
    "max_open_tournaments": (20, 1_000_000),
    "watch_write_timeout_s": (60, 86_400),
    "max_dialins": (500, 1_000_000),
    "max_dialins_per_author": (8, 1_000_000),
    "dialin_hello_s": (10, 600),
    "keepalive_s": (30, 86_400),
    "keepalive_timeout_s": (10, 3600),
}
_HTTP_LIMITS = {  # [http] key: (default, lowest, highest allowed); docs/security.md lists each
    "max_event_streams": (200, 1, 1_000_000),
    "max_event_streams_per_client": (4, 1, 1_000_000),
    "page_size": (50, 1, 1000),
    "session_hours": (12, 1, 24 * 30),
    "header_timeout_s": (10, 1, 3600),
    "idle_timeout_s": (5, 1, 3600),
    "render_processes": (2, 0, 64),
}
_HTTP_KEYS = ("trusted_proxies", "public_origin")  # running behind a proxy (docs/web.md)
_AUTH_LIMITS = {  # [auth] key: (default, lowest, highest allowed); docs/security.md lists each
    "max_failed_signins": (10, 1, 1_000_000),
    "signin_window_s": (60, 1, 86_400),
}
_HEALTH_LIMITS = {  # [health] key: (default, lowest, highest allowed) in seconds; docs/security.md lists each
    "first_probe_s": (5, 1, 3600),
    "max_probe_s": (600, 1, 86_400),
    "suspend_after_s": (86_400, 60, 365 * 86_400),
    "probe_timeout_s": (10, 1, 600),
}
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")  # Host names the site always answers to
GRPC_ADDRESS = re.compile(r"([A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}")
HOST_NAME = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]")  # [::1]: IPv6
RESERVED_AUTHOR = re.compile(r"organiser\d*", re.IGNORECASE)  # the organisers' own names (auth.Principal)


@dataclass(frozen=True)
class HttpSettings:
    """The web site's settings: ``port`` None serves no site (``abluxx serve --http-port`` may give one)."""

    port: int | None = None
    host: str = "127.0.0.1"
    max_event_streams: int = _HTTP_LIMITS["max_event_streams"][0]
    max_event_streams_per_client: int = _HTTP_LIMITS["max_event_streams_per_client"][0]
    page_size: int = _HTTP_LIMITS["page_size"][0]
    session_hours: int = _HTTP_LIMITS["session_hours"][0]
    header_timeout_s: int = _HTTP_LIMITS["header_timeout_s"][0]
    idle_timeout_s: int = _HTTP_LIMITS["idle_timeout_s"][0]
    render_processes: int = _HTTP_LIMITS["render_processes"][0]  # processes that render pages; 0: the site's thread
    allowed_hosts: tuple[str, ...] = ()  # beside LOCAL_HOSTS and ``host`` (see hosts)
    grpc_address: str = ""  # the referee's gRPC address as entrants dial it (the how-to-enter page); "": not given
    trusted_proxies: tuple[str, ...] = ()  # addresses or networks whose X-Forwarded-* headers are believed
    public_origin: str = ""  # e.g. https://referee.example.org: what readers' browsers call the site

    def hosts(self) -> list[str]:
        """The Host names the site answers to: localhost, its own address unless a wildcard, the public origin's
        and allowed_hosts."""
        bare = self.host.strip("[]")
        own = [] if bare in ("0.0.0.0", "::") else [f"[{bare}]" if ":" in bare else bare]
        public = [urlsplit(self.public_origin).hostname or ""] if self.public_origin else []
        return list(dict.fromkeys([*LOCAL_HOSTS, *own, *public, *self.allowed_hosts]))


@dataclass(frozen=True)
class Settings:
    organiser_tokens: tuple[str, ...] = ()
    author_tokens: Mapping[str, str] = field(default_factory=dict)  # author -> token
    open_reads: bool = True
    max_failed_signins: int = _AUTH_LIMITS["max_failed_signins"][0]
    signin_window_s: int = _AUTH_LIMITS["signin_window_s"][0]
    spectator_delay_ms: int = 2000
    shutdown_grace_s: float = 30.0
    validation_opponents: tuple[str, ...] = ("greedy", "random")
    time_control: TimeControl = field(default_factory=TimeControl)
    addresses: AddressPolicy = field(default_factory=AddressPolicy)
    max_watchers: int = _LIMITS["max_watchers"][0]
    max_watchers_per_client: int = _LIMITS["max_watchers_per_client"][0]
    watch_queue: int = _LIMITS["watch_queue"][0]
    max_bots_per_author: int = _LIMITS["max_bots_per_author"][0]
    max_open_tournaments: int = _LIMITS["max_open_tournaments"][0]  # created or running, per organiser
    watch_write_timeout_s: int = _LIMITS["watch_write_timeout_s"][0]
    max_dialins: int = _LIMITS["max_dialins"][0]  # BotGateway connections open at once, in all
    max_dialins_per_author: int = _LIMITS["max_dialins_per_author"][0]  # ... per author
    dialin_hello_s: int = _LIMITS["dialin_hello_s"][0]  # a new connection's DialIn, and an OpenGame's write, within
    keepalive_s: int = _LIMITS["keepalive_s"][0]  # the server pings every connection this often ...
    keepalive_timeout_s: int = _LIMITS["keepalive_timeout_s"][0]  # ... and closes one that does not answer in this
    http: HttpSettings = field(default_factory=HttpSettings)
    health: HealthSettings = field(default_factory=HealthSettings)
    uploads: UploadSettings = field(default_factory=UploadSettings)
    sandbox: Limits = field(default_factory=Limits)


_UPLOAD_LIMITS = {"max_mb": (1, 1024), "unpacked_mb": (1, 16384), "max_files": (1, 1_000_000), "output_kb": (1, 65536)}


def _uploads(table: Table) -> UploadSettings:
    return UploadSettings(**{k: table.integer(k, getattr(UploadSettings, k), *r) for k, r in _UPLOAD_LIMITS.items()})


def _token(source: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or len(value) < MIN_TOKEN_CHARS or any(c.isspace() or c in ",:" for c in value):
        raise ConfigError(
            source, key, f"a token must be at least {MIN_TOKEN_CHARS} characters, without spaces, ',' or ':'"
        )
    return value


def _author(source: str, key: str, name: str) -> None:
    if not NAME.fullmatch(name):
        raise ConfigError(source, key, "an author name must be 1-40 letters, digits or _.+-")
    if RESERVED_AUTHOR.fullmatch(name):
        # an organiser's bots submitted without an owner belong to 'organiser': an author of that name would own them
        raise ConfigError(source, key, f"the author name {name!r} is reserved for organisers")


def parse(data: Mapping[str, Any], source: str, env: Mapping[str, str] | None = None) -> Settings:
    """Settings from a parsed TOML mapping plus the environment ``env`` (default: os.environ)."""
    env = os.environ if env is None else env
    top = Table(data, source, known={"auth", "service", "time_control", "addresses", "http", "health", "uploads",
                                     "sandbox"})  # fmt: skip
    auth = top.table("auth", {"organiser_tokens", "open_reads", "authors", *_AUTH_LIMITS})
    if isinstance(top.get("service"), dict) and "validation_seed" in top.get("service"):
        raise ConfigError(
            source,
            "service.validation_seed",
            "no longer a setting: every validation game is dealt a fresh random deck (a fixed one let a bot learn "
            "the validation deal); delete the line",
        )
    service = top.table("service", {"spectator_delay_ms", "shutdown_grace_s", "validation_opponents", *_LIMITS})
    addresses = top.table("addresses", {"allow", "deny", "allow_unix"})

    raw = auth.get("organiser_tokens", [])
    if not isinstance(raw, list):
        raise auth.error("organiser_tokens", "must be a list of strings")
    organisers = [_token(source, f"auth.organiser_tokens[{i}]", t) for i, t in enumerate(raw)]
    if env.get("ABLUXX_ORGANISER_TOKENS"):
        organisers += [
            _token("ABLUXX_ORGANISER_TOKENS", f"[{i}]", t.strip())
            for i, t in enumerate(env["ABLUXX_ORGANISER_TOKENS"].split(","))
        ]
    authors_raw = auth.get("authors", {})
    if not isinstance(authors_raw, dict):
        raise auth.error("authors", "must be a table of author = token")
    authors: dict[str, str] = {}
    for name, t in authors_raw.items():
        _author(source, f"auth.authors.{name}", name)
        authors[name] = _token(source, f"auth.authors.{name}", t)
    for i, pair in enumerate(filter(None, (p.strip() for p in env.get("ABLUXX_AUTHOR_TOKENS", "").split(",")))):
        name, sep, t = pair.partition(":")
        if not sep:
            raise ConfigError("ABLUXX_AUTHOR_TOKENS", f"[{i}]", "expected name:token pairs separated by commas")
        _author("ABLUXX_AUTHOR_TOKENS", f"[{i}]", name)
        authors[name] = _token("ABLUXX_AUTHOR_TOKENS", f"[{i}]", t)
    every = organisers + list(authors.values())
    if len(set(every)) != len(every):
        raise ConfigError(source, "auth", "the same token is given twice; every organiser and author needs their own")

    opponents = service.get("validation_opponents", list(Settings.validation_opponents))
    if not isinstance(opponents, list) or not 1 <= len(opponents) <= 4 or any(o not in POLICIES for o in opponents):
        raise service.error("validation_opponents", f"1 to 4 of: {', '.join(POLICIES)}")
    grace = service.get("shutdown_grace_s", Settings.shutdown_grace_s)
    if isinstance(grace, bool) or not isinstance(grace, int | float) or not 0 <= grace <= 3600:
        raise service.error("shutdown_grace_s", f"must be 0 to 3600 seconds, not {said(grace)}")
    policy = AddressPolicy(
        allow=_networks(addresses, "allow", []),
        deny=_networks(addresses, "deny", [str(n) for n in AddressPolicy.deny]),
        allow_unix=addresses.boolean("allow_unix", False),
    )
    return Settings(
        organiser_tokens=tuple(organisers),
        author_tokens=authors,
        open_reads=auth.boolean("open_reads", True),
        **{k: auth.integer(k, v, lo, hi) for k, (v, lo, hi) in _AUTH_LIMITS.items()},
        spectator_delay_ms=service.integer("spectator_delay_ms", Settings.spectator_delay_ms, 0, 3_600_000),
        shutdown_grace_s=float(grace),
        validation_opponents=tuple(opponents),
        time_control=time_control(top),
        addresses=policy,
        http=_http(top.table("http", {"port", "host", "allowed_hosts", "grpc_address", *_HTTP_KEYS, *_HTTP_LIMITS})),
        health=_health(top.table("health", set(_HEALTH_LIMITS))),
        uploads=_uploads(top.table("uploads", set(_UPLOAD_LIMITS))),
        sandbox=sandbox_limits(top),
        **{k: service.integer(k, v, 1, hi) for k, (v, hi) in _LIMITS.items()},
    )


def _http(table: Table) -> HttpSettings:
    host = table.get("host", HttpSettings.host)
    if not isinstance(host, str) or not host:
        raise table.error("host", f"must be an address to listen on, not {said(host)}")
    port = table.integer("port", 0, 0, 65535) if "port" in table.data else None
    limits = {k: table.integer(k, v, lo, hi) for k, (v, lo, hi) in _HTTP_LIMITS.items()}
    hosts = table.get("allowed_hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) and HOST_NAME.fullmatch(h) for h in hosts):
        raise table.error(
            "allowed_hosts", 'must be a list of host names without port (e.g. ["referee.example.org", "*.example.org"])'
        )
    dial = table.get("grpc_address", "")
    if not isinstance(dial, str) or (dial and not GRPC_ADDRESS.fullmatch(dial)):
        raise table.error(
            "grpc_address", f"must be HOST:PORT as entrants dial it (referee.example.org:50050), not {said(dial)}"
        )
    return HttpSettings(
        port=port, host=host, allowed_hosts=tuple(h.lower() for h in hosts), grpc_address=dial,
        trusted_proxies=_proxies(table), public_origin=_origin(table), **limits,
    )  # fmt: skip


def _proxies(table: Table) -> tuple[str, ...]:
    value = table.get("trusted_proxies", [])
    try:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("not a list of strings")
        return tuple(str(ipaddress.ip_network(v, strict=False)) for v in value)
    except ValueError as e:
        raise table.error(
            "trusted_proxies", f'must be a list of addresses or networks, e.g. ["127.0.0.1", "10.0.0.0/8"] ({e})'
        ) from None


def _origin(table: Table) -> str:
    value = table.get("public_origin", "")
    parts = urlsplit(value) if isinstance(value, str) else None
    if value != "" and (
        parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/")
        or parts.query or parts.fragment or parts.username is not None
    ):  # fmt: skip
        raise table.error("public_origin", f"must be the site's public address, e.g. https://referee.example.org, "
                          f"not {said(value)}")  # fmt: skip
    return value.rstrip("/").lower() if isinstance(value, str) else ""


def _health(table: Table) -> HealthSettings:
    values = {k: table.integer(k, v, lo, hi) for k, (v, lo, hi) in _HEALTH_LIMITS.items()}
    if values["max_probe_s"] < values["first_probe_s"]:
        raise table.error("max_probe_s", f"must be at least first_probe_s ({values['first_probe_s']})")
    return HealthSettings(**{k: float(v) for k, v in values.items()})


def _networks(table: Table, key: str, default: list[str]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    value = table.get(key, default)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise table.error(key, 'must be a list of CIDR networks, e.g. ["10.0.0.0/8", "fd00::/8"]')
    try:
        return tuple(ipaddress.ip_network(v) for v in value)
    except ValueError as e:
        raise table.error(key, f"not a CIDR network: {e}") from None


def load(path: str | Path | None, env: Mapping[str, str] | None = None) -> Settings:
    """The settings in the TOML file ``path`` (None: defaults) plus the environment."""
    if path is None:
        return parse({}, "<defaults>", env)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(str(path), "", f"{path}: cannot read the file ({e.strerror})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(path), "", f"{path}: not valid TOML ({e})") from None
    return parse(data, str(path), env)
