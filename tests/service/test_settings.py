"""The server's settings (referee/service/settings.py) read from TOML and the environment, in this process so that
mutation testing sees them (scripts/mutation.py). What an operator sees: every default, every limit at its edges,
each mistake refused naming the file, the key and what is wanted, tokens from the file and the environment with no
token given twice, and the site's host names."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from referee.errors import BadInput
from referee.match.spec import TimeControl
from referee.service.settings import HttpSettings, Settings, load, parse

SRC = "server.toml"
TOKEN = "a-long-token"


def _refused(data: dict, key: str, words: str, env: dict | None = None) -> None:
    with pytest.raises(BadInput) as refused:
        parse(data, SRC, env or {})
    e = refused.value
    assert (e.source, e.key) == ((SRC if not key.startswith("ABLUXX") else key.split(" ")[0]), key.split(" ")[-1]), e
    assert e.reason == words, e.reason


def test_the_defaults() -> None:
    s = parse({}, SRC, env={})
    assert s == Settings() and s.organiser_tokens == () and dict(s.author_tokens) == {} and s.open_reads is True
    assert (s.max_failed_signins, s.signin_window_s, s.spectator_delay_ms, s.shutdown_grace_s) == (10, 60, 2000, 30.0)
    assert s.validation_opponents == ("greedy", "random") and s.time_control == TimeControl()
    assert (s.max_watchers, s.max_watchers_per_client, s.watch_queue, s.max_bots_per_author) == (1000, 20, 5000, 20)
    assert (s.max_open_tournaments, s.watch_write_timeout_s, s.max_dialins, s.max_dialins_per_author,
            s.dialin_hello_s) == (20, 60, 500, 8, 10)  # fmt: skip
    assert s.addresses.allow == () and s.addresses.allow_unix is False
    assert s.addresses.deny == (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))
    h = s.http
    assert h == HttpSettings() and h.port is None and h.host == "127.0.0.1"
    assert (h.max_event_streams, h.max_event_streams_per_client, h.page_size, h.session_hours, h.header_timeout_s,
            h.idle_timeout_s) == (200, 4, 50, 12, 10, 5)  # fmt: skip
    assert (h.allowed_hosts, h.grpc_address, h.trusted_proxies, h.public_origin) == ((), "", (), "")
    assert (s.health.first_probe_s, s.health.max_probe_s, s.health.suspend_after_s, s.health.probe_timeout_s) == (
        5.0, 600.0, 86400.0, 10.0)  # fmt: skip
    assert (s.uploads.max_mb, s.uploads.unpacked_mb, s.uploads.max_files, s.uploads.output_kb) == (32, 128, 2000, 64)


def test_every_value_is_read() -> None:
    s = parse({
        "auth": {"organiser_tokens": [TOKEN], "open_reads": False, "max_failed_signins": 3, "signin_window_s": 9,
                 "authors": {"alice": "alice-token"}},
        "service": {"spectator_delay_ms": 0, "shutdown_grace_s": 2.5, "validation_opponents": ["counter"],
                    "max_watchers": 1, "max_watchers_per_client": 2, "watch_queue": 3, "max_bots_per_author": 4,
                    "max_open_tournaments": 5, "watch_write_timeout_s": 6, "max_dialins": 7,
                    "max_dialins_per_author": 8, "dialin_hello_s": 600},
        "time_control": {"decision_ms": 700, "bank_ms": 3000, "grace_ms": 100},
        "addresses": {"allow": ["10.0.0.0/8"], "deny": [], "allow_unix": True},
        "http": {"port": 0, "host": "0.0.0.0", "max_event_streams": 1, "max_event_streams_per_client": 1,
                 "page_size": 1000, "session_hours": 720, "header_timeout_s": 3600, "idle_timeout_s": 1,
                 "allowed_hosts": ["Site.Example", "*.example.org", "[::1]"], "grpc_address": "ref.example:50050",
                 "trusted_proxies": ["127.0.0.1", "10.1.2.3/8"], "public_origin": "HTTPS://Site.Example/"},
        "health": {"first_probe_s": 1, "max_probe_s": 1, "suspend_after_s": 60, "probe_timeout_s": 600},
        "uploads": {"max_mb": 1, "unpacked_mb": 16384, "max_files": 1, "output_kb": 65536},
    }, SRC, env={})  # fmt: skip
    assert (s.organiser_tokens, dict(s.author_tokens), s.open_reads) == ((TOKEN,), {"alice": "alice-token"}, False)
    assert (s.max_failed_signins, s.signin_window_s, s.spectator_delay_ms, s.shutdown_grace_s) == (3, 9, 0, 2.5)
    assert isinstance(s.shutdown_grace_s, float) and s.validation_opponents == ("counter",)
    assert (s.max_watchers, s.max_watchers_per_client, s.watch_queue, s.max_bots_per_author, s.max_open_tournaments,
            s.watch_write_timeout_s, s.max_dialins, s.max_dialins_per_author, s.dialin_hello_s) == (
        1, 2, 3, 4, 5, 6, 7, 8, 600)  # fmt: skip
    assert s.time_control == TimeControl(decision_ms=700, bank_ms=3000, grace_ms=100)
    assert s.addresses.allow == (ipaddress.ip_network("10.0.0.0/8"),) and s.addresses.deny == ()
    assert s.addresses.allow_unix is True
    h = s.http
    assert (h.port, h.host, h.max_event_streams, h.max_event_streams_per_client, h.page_size, h.session_hours,
            h.header_timeout_s, h.idle_timeout_s) == (0, "0.0.0.0", 1, 1, 1000, 720, 3600, 1)  # fmt: skip
    assert h.allowed_hosts == ("site.example", "*.example.org", "[::1]") and h.grpc_address == "ref.example:50050"
    assert h.trusted_proxies == ("127.0.0.1/32", "10.0.0.0/8") and h.public_origin == "https://site.example"
    assert (s.health.first_probe_s, s.health.max_probe_s, s.health.suspend_after_s, s.health.probe_timeout_s) == (
        1.0, 1.0, 60.0, 600.0)  # fmt: skip
    assert isinstance(s.health.max_probe_s, float)
    assert (s.uploads.max_mb, s.uploads.unpacked_mb, s.uploads.max_files, s.uploads.output_kb) == (1, 16384, 1, 65536)


def test_tokens_come_from_the_file_and_the_environment() -> None:
    env = {"ABLUXX_ORGANISER_TOKENS": "env-org-token-1, env-org-token-2",
           "ABLUXX_AUTHOR_TOKENS": " bob:bob-token-1 ,, carol:carol-token-1,"}  # fmt: skip
    s = parse({"auth": {"organiser_tokens": [TOKEN], "authors": {"alice": "alice-token"}}}, SRC, env)
    assert s.organiser_tokens == (TOKEN, "env-org-token-1", "env-org-token-2")
    assert dict(s.author_tokens) == {"alice": "alice-token", "bob": "bob-token-1", "carol": "carol-token-1"}
    assert parse({}, SRC, {"ABLUXX_ORGANISER_TOKENS": ""}).organiser_tokens == ()
    edge = parse({"auth": {"organiser_tokens": ["8chars!!", "TOKEN-X-12"]}}, SRC, env={})
    assert edge.organiser_tokens == ("8chars!!", "TOKEN-X-12")  # 8 characters is enough; any but space , :
    edges = parse({"service": {"validation_opponents": ["greedy", "random", "counter", "hoard"], "shutdown_grace_s": 0},
                   "sandbox": {"memory_mb": 512}}, SRC, env={})  # fmt: skip
    assert edges.validation_opponents == ("greedy", "random", "counter", "hoard") and edges.shutdown_grace_s == 0.0
    assert edges.sandbox.memory_mb == 512
    assert parse({"service": {"shutdown_grace_s": 3600}}, SRC, env={}).shutdown_grace_s == 3600.0


def test_tokens_from_os_environ_when_no_env_is_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ABLUXX_ORGANISER_TOKENS", "from-the-environment")
    monkeypatch.delenv("ABLUXX_AUTHOR_TOKENS", raising=False)
    assert parse({}, SRC).organiser_tokens == ("from-the-environment",)
    assert load(None).organiser_tokens == ("from-the-environment",)
    path = tmp_path / "server.toml"
    path.write_text('[auth]\norganiser_tokens = ["from-the-file"]\n')
    assert load(path, env={}).organiser_tokens == ("from-the-file",)  # the environment given, not os.environ
    assert load(path).organiser_tokens == ("from-the-file", "from-the-environment")


TOKEN_WORDS = "a token must be at least 8 characters, without spaces, ',' or ':'"
NAME_WORDS = "an author name must be 1-40 letters, digits or _.+-"


@pytest.mark.parametrize(
    ("data", "env", "key", "words"),
    [({"auth": {"organiser_tokens": ["short"]}}, {}, "auth.organiser_tokens[0]", TOKEN_WORDS),
     ({"auth": {"organiser_tokens": [TOKEN, "has space"]}}, {}, "auth.organiser_tokens[1]", TOKEN_WORDS),
     ({"auth": {"organiser_tokens": ["has,comma1"]}}, {}, "auth.organiser_tokens[0]", TOKEN_WORDS),
     ({"auth": {"organiser_tokens": ["has:colon1"]}}, {}, "auth.organiser_tokens[0]", TOKEN_WORDS),
     ({"auth": {"organiser_tokens": [12345678]}}, {}, "auth.organiser_tokens[0]", TOKEN_WORDS),
     ({"auth": {"organiser_tokens": TOKEN}}, {}, "auth.organiser_tokens", "must be a list of strings"),
     ({"auth": {"authors": ["alice"]}}, {}, "auth.authors", "must be a table of author = token"),
     ({"auth": {"authors": {"alice": "short"}}}, {}, "auth.authors.alice", TOKEN_WORDS),
     ({"auth": {"authors": {"al/ice": "alice-token"}}}, {}, "auth.authors.al/ice", NAME_WORDS),
     ({"auth": {"authors": {"Organiser2": "alice-token"}}}, {}, "auth.authors.Organiser2",
      "the author name 'Organiser2' is reserved for organisers"),
     ({}, {"ABLUXX_ORGANISER_TOKENS": "good-token-1,bad"}, "ABLUXX_ORGANISER_TOKENS [1]", TOKEN_WORDS),
     ({}, {"ABLUXX_AUTHOR_TOKENS": "bob:bob-token-1,carol"}, "ABLUXX_AUTHOR_TOKENS [1]",
      "expected name:token pairs separated by commas"),
     ({}, {"ABLUXX_AUTHOR_TOKENS": "b b:bob-token-1"}, "ABLUXX_AUTHOR_TOKENS [0]", NAME_WORDS),
     ({}, {"ABLUXX_AUTHOR_TOKENS": "bob:short"}, "ABLUXX_AUTHOR_TOKENS [0]", TOKEN_WORDS),
     ({}, {"ABLUXX_AUTHOR_TOKENS": "bob:tok:en-12345"}, "ABLUXX_AUTHOR_TOKENS [0]", TOKEN_WORDS)],
)  # fmt: skip
def test_a_bad_token_or_author_is_refused_naming_where_it_came_from(data, env, key, words) -> None:
    _refused(data, key, words, env)


@pytest.mark.parametrize(
    ("data", "env"),
    [({"auth": {"organiser_tokens": [TOKEN, TOKEN]}}, {}),
     ({"auth": {"organiser_tokens": [TOKEN], "authors": {"alice": TOKEN}}}, {}),
     ({"auth": {"authors": {"alice": "alice-token"}}}, {"ABLUXX_AUTHOR_TOKENS": "bob:alice-token"}),
     ({"auth": {"organiser_tokens": [TOKEN]}}, {"ABLUXX_ORGANISER_TOKENS": TOKEN})],
)  # fmt: skip
def test_a_token_given_twice_is_refused(data, env) -> None:
    _refused(data, "auth", "the same token is given twice; every organiser and author needs their own", env)


@pytest.mark.parametrize(
    ("data", "key", "words"),
    [({"nope": {}}, "nope", "unknown key (known: addresses, auth, health, http, sandbox, service, time_control, "
      "uploads)"),
     ({"auth": {"nope": 1}}, "auth.nope", "unknown key (known: authors, max_failed_signins, open_reads, "
      "organiser_tokens, signin_window_s)"),
     ({"service": {"validation_seed": 3}}, "service.validation_seed",
      "no longer a setting: every validation game is dealt a fresh random deck (a fixed one let a bot learn the "
      "validation deal); delete the line"),
     ({"service": {"nope": 1}}, "service.nope", "unknown key (known: dialin_hello_s, keepalive_s, keepalive_timeout_s, "
      "max_bots_per_author, "
      "max_dialins, max_dialins_per_author, max_open_tournaments, max_watchers, max_watchers_per_client, "
      "shutdown_grace_s, spectator_delay_ms, validation_opponents, watch_queue, watch_write_timeout_s)"),
     ({"addresses": {"nope": 1}}, "addresses.nope", "unknown key (known: allow, allow_unix, deny)"),
     ({"http": {"nope": 1}}, "http.nope", "unknown key (known: allowed_hosts, grpc_address, header_timeout_s, host, "
      "idle_timeout_s, max_event_streams, max_event_streams_per_client, page_size, port, public_origin, "
      "render_processes, session_hours, trusted_proxies)"),
     ({"health": {"nope": 1}}, "health.nope", "unknown key (known: first_probe_s, max_probe_s, probe_timeout_s, "
      "suspend_after_s)"),
     ({"uploads": {"nope": 1}}, "uploads.nope", "unknown key (known: max_files, max_mb, output_kb, unpacked_mb)"),
     ({"service": {"validation_opponents": []}}, "service.validation_opponents",
      "1 to 4 of: random, greedy, counter, hoard"),
     ({"service": {"validation_opponents": ["greedy"] * 5}}, "service.validation_opponents",
      "1 to 4 of: random, greedy, counter, hoard"),
     ({"service": {"validation_opponents": ["nobody"]}}, "service.validation_opponents",
      "1 to 4 of: random, greedy, counter, hoard"),
     ({"service": {"validation_opponents": "greedy"}}, "service.validation_opponents",
      "1 to 4 of: random, greedy, counter, hoard"),
     ({"service": {"shutdown_grace_s": -1}}, "service.shutdown_grace_s", "must be 0 to 3600 seconds, not -1"),
     ({"service": {"shutdown_grace_s": 3600.5}}, "service.shutdown_grace_s", "must be 0 to 3600 seconds, not 3600.5"),
     ({"service": {"shutdown_grace_s": True}}, "service.shutdown_grace_s", "must be 0 to 3600 seconds, not true"),
     ({"service": {"shutdown_grace_s": "1"}}, "service.shutdown_grace_s", 'must be 0 to 3600 seconds, not "1"'),
     ({"service": {"spectator_delay_ms": 3_600_001}}, "service.spectator_delay_ms",
      "3600001 is out of range (0 to 3600000)"),
     ({"service": {"spectator_delay_ms": -1}}, "service.spectator_delay_ms", "-1 is out of range (0 to 3600000)"),
     ({"service": {"max_watchers": 0}}, "service.max_watchers", "0 is out of range (1 to 1000000)"),
     ({"service": {"dialin_hello_s": 601}}, "service.dialin_hello_s", "601 is out of range (1 to 600)"),
     ({"service": {"watch_write_timeout_s": 86_401}}, "service.watch_write_timeout_s",
      "86401 is out of range (1 to 86400)"),
     ({"auth": {"open_reads": "yes"}}, "auth.open_reads", 'must be true or false, not "yes"'),
     ({"auth": {"max_failed_signins": 0}}, "auth.max_failed_signins", "0 is out of range (1 to 1000000)"),
     ({"auth": {"signin_window_s": 86_401}}, "auth.signin_window_s", "86401 is out of range (1 to 86400)"),
     ({"addresses": {"allow": "10.0.0.0/8"}}, "addresses.allow",
      'must be a list of CIDR networks, e.g. ["10.0.0.0/8", "fd00::/8"]'),
     ({"addresses": {"deny": [8]}}, "addresses.deny",
      'must be a list of CIDR networks, e.g. ["10.0.0.0/8", "fd00::/8"]'),
     ({"addresses": {"allow": ["10.0.0.1/8"]}}, "addresses.allow",
      "not a CIDR network: 10.0.0.1/8 has host bits set"),
     ({"addresses": {"allow_unix": 1}}, "addresses.allow_unix", "must be true or false, not 1"),
     ({"health": {"first_probe_s": 10, "max_probe_s": 9}}, "health.max_probe_s", "must be at least first_probe_s (10)"),
     ({"health": {"suspend_after_s": 59}}, "health.suspend_after_s", "59 is out of range (60 to 31536000)"),
     ({"uploads": {"max_mb": 1025}}, "uploads.max_mb", "1025 is out of range (1 to 1024)"),
     ({"uploads": {"output_kb": 0}}, "uploads.output_kb", "0 is out of range (1 to 65536)")],
)  # fmt: skip
def test_each_mistake_names_its_key_and_what_is_wanted(data: dict, key: str, words: str) -> None:
    _refused(data, key, words)


@pytest.mark.parametrize(
    ("http", "key", "words"),
    [({"host": ""}, "http.host", 'must be an address to listen on, not ""'),
     ({"host": 8080}, "http.host", "must be an address to listen on, not 8080"),
     ({"port": 65536}, "http.port", "65536 is out of range (0 to 65535)"),
     ({"port": "80"}, "http.port", 'must be a whole number, not "80"'),
     ({"page_size": 1001}, "http.page_size", "1001 is out of range (1 to 1000)"),
     ({"session_hours": 721}, "http.session_hours", "721 is out of range (1 to 720)"),
     ({"allowed_hosts": "site.example"}, "http.allowed_hosts",
      'must be a list of host names without port (e.g. ["referee.example.org", "*.example.org"])'),
     ({"allowed_hosts": ["site.example:80"]}, "http.allowed_hosts",
      'must be a list of host names without port (e.g. ["referee.example.org", "*.example.org"])'),
     ({"allowed_hosts": [1]}, "http.allowed_hosts",
      'must be a list of host names without port (e.g. ["referee.example.org", "*.example.org"])'),
     ({"grpc_address": "ref.example"}, "http.grpc_address",
      'must be HOST:PORT as entrants dial it (referee.example.org:50050), not "ref.example"'),
     ({"grpc_address": 50050}, "http.grpc_address",
      "must be HOST:PORT as entrants dial it (referee.example.org:50050), not 50050"),
     ({"trusted_proxies": "127.0.0.1"}, "http.trusted_proxies",
      'must be a list of addresses or networks, e.g. ["127.0.0.1", "10.0.0.0/8"] (not a list of strings)'),
     ({"trusted_proxies": [1]}, "http.trusted_proxies",
      'must be a list of addresses or networks, e.g. ["127.0.0.1", "10.0.0.0/8"] (not a list of strings)'),
     ({"trusted_proxies": ["proxy.example"]}, "http.trusted_proxies",
      'must be a list of addresses or networks, e.g. ["127.0.0.1", "10.0.0.0/8"] (\'proxy.example\' does not '
      "appear to be an IPv4 or IPv6 network)"),
     *[({"public_origin": bad}, "http.public_origin",
        f"must be the site's public address, e.g. https://referee.example.org, not {said}")
       for bad, said in [("ftp://site.example", '"ftp://site.example"'), ("https://", '"https://"'),
                         ("https://site.example/path", '"https://site.example/path"'),
                         ("https://site.example/?q=1", '"https://site.example/?q=1"'),
                         ("https://site.example/#f", '"https://site.example/#f"'),
                         ("https://user@site.example", '"https://user@site.example"'),
                         ("https://@site.example", '"https://@site.example"'), (1, "1")]]],
)  # fmt: skip
def test_each_mistake_in_the_sites_table_names_its_key(http: dict, key: str, words: str) -> None:
    _refused({"http": http}, key, words)


def test_the_sites_host_names() -> None:
    def hosts(**http) -> list[str]:
        return parse({"http": http}, SRC, env={}).http.hosts()

    assert hosts() == ["localhost", "127.0.0.1", "[::1]"]
    assert hosts(host="0.0.0.0") == ["localhost", "127.0.0.1", "[::1]"]
    assert hosts(host="::") == ["localhost", "127.0.0.1", "[::1]"]
    assert hosts(host="[::]") == ["localhost", "127.0.0.1", "[::1]"]
    assert hosts(host="10.0.0.5") == ["localhost", "127.0.0.1", "[::1]", "10.0.0.5"]
    assert hosts(host="fd00::5") == ["localhost", "127.0.0.1", "[::1]", "[fd00::5]"]
    assert hosts(host="[fd00::6]") == ["localhost", "127.0.0.1", "[::1]", "[fd00::6]"]
    assert hosts(host="XboxX") == ["localhost", "127.0.0.1", "[::1]", "XboxX"]
    assert hosts(host="10.0.0.5", public_origin="http://Pub.Example:8080", allowed_hosts=["a.example", "10.0.0.5"]) == [
        "localhost", "127.0.0.1", "[::1]", "10.0.0.5", "pub.example", "a.example"]  # fmt: skip
    assert parse({"http": {"public_origin": "https://site.example"}}, SRC, env={}).http.public_origin == (
        "https://site.example")  # fmt: skip
    assert parse({"http": {"public_origin": ""}}, SRC, env={}).http.public_origin == ""
    assert parse({"http": {"public_origin": "https://Site.BOX/"}}, SRC, env={}).http.public_origin == "https://site.box"


def test_a_settings_file_is_read_and_a_bad_one_named(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text('[auth]\norganiser_tokens = ["é-token-long"]\n', encoding="utf-8")
    assert load(path, env={}).organiser_tokens == ("é-token-long",)
    assert load(str(path), env={}).organiser_tokens == ("é-token-long",)
    path.write_text('[auth]\norganiser_tokens = ["short"]\n')
    with pytest.raises(BadInput) as refused:
        load(path, env={})
    assert refused.value.source == str(path) and refused.value.key == "auth.organiser_tokens[0]"
    path.write_text("[auth\n")
    with pytest.raises(BadInput) as refused:
        load(path, env={})
    assert refused.value.message.startswith(f"{path}: not valid TOML (") and refused.value.key == ""
    assert refused.value.source == str(path)
    with pytest.raises(BadInput) as refused:
        load(tmp_path / "missing.toml", env={})
    assert refused.value.message == f"{tmp_path / 'missing.toml'}: cannot read the file (No such file or directory)"
    assert refused.value.source == str(tmp_path / "missing.toml") and refused.value.key == ""
    with pytest.raises(BadInput) as refused:
        load(None, env={"ABLUXX_ORGANISER_TOKENS": "same-token-1,same-token-1"})
    assert (refused.value.source, refused.value.key) == ("<defaults>", "auth")
    assert load(None, env={"ABLUXX_AUTHOR_TOKENS": "bob:bob-token-1"}).author_tokens == {"bob": "bob-token-1"}
