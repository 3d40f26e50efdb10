"""Where the service may dial a submitted bot (referee/service/addresses.py, docs/security.md), function by
function: the end-to-end refusals are in test_addresses.py, against a real server."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from pathlib import Path

import pytest

from referee.service.addresses import (
    AddressPolicy,
    NotAllowed,
    Unresolved,
    check,
    is_local,
    is_loopback,
    resolve,
    same_place,
)

ip = ipaddress.ip_address
net = ipaddress.ip_network


def test_loopback_by_its_spelling_only() -> None:
    for host in ("localhost", "127.0.0.1", "127.5.6.7", "::1", "[::1]"):
        assert is_loopback(host), host
    for host in ("localhost.example", "10.0.0.1", "::2", "[fe80::1]", "name", "", "Localhost", "XlocalhostX"):
        assert not is_loopback(host), host


def test_local_means_this_machine() -> None:
    assert is_local(ip("127.0.0.1")) and is_local(ip("::1")) and is_local(ip("0.0.0.0")) and is_local(ip("::"))
    assert not is_local(ip("203.0.113.77"))  # TEST-NET-3: nobody's interface
    assert not is_local(ip("2001:db8::1"))
    # not loopback by its spelling, yet this machine: an IPv6 socket binds it
    assert not ip("::ffff:127.0.0.1").is_loopback and is_local(ip("::ffff:127.0.0.1"))


def _own_ipv4() -> list[str]:
    """This machine's IPv4 interface addresses other than loopback (Linux's routing table; none elsewhere)."""
    try:
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
    except OSError:
        return []
    found = {lines[i - 1].split()[-1] for i, line in enumerate(lines) if line.strip() == "/32 host LOCAL"}
    return sorted(a for a in found if not ip(a).is_loopback)


def _own_ipv6() -> list[str]:
    """This machine's global or unique-local IPv6 interface addresses (Linux's /proc/net/if_inet6)."""
    try:
        rows = [line.split() for line in Path("/proc/net/if_inet6").read_text().splitlines()]
    except OSError:
        return []
    found = [ip(":".join(r[0][i : i + 4] for i in range(0, 32, 4))) for r in rows]
    return [str(a) for a in found if not (a.is_loopback or a.is_link_local)]


def test_an_interface_address_of_this_machine_is_local() -> None:
    own = _own_ipv4() + _own_ipv6()
    if not own:
        pytest.skip("this machine has no address but loopback and link-local")
    assert all(is_local(ip(a)) for a in own), own


def test_a_local_address_whose_port_is_taken_is_still_local() -> None:
    # the check binds port 0 (any free port), so a bot's own port being in use does not matter
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as held:
        try:
            held.bind(("::", 1))
        except OSError:
            pytest.skip("port 1 cannot be bound here (not root, or in use)")
        assert is_local(ip("::ffff:127.0.0.1"))


def test_the_default_policy_refuses_link_local_in_both_families_and_ipv4_mapped() -> None:
    policy = AddressPolicy()
    for a in ("169.254.169.254", "169.254.0.0", "169.254.255.255", "fe80::1", "::ffff:169.254.169.254"):
        with pytest.raises(NotAllowed, match=r"^the server's address policy does not allow this network$"):
            check(ip(a), 80, policy, set())
    for a in ("169.253.255.255", "169.255.0.0", "192.0.2.1", "fec0::1", "2001:db8::1", "::ffff:192.0.2.1"):
        check(ip(a), 80, policy, set())  # allowed


def test_an_allow_list_admits_only_its_networks_in_either_family() -> None:
    policy = AddressPolicy(allow=(net("10.0.0.0/8"), net("2001:db8::/32")))
    check(ip("10.1.2.3"), 80, policy, set())
    check(ip("2001:db8::5"), 80, policy, set())
    check(ip("::ffff:10.1.2.3"), 80, AddressPolicy(allow=(net("10.0.0.0/8"), net("::ffff:0:0/96"))), set())
    for a in ("11.0.0.1", "2001:db9::1", "::ffff:10.1.2.3"):
        with pytest.raises(NotAllowed, match=r"^the server's address policy allows only some networks, and not this"):
            check(ip(a), 80, policy, set())


def test_the_referees_own_port_on_this_machine_is_refused_elsewhere_not() -> None:
    for a in ("127.0.0.1", "::1", "0.0.0.0", "::ffff:127.0.0.1"):
        with pytest.raises(NotAllowed, match=r"^that is the referee itself$"):
            check(ip(a), 7000, AddressPolicy(), {7000})
    check(ip("127.0.0.1"), 7001, AddressPolicy(), {7000})
    check(ip("192.0.2.1"), 7000, AddressPolicy(), {7000})


def test_resolve_gives_the_checked_ip_literal_to_dial() -> None:
    policy = AddressPolicy()
    assert asyncio.run(resolve("localhost:5000", policy, set())) in ("127.0.0.1:5000", "[::1]:5000")
    assert asyncio.run(resolve("127.0.0.1:5000", policy, set())) == "127.0.0.1:5000"
    assert asyncio.run(resolve("[::1]:5001", policy, set())) == "[::1]:5001"
    with pytest.raises(NotAllowed, match="that is the referee itself"):
        asyncio.run(resolve("127.0.0.1:5000", policy, {5000}))
    with pytest.raises(NotAllowed, match=r"does not allow this network"):
        asyncio.run(resolve("169.254.169.254:80", policy, set()))
    with pytest.raises(Unresolved, match=r"^no-such-host\.invalid$"):
        asyncio.run(resolve("no-such-host.invalid:80", policy, set()))
    with pytest.raises(Unresolved):  # only the brackets of an IPv6 literal are taken off
        asyncio.run(resolve("X127.0.0.1X:80", policy, set()))


def test_unix_sockets_only_when_allowed() -> None:
    for address in ("unix:/tmp/bot.sock", "unix-abstract:bot"):
        with pytest.raises(NotAllowed, match=r"^unix sockets are not allowed by the server's address policy$"):
            asyncio.run(resolve(address, AddressPolicy(), set()))
        assert asyncio.run(resolve(address, AddressPolicy(allow_unix=True), set())) == address


def test_same_place_is_the_same_port_and_host_or_both_this_machine() -> None:
    assert same_place("127.0.0.1:5000", "127.0.0.1:5000")
    assert same_place("127.0.0.1:5000", "[::1]:5000")  # both this machine
    assert same_place("0.0.0.0:5000", "127.0.0.1:5000")
    assert same_place("[2001:db8::1]:5000", "[2001:db8:0::1]:5000")  # one address, two spellings
    assert not same_place("127.0.0.1:5000", "127.0.0.1:5001")
    assert not same_place("192.0.2.1:5000", "127.0.0.1:5000")
    assert not same_place("192.0.2.1:5000", "192.0.2.2:5000")
    assert same_place("bot.example:5000", "bot.example:5000")
    assert not same_place("bot.example:5000", "127.0.0.1:5000")  # a stored name is compared as written
    assert same_place("unix:/tmp/a", "unix:/tmp/a") and not same_place("unix:/tmp/a", "unix:/tmp/b")
    assert not same_place("unix:/tmp/a:5000", "127.0.0.1:5000")
    assert not same_place("X127.0.0.1X:5000", "127.0.0.1:5000") and not same_place("::1:5000", "X::1X:5000")


def test_the_default_policy_denies_exactly_link_local() -> None:
    assert AddressPolicy().deny == (net("169.254.0.0/16"), net("fe80::/10"))
    assert AddressPolicy().allow == () and AddressPolicy().allow_unix is False
    assert socket.AF_INET6  # the machine speaks IPv6 (the ::1 cases above need it)
