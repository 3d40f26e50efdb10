"""Where the referee may dial a submitted bot (docs/security.md): an author's ``host:port`` must not turn SubmitBot
into a probe of the referee's own network.

The host is resolved once; the address that resolution gives is checked against the server's policy and is the
one dialled and stored, so a name that resolves elsewhere later (DNS rebinding) cannot move the bot. Refused:
an address in a denied network (default: link-local, where cloud metadata services live), outside the allowed
networks when some are listed, the referee's own port on this machine, and ``unix:`` sockets unless allowed.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
LINK_LOCAL = ("169.254.0.0/16", "fe80::/10")
UNIX_SCHEMES = ("unix:", "unix-abstract:")


@dataclass(frozen=True)
class AddressPolicy:
    allow: tuple[IPNetwork, ...] = ()  # empty: anywhere not denied
    deny: tuple[IPNetwork, ...] = tuple(ipaddress.ip_network(n) for n in LINK_LOCAL)
    allow_unix: bool = False


class NotAllowed(ValueError):
    """The address is refused by the policy; the message says why (no detail of the network beyond it)."""


class Unresolved(ValueError):
    """The host name does not resolve."""


def is_loopback(host: str) -> bool:
    """A host that is this machine's loopback by its very spelling (no name is resolved)."""
    h = host.strip("[]")
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def is_local(ip: IPAddress) -> bool:
    """An address of this machine: loopback, unspecified, or one of its interfaces (it can be bound)."""
    if ip.is_loopback or ip.is_unspecified:
        return True
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        try:
            s.bind((str(ip), 0))
        except OSError:
            return False
    return True


# what dialling an unspecified address reaches: the host itself, by its loopback (0.0.0.0 and :: dial this machine)
_HOST_ITSELF = {4: ipaddress.ip_address("127.0.0.1"), 6: ipaddress.ip_address("::1")}


def check(ip: IPAddress, port: int, policy: AddressPolicy, own_ports: set[int]) -> None:
    """NotAllowed unless the policy lets the referee dial ``ip``:``port``. An unspecified address (0.0.0.0, ::,
    ::ffff:0.0.0.0) is checked as the loopback it dials too, so denying loopback denies it."""
    checked = [ip] + ([ip.ipv4_mapped] if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else [])
    checked += [_HOST_ITSELF[a.version] for a in checked if a.is_unspecified]
    for a in checked:
        if any(a in net for net in policy.deny if net.version == a.version):
            raise NotAllowed("the server's address policy does not allow this network")
        if policy.allow and not any(a in net for net in policy.allow if net.version == a.version):
            raise NotAllowed("the server's address policy allows only some networks, and not this one")
        if port in own_ports and is_local(a):
            raise NotAllowed("that is the referee itself")


async def resolve(address: str, policy: AddressPolicy, own_ports: set[int]) -> str:
    """The address to dial and store for ``address`` (a checked ``host:port``, or a ``unix:`` socket): the host
    resolved once, checked, as an IP literal. NotAllowed or Unresolved say why not."""
    if address.startswith(UNIX_SCHEMES):
        if not policy.allow_unix:
            raise NotAllowed("unix sockets are not allowed by the server's address policy")
        return address
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise Unresolved(host) from None
    ip = ipaddress.ip_address(str(infos[0][4][0]).split("%")[0])
    check(ip, int(port), policy, own_ports)
    return f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}"


def same_place(a: str, b: str) -> bool:
    """Whether two stored addresses reach the same bot: the same port, and the same host or both this machine."""
    if a.startswith(UNIX_SCHEMES) or b.startswith(UNIX_SCHEMES):
        return a == b
    (ha, _, pa), (hb, _, pb) = a.rpartition(":"), b.rpartition(":")
    if pa != pb:
        return False
    if ha == hb:
        return True
    try:
        ia, ib = ipaddress.ip_address(ha.strip("[]")), ipaddress.ip_address(hb.strip("[]"))
    except ValueError:  # a name stored before addresses were resolved
        return False
    return ia == ib or (is_local(ia) and is_local(ib))
