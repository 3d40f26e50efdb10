"""Addresses as the ``abluxx`` command and the bot kit take them: one check for an address to dial, one for an
address to listen on, each returning why it is not one (or None), in words for the person who typed it.

gRPC itself would take ``127.0.0.1:99999`` and dial port 34463 (the port wraps modulo 65536), and it reports an
address it cannot bind with a raw log line and a ``RuntimeError``; these checks come first, so neither happens.
"""

from __future__ import annotations

import re
import socket
from typing import Any

from .terminal import said

# whole strings only (fullmatch): a host name, an IPv4 address or a bracketed IPv6 one, then a port
HOST_PORT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,9})")
UNIX_SCHEMES = ("unix:", "unix-abstract:")


def dial_problem(address: Any, unix: bool = False) -> str | None:
    """Why ``address`` is not a ``host:port`` to dial (port 1 to 65535), or with ``unix`` also a ``unix:PATH``
    socket; None when it is one."""
    if unix and isinstance(address, str) and address.startswith(UNIX_SCHEMES):
        if address.split(":", 1)[1].strip("/"):
            return None
        return f"bad address {said(address)}: a unix: address needs a path, e.g. unix:/run/abluxx.sock"
    if not isinstance(address, str) or not (m := HOST_PORT.fullmatch(address)):
        example = "127.0.0.1:50051" + (" or unix:PATH" if unix else "")
        return f"bad address {said(address)}: expected host:port, e.g. {example}"
    if not 1 <= int(m["port"]) <= 65535:
        return f"bad address {said(address)}: port must be 1 to 65535"
    return None


def listen_problem(host: str, port: int) -> str | None:
    """Why nothing can listen on ``host:port`` (port 0 picks a free one), or None when something can: the port is
    out of range or in use, the host is unknown or not this machine's. It binds a plain socket to each address the
    host resolves to, as gRPC would, and closes it at once; it is enough that one binds."""
    where = f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"
    if not 0 <= port <= 65535:
        return f"cannot listen on {where}: the port must be 0 to 65535 (0 picks a free one)"
    try:
        found = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        return f"cannot listen on {where}: the host is unknown ({getattr(e, 'strerror', None) or e})"
    why = "no address"
    for family, kind, proto, _, sockaddr in found:
        try:
            with socket.socket(family, kind, proto) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC does: a TIME_WAIT port is free
                s.bind(sockaddr)
                return None
        except OSError as e:
            why = _why(e)
    return f"cannot listen on {where}: {why}"


def _why(e: OSError) -> str:
    import errno

    return {
        errno.EADDRINUSE: "the port is in use",
        errno.EADDRNOTAVAIL: "the address is not this machine's",
        errno.EACCES: "permission denied (a port below 1024 needs privileges)",
    }.get(e.errno or 0, e.strerror or str(e))
