"""A hostile bot for the sandbox's escape tests: before it serves, it tries every escape named in its arguments
(a JSON object) and prints one line a try, ``TRY name: refused ...`` or ``TRY name: ESCAPED ...``; then it serves
as the kit's greedy example bot on the address the sandbox gives it, and leaves a daemon behind that tries to
outlive its game."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import sys
import time


def attempt(name: str, fn) -> None:
    try:
        got = fn()
    except (OSError, MemoryError, ValueError) as e:
        print(f"TRY {name}: refused ({type(e).__name__}: {e})", flush=True)
        return
    print(
        f"TRY {name}: {'refused (' + got[1] + ')' if got and got[0] == 'refused' else 'ESCAPED ' + repr(got)}",
        flush=True,
    )


def tcp(host: str, port: int):
    with socket.create_connection((host, port), timeout=3):
        return "connected"


def udp(host: str, port: int):
    # UDP sends never fail on a loopback; the test's listener says whether anything arrived
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"escaped", (host, port))
    return ("refused", "sent into the sandbox's own loopback; the test checks that nothing arrived")


def read(path: str):
    with open(path, "rb") as f:
        return f.read(64)


def listdir(path: str):
    return os.listdir(path)


def write(path: str):
    with open(path, "wb") as f:
        f.write(b"x")
    return "written"


def fill(path: str):
    written = 0
    block = b"\0" * (1 << 20)
    try:
        with open(path, "wb") as f:
            while written < 4 << 30:
                f.write(block)
                written += len(block)
    except OSError as e:
        os.unlink(path)
        return ("refused", f"stopped after {written >> 20} MiB: {e.strerror}")
    return f"wrote {written >> 20} MiB"


def fork_bomb():
    kids = []
    try:
        while len(kids) < 100000:
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            kids.append(pid)
    except OSError as e:
        return ("refused", f"stopped after {len(kids)} processes: {e.strerror}")
    finally:
        for pid in kids:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    return f"forked {len(kids)}"


def allocate():
    block = bytearray(4 << 30)
    return f"allocated {len(block) >> 30} GiB"


def secret_in_environ(secret: str):
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if secret.encode() in f.read():
                    return f"found in /proc/{pid}/environ"
        except OSError:
            pass
    if secret in str(os.environ):
        return "found in os.environ"
    return ("refused", "in no environment it can read")


def ptrace(pid: int):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(16, pid, None, None) != 0:  # PTRACE_ATTACH
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return "attached"


def daemon():
    """A grandchild in a session of its own, that sleeps for a long time: it must die with the sandbox."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(3600)
        os._exit(0)
    os.wait()


def main() -> None:
    t = json.loads(sys.argv[1])
    for port in t["tcp_ports"]:
        attempt(f"tcp 127.0.0.1:{port}", lambda p=port: tcp("127.0.0.1", p))
        attempt(f"tcp {t['host_ip']}:{port}", lambda p=port: tcp(t["host_ip"], p))
    attempt("tcp 1.1.1.1:53", lambda: tcp("1.1.1.1", 53))
    attempt(f"udp 127.0.0.1:{t['udp_port']}", lambda: udp("127.0.0.1", t["udp_port"]))
    attempt("dns", lambda: socket.getaddrinfo("example.com", 443))
    for path in t["read"]:
        attempt(f"read {path}", lambda p=path: read(p))
        attempt(f"list {os.path.dirname(path)}", lambda p=path: listdir(os.path.dirname(p)))
    attempt("environ", lambda: secret_in_environ(t["secret"]))
    for path in ("/bot/x", "/usr/x", "/x", "/etc/x", "/proc/x"):
        attempt(f"write {path}", lambda p=path: write(p))
    attempt("fill /tmp", lambda: fill("/tmp/fill"))
    attempt("fill its socket folder", lambda: fill("/run/abluxx/fill"))
    attempt("fork bomb", fork_bomb)
    attempt("allocate 4 GiB", allocate)
    attempt("kill the referee", lambda: os.kill(t["referee_pid"], signal.SIGKILL))
    attempt("ptrace the referee", lambda: ptrace(t["referee_pid"]))
    attempt("read the referee's /proc", lambda: read(f"/proc/{t['referee_pid']}/environ"))
    daemon()
    from abluxx_bot import serve
    from abluxx_bot.examples import factory

    make = factory("greedy")
    assert make is not None
    serve(lambda: make(0), 0)


if __name__ == "__main__":
    main()
