"""The sandbox a command bot can be run in (``sandbox = true``; always for an uploaded bot): bubblewrap
(``bwrap``) with new user, PID, IPC, UTS, cgroup and network namespaces, run as a host user id of its own.

Inside, the bot sees: the host's system folders and the referee's Python (so Python, Node, Java and compiled
binaries run, and the kit imports), its own files read-only at ``/bot`` (its working folder), a private tmpfs at
``/tmp`` (``HOME``) capped in size, and ``/run/abluxx``, the only folder bound from the host that it may write:
it must serve gRPC on the Unix socket ``/run/abluxx/bot.sock``, an address it is told in ``ABLUXX_LISTEN`` and in
``{listen}`` in its command. It has no network at all (a loopback of its own), sees only its own processes, and
runs with rlimits on address space, processes, open files and file size, no new privileges, on one CPU.

Nothing falls back: where bwrap or the namespaces are missing, ``problem()`` says so and the bot does not start.
docs/sandbox.md is the user's page.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import functools
import importlib.util
import itertools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

SOCKET_DIR = "/run/abluxx"  # inside the sandbox: where the bot serves
LISTEN = f"unix:{SOCKET_DIR}/bot.sock"  # the address it serves on, in ABLUXX_LISTEN and {listen}
LISTEN_ENV = "ABLUXX_LISTEN"
FILES_DIR = "/bot"  # inside: the bot's own files, read-only, its working folder
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
UID_BASE = 1_900_000_000  # a sandbox runs as host uid UID_BASE + its launcher's pid: one uid per running bot
PROBE_TIMEOUT_S = 30.0
MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one sandboxed bot may use (docs/security.md lists each with its setting)."""

    memory_mb: int = 2048  # address space (RLIMIT_AS) of each of its processes
    processes: int = 64  # processes and threads, together (RLIMIT_NPROC, counted for its own host uid)
    open_files: int = 256  # descriptors per process (RLIMIT_NOFILE)
    file_size_mb: int = 64  # the largest file it may write (RLIMIT_FSIZE)
    tmp_mb: int = 64  # its private /tmp, a tmpfs of at most this size
    one_cpu: bool = True  # pinned to one CPU (round robin over the machine's), where it has more than one


LIMIT_RANGES = {"memory_mb": (64, 1 << 20), "processes": (4, 4096), "open_files": (16, 65536),
                "file_size_mb": (1, 1 << 20), "tmp_mb": (1, 1 << 20)}  # fmt: skip


@dataclass(frozen=True)
class Sandbox:
    """A command bot's sandbox: its own ``files`` (a folder on the host, read-only at /bot), and its limits."""

    files: str | None = None
    limits: Limits = field(default_factory=Limits)


class SandboxUnavailable(Exception):
    """The sandbox cannot run here; the message names what is missing."""


@functools.cache
def problem() -> str | None:
    """Why no sandbox can start on this machine (bwrap or a namespace missing), or None. Asked once a process: a
    real sandbox runs ``true``."""
    if shutil.which("bwrap") is None:
        return "the sandbox needs bubblewrap, which is not installed (bwrap is not on PATH): apt-get install bubblewrap"
    if sys.platform != "linux":
        return "the sandbox needs Linux namespaces"
    if os.geteuid() != 0:
        return "the sandbox needs the referee to run as root: it gives each sandboxed bot a host uid of its own"
    run = start(("true",), Sandbox(), cpu=None)
    try:
        done = subprocess.run(run.argv, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"the sandbox did not start: {e}"
    finally:
        run.remove()
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return (f"the sandbox cannot start here: bwrap said {said[-1] if said else f'exit {done.returncode}'!r} "
                "(it needs unprivileged user, PID, IPC, UTS and network namespaces: kernel.unprivileged_userns_clone "
                "= 1 and user.max_user_namespaces > 0, and not a container that forbids them)")  # fmt: skip
    return None


def check() -> None:
    """SandboxUnavailable naming what is missing, unless a sandbox can start here."""
    if (why := problem()) is not None:
        raise SandboxUnavailable(why)


def runtime_paths() -> list[str]:
    """The host folders bound read-only besides the system's: the referee's Python (its prefix and base prefix,
    the venv's site-packages with grpcio and protobuf) and the source of the ``referee`` and ``abluxx_bot``
    packages, so ``python3 bot.py`` with the kit runs inside."""
    found = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}
    for name in ("referee", "abluxx_bot"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            found.add(str(Path(spec.origin).resolve().parent))
    return sorted(found)


# Inside the sandbox, before the bot: it runs the command only once the referee has written "1" on the gate. If
# the referee dies first, the gate reads the end of the pipe instead and exits, and so does the sandbox's init.
_GATE = (
    "import os, sys\n"
    "fd = int(sys.argv[1])\n"
    "go = os.read(fd, 1)\n"
    "os.close(fd)\n"
    "if go != b'1': os._exit(1)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


class InitPipes:
    """How the referee learns the host pid of a sandbox's init (bwrap's pid 1 of the bot's PID namespace) before the
    bot runs. bwrap writes ``{"child-pid": N, ...}`` on ``--info-fd`` and closes it; the bot's command runs behind a
    gate (``_GATE``) that waits for the referee's word. The referee reads the pid (``init_pid``), hands it to its
    watchdog and to its stop paths, then lets the bot start (``release``). The init is a process group (and session)
    of its own, which a signal to the launcher's group does not reach: without its pid, a referee killed by SIGKILL
    left it to bwrap's ``--die-with-parent``, which a loaded machine can outrun (containers/bubblewrap#633); and a
    referee killed before it had the pid leaves a gate that reads the pipe's end, so no bot ever runs. Killing the
    init kills every process in the namespace."""

    def __init__(self) -> None:
        self.info_read, self.info_write = os.pipe()
        self.gate_read, self.gate_write = os.pipe()

    @property
    def bwrap_args(self) -> list[str]:
        return ["--info-fd", str(self.info_write)]

    def gated(self, command: list[str]) -> list[str]:
        """``command`` behind the gate."""
        return [sys.executable, "-I", "-S", "-c", _GATE, str(self.gate_read), *command]

    @property
    def child_ends(self) -> tuple[int, int]:
        """The descriptors the launcher must inherit (``pass_fds``); ``spawned`` closes them here."""
        return self.info_write, self.gate_read

    def spawned(self) -> None:
        for fd in self.child_ends:
            os.close(fd)
        self.info_write = self.gate_read = -1

    async def init_pid(self, launcher: int) -> int | None:
        """The host pid of the sandbox's init, once bwrap (the ``launcher`` pid, after its exec) has said it; None
        if it ended without saying, or said a pid that is not its child."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        pipe = os.fdopen(self.info_read, "rb", buffering=0)  # the transport closes it
        self.info_read = -1
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        try:
            said = await reader.read()  # to its end: bwrap closes the pipe once it has written
        finally:
            transport.close()
        try:
            pid = json.loads(said)["child-pid"]
        except (ValueError, KeyError, TypeError):
            return None
        return pid if isinstance(pid, int) and _parent_of(pid) == launcher else None

    def release(self) -> None:
        """Let the gate run the bot."""
        with contextlib.suppress(OSError):  # the sandbox already gone: nothing waits
            os.write(self.gate_write, b"1")
        self.close()

    def close(self) -> None:
        for name in ("info_read", "info_write", "gate_read", "gate_write"):
            if (fd := getattr(self, name)) >= 0:
                os.close(fd)
                setattr(self, name, -1)


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return int(stat[stat.rfind(b")") + 2 :].split()[1])


@dataclass
class Started:
    """What starting one sandbox needs: the argv, and the host folders made for it (removed once it stops)."""

    argv: list[str]
    socket_dir: str  # bound at SOCKET_DIR
    stage_dir: str  # the launcher's mount points of the folders bound read-only from places the bot's uid cannot reach
    pipes: InitPipes | None = None  # how the referee learns its init's pid (None: a run that needs no stopping)

    def address(self, pid: int) -> str:
        """Where the referee dials the bot whose launcher (now bwrap) is ``pid``: its socket is on a small tmpfs
        in the launcher's own mount namespace (so the bot cannot fill the host's disk), reached through /proc."""
        return f"unix:/proc/{pid}/root{self.socket_dir}/bot.sock"

    def remove(self) -> None:
        if self.pipes is not None:
            self.pipes.close()
        for d in (self.socket_dir, self.stage_dir):
            shutil.rmtree(d, ignore_errors=True)


_cpus = itertools.count()

SESSION_PREFIX = "abluxx-sandboxes-"  # in the temporary folder: one folder per referee process, its sandboxes' in it
_LOCK = "lock"  # in a session folder: held (flock) by its process while it lives, freed by the kernel when it dies
_session: tuple[str, int, int] | None = None  # this process's session folder, its lock's descriptor, its pid


def session_folder() -> str:
    """This process's folder of sandbox folders, made on first use. Its lock file is held (``flock``) until the
    process exits, however it exits: the kernel frees the lock of a process killed by SIGKILL, which has no chance
    to remove its folders. The folders of processes gone so (their lock free) are removed first (``sweep``). A lock
    is the test rather than a pid, which another PID namespace may reuse for a live referee."""
    global _session
    if _session is None or _session[2] != os.getpid():  # a forked child makes its own
        sweep()
        path = tempfile.mkdtemp(prefix=SESSION_PREFIX)
        os.chmod(path, 0o711)  # a bot's uid passes through it to its folders (not listed: their names are private)
        fd = os.open(os.path.join(path, _LOCK + ".new"), os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(os.path.join(path, _LOCK + ".new"), os.path.join(path, _LOCK))  # a sweep sees it locked already
        _session = (path, fd, os.getpid())
        atexit.register(_leave, path, os.getpid())
    return _session[0]


def _leave(path: str, pid: int) -> None:
    """At a normal exit: this process's session folder removed (not a forked child's exit: ``pid`` its maker)."""
    if os.getpid() == pid:
        shutil.rmtree(path, ignore_errors=True)


def sweep(base: str | None = None) -> list[str]:
    """Remove the session folders in ``base`` (the temporary folder) of processes that are gone: this user's,
    whose lock file is not held. A folder being made (no lock file yet) or in use (its lock held) is left.
    Returns the folders removed."""
    base = base or tempfile.gettempdir()
    try:
        names = sorted(n for n in os.listdir(base) if n.startswith(SESSION_PREFIX))
    except OSError:
        return []
    gone = []
    for name in names:
        path = os.path.join(base, name)
        try:
            st = os.lstat(path)
            if not (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()):
                continue
            fd = os.open(os.path.join(path, _LOCK), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its process lives
            continue
        else:
            shutil.rmtree(path, ignore_errors=True)
            gone.append(path)
        finally:
            os.close(fd)
    return gone


def next_cpu() -> int | None:
    """The CPU the next sandbox is pinned to: round robin over the ones this process may use; None on one CPU."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[next(_cpus) % len(cpus)] if len(cpus) > 1 else None


def start(command: tuple[str, ...], box: Sandbox, cpu: int | None, private: Path | None = None, *,
          pipes: bool = False) -> Started:  # fmt: skip
    """The argv (through the launcher, which sets the limits and the host uid, then execs bwrap) that runs
    ``command`` in ``box``, and its folders, made. SandboxUnavailable if the folder ``private`` (the data
    folder's) is inside one the sandbox shows its bot. ``pipes``: bwrap says its init's pid and the bot waits to be
    let go (``InitPipes``), as every bot the referee starts does; the probe in ``problem`` runs without."""
    shows = [*runtime_paths(), *([box.files] if box.files is not None else [])]
    if private is not None and (shown := [p for p in shows if Path(private).resolve().is_relative_to(p)]):
        raise SandboxUnavailable(f"the data folder {private} is inside {shown[0]}, which the sandbox shows its bot "
                                 "(the referee's Python or source, or the bot's own files): keep the data folder "
                                 "elsewhere")  # fmt: skip
    session = session_folder()  # removed by the next referee's sweep if this one dies before ``remove``
    socket_dir = tempfile.mkdtemp(prefix="sb-", dir=session)
    stage_dir = tempfile.mkdtemp(prefix="rt-", dir=session)
    os.chmod(stage_dir, 0o755)  # the bot's uid passes through it to the mount points in it
    staged = [*runtime_paths(), *([box.files] if box.files is not None else [])]
    dests = [*runtime_paths(), *([FILES_DIR] if box.files is not None else [])]
    binds: list[str] = []
    for path in SYSTEM:
        if os.path.islink(path):
            binds.extend(("--symlink", os.readlink(path), path))
        elif os.path.isdir(path):
            binds.extend(("--ro-bind", path, path))
    for i, dest in enumerate(dests):
        binds.extend(("--ro-bind", f"{stage_dir}/{i}", dest))
    lim = box.limits
    told = InitPipes() if pipes else None
    env = {"PATH": f"{os.path.realpath(sys.prefix)}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp",
           "LANG": "C.UTF-8", LISTEN_ENV: LISTEN, "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip
    argv = [
        shutil.which("bwrap") or "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
        "--new-session", "--hostname", "bot", "--clearenv", *itertools.chain(*(("--setenv", k, v) for k, v in
        env.items())), "--tmpfs", "/", "--size", str(lim.tmp_mb * MB), "--tmpfs", "/tmp", *binds, "--bind",
        socket_dir, SOCKET_DIR, "--dev", "/dev", "--proc", "/proc", "--remount-ro", "/",
        "--chdir", FILES_DIR if box.files is not None else "/tmp", *(told.bwrap_args if told else ()), "--",
    ]  # fmt: skip
    bot = [a.replace("{listen}", LISTEN) for a in command]
    argv.extend(told.gated(bot) if told else bot)
    launcher = _launch(lim, cpu if lim.one_cpu else None, socket_dir, stage_dir, staged)
    return Started([*launcher, *argv], socket_dir, stage_dir, told)


# Runs as root, before bwrap: the limits and the CPU; in a mount namespace of its own (nothing leaks to the host),
# the folders the bot's uid could not reach bound on mount points it can, and a 1 MiB tmpfs of the bot's on its
# socket folder; no new privileges; the sandbox's own host uid (it counts its processes for RLIMIT_NPROC, which
# root would escape); death
# with the referee (set after the uid change, which clears it); then bwrap.
_LAUNCHER = (
    "import ctypes, json, os, resource, sys\n"
    "libc = ctypes.CDLL('libc.so.6', use_errno=True)\n"
    "parent, cpu, as_, nproc, nofile, fsize = (int(a) for a in sys.argv[1:7])\n"
    "sockets, stage, staged = sys.argv[7], sys.argv[8], json.loads(sys.argv[9])\n"
    "if cpu >= 0: os.sched_setaffinity(0, {cpu})\n"
    "def check(r):\n"
    "    if r != 0: e = ctypes.get_errno(); raise OSError(e, os.strerror(e))\n"
    f"uid = {UID_BASE} + os.getpid()\n"
    "check(libc.unshare(0x20000))\n"
    "check(libc.mount(b'none', b'/', None, 0x4000 | 0x40000, None))\n"
    "opts = f'size=1m,nr_inodes=16,mode=0700,uid={uid},gid={uid}'.encode()\n"
    "check(libc.mount(b'tmpfs', sockets.encode(), b'tmpfs', 0x2 | 0x4 | 0x8, opts))\n"
    "for i, src in enumerate(staged):\n"
    "    os.mkdir(f'{stage}/{i}')\n"
    "    check(libc.mount(src.encode(), f'{stage}/{i}'.encode(), None, 0x1000 | 0x4000, None))\n"
    "for which, n in ((resource.RLIMIT_AS, as_), (resource.RLIMIT_NPROC, nproc), (resource.RLIMIT_NOFILE, nofile),"
    " (resource.RLIMIT_FSIZE, fsize), (resource.RLIMIT_CORE, 0)): resource.setrlimit(which, (n, n))\n"
    "os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)\n"
    "libc.prctl(38, 1, 0, 0, 0)\n"
    "libc.prctl(1, 9)\n"
    "if os.getppid() != parent: os._exit(1)\n"
    "os.execv(sys.argv[10], sys.argv[10:])\n"
)


def _launch(lim: Limits, cpu: int | None, socket_dir: str, stage_dir: str, staged: list[str]) -> list[str]:
    numbers = (os.getpid(), -1 if cpu is None else cpu, lim.memory_mb * MB, lim.processes, lim.open_files,
               lim.file_size_mb * MB)  # fmt: skip
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, *map(str, numbers), socket_dir, stage_dir,
            json.dumps(staged)]  # fmt: skip
