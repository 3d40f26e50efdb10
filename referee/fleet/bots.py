"""The bots the fleet starts itself (an entrant's ``command``), on the machine that plays their games, and the
check that every entrant can be reached before any game starts.

A command entrant is a local bot process. It must print ``listening on HOST:PORT`` on stdout once it serves (the
bot kit's ``serve`` and ``abluxx bot NAME --port 0`` do). Its output goes to ``<data>/logs/<run>-<name>.log``
(a worker's name is part of ``<run>``: ``<tournament>-w0``).

Each command runs in its own process group (a new session), so stopping it reaches every process it started, a
shell wrapper's children too: SIGTERM to the group, up to ``STOP_GRACE_S`` for it to end, then SIGKILL. If the
referee dies (even by SIGKILL), a watchdog process (watchdog.py) kills every group; on Linux each command's
first process also gets SIGKILL from the kernel (PR_SET_PDEATHSIG). A sandboxed command's init (bwrap's pid 1 of
its PID namespace) is a group of its own, which bwrap names before the bot runs (sandbox.InitPipes): the watchdog
and every stop kill it too, and with it every process of the sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.log import get_logger
from referee.match import exits
from referee.match.hello import HelloError, hello
from referee.records.private import open_private

from . import sandbox
from .errors import EntrantError
from .lineup import Bot, Lineup

LISTENING = re.compile(rb"listening on (unix:\S+|\S+:\d+)")
START_TIMEOUT_S = 30.0  # a cold Python start on a busy 2-core machine can take a few seconds
STOP_GRACE_S = 5.0  # from SIGTERM to SIGKILL when the referee stops a command bot's process group
WATCHDOG = Path(__file__).with_name("watchdog.py")


# A command starts through this launcher on Linux: it asks for SIGKILL when the referee dies (PR_SET_PDEATHSIG,
# which survives exec; the kernel sends it when the *thread* that forked the child ends, here the event loop's,
# which outlives every bot it starts), exits if the referee died before that, and execs the command. Doing this in
# a preexec_fn instead runs Python in the forked child, and a child forked while gRPC threads run (fresh_process
# starts bots mid-tournament) crashed there with SIGSEGV or SIGABRT.
_LAUNCHER = (
    "import ctypes, os, sys\n"
    "ctypes.CDLL('libc.so.6', use_errno=True).prctl(1, 9)\n"
    "if os.getppid() != int(sys.argv[1]): os._exit(1)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def launch(command: tuple[str, ...]) -> list[str]:
    """The argv that runs ``command`` so that it dies with this process (on Linux: the launcher above)."""
    if sys.platform != "linux":
        return list(command)
    return [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *command]


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs. A zombie does not count: nobody may ever reap an orphan's
    (a container's first process often does not)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if sys.platform != "linux":
        return True
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            state, _ppid, pgrp = stat[stat.rfind(b")") + 2 :].split()[:3]
            if int(pgrp) == pgid and state != b"Z":
                return True
    return False


@dataclass(frozen=True)
class Crash:
    """A command entrant's process that ended mid-run: how, and whether it was started again."""

    entrant: str
    how: str  # "the bot's process exited with code 7"
    restarted: bool
    where: str = ""  # the worker whose copy of the bot it was ("<run>-w0"); "" for the process of the run itself


class LocalBots:
    """Starts the command entrants, gives their addresses, and stops them (an async context manager).

    With ``restart="on-crash"``, a process that ends before ``stop`` is started again, up to ``max_restarts`` times
    per entrant: the games it was in lose that seat (a DISCONNECTED fault that names the exit code or signal,
    match/exits.py), and the games after it get the fresh process at its new address, in ``addresses`` and in
    ``shared`` (the dict the runner seats games from); ``settled`` waits for a restart under way. ``crashes`` lists
    them all, for the summary at the end of the run."""

    def __init__(self, entrants: tuple[Bot, ...], log_dir: Path, prefix: str, *, restart: str = "never",
                 max_restarts: int = 0, shared: dict[str, str] | None = None) -> None:  # fmt: skip
        self.entrants = [e for e in entrants if e.command]
        self.log_dir = log_dir
        self.prefix = prefix
        self.procs: dict[str, asyncio.subprocess.Process] = {}
        self.addresses: dict[str, str] = {}
        self.restart, self.max_restarts = restart, max_restarts
        self.shared = shared
        self.crashes: list[Crash] = []
        self._restarting: dict[str, asyncio.Future[None]] = {}
        self._stopping = False
        self._watchers: list[asyncio.Task] = []
        self._drains: list[asyncio.Task] = []
        self._watchdog: subprocess.Popen | None = None
        self._guard: Any = None  # the pipe to the watchdog: "+PGID" / "-PGID" lines
        self._boxes: dict[str, sandbox.Started] = {}  # a sandboxed bot's folders on the host, by entrant
        self._inits: dict[int, int] = {}  # a sandbox's init (its own process group), by its launcher's pid

    def _watch(self, line: str) -> None:
        """Tell the watchdog (started with the first bot) about a process group."""
        if self._watchdog is None:
            read, write = os.pipe()  # neither end is inherited by the bots
            try:
                self._watchdog = subprocess.Popen([sys.executable, "-I", "-S", str(WATCHDOG)], stdin=read,
                                                  stdout=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
            finally:
                os.close(read)
            self._guard = os.fdopen(write, "w", buffering=1)
        with contextlib.suppress(OSError):  # a watchdog that is gone cannot help; the bots still stop normally
            self._guard.write(line + "\n")

    async def __aenter__(self) -> LocalBots:
        starts = [asyncio.ensure_future(self._start(e)) for e in self.entrants]
        try:
            await asyncio.gather(*starts)
        except BaseException:
            # the others may still be starting: stop them first, or a process they spawn later is never stopped
            for t in starts:
                t.cancel()
            await asyncio.gather(*starts, return_exceptions=True)
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _argv(self, e: Bot) -> list[str]:
        """How ``e``'s command starts: in its sandbox (never without one: EntrantError says what is missing; the
        sandbox gets none of the referee's environment, not even in bwrap's own /proc), or through the
        launcher."""
        assert e.command
        if e.sandbox is None:
            if shutil.which(e.command[0]) is None:  # the launcher would only fail after its exec
                raise EntrantError(f"entrant {e.name}: cannot start {' '.join(e.command)!r}: no such program")
            return launch(e.command)
        if (why := sandbox.problem()) is not None:
            raise EntrantError(f"entrant {e.name}: {why}; a sandboxed bot never runs outside its sandbox")
        if (old := self._boxes.pop(e.name, None)) is not None:
            old.remove()
        try:
            box = self._boxes[e.name] = sandbox.start(e.command, e.sandbox, sandbox.next_cpu(), self.log_dir.parent,
                                                      pipes=True)  # fmt: skip
        except sandbox.SandboxUnavailable as err:
            raise EntrantError(f"entrant {e.name}: {err}") from None
        return box.argv

    async def _start(self, e: Bot) -> None:
        assert e.command
        log_path = self.log_dir / f"{self.prefix}-{e.name}.log"
        argv = self._argv(e)
        env: dict[str, str] | None = None if e.sandbox is None else {}
        pipes = self._boxes[e.name].pipes if e.sandbox is not None else None
        # owner-only (the folder too): stays open for the life of the process
        log = os.fdopen(open_private(log_path, os.O_WRONLY | os.O_APPEND), "ab")
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                stdin=asyncio.subprocess.DEVNULL,
                start_new_session=True,
                env=env,
                pass_fds=pipes.child_ends if pipes else (),
            )
        except OSError as err:
            log.close()
            raise EntrantError(f"entrant {e.name}: cannot start {' '.join(e.command)!r}: {err}") from None
        finally:
            if pipes is not None:
                pipes.spawned()
        self.procs[e.name] = proc
        self._watch(f"+{proc.pid}")  # its own session: the group id is its pid
        assert proc.stdout is not None
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                if pipes is not None:
                    await self._watch_init(proc.pid, pipes)
                while True:
                    line = await proc.stdout.readline()
                    if not line:
                        code = await proc.wait()
                        raise EntrantError(
                            f"entrant {e.name}: {' '.join(e.command)!r} exited with code {code} before printing "
                            f"'listening on HOST:PORT' (its output is in {log_path})"
                        )
                    log.write(line)
                    if m := LISTENING.search(line):
                        box = self._boxes.get(e.name)  # a sandbox's socket, as the referee reaches it
                        self._serving(e.name, box.address(proc.pid) if box else m[1].decode(), proc.pid)
                        break
        except TimeoutError:
            log.close()
            raise EntrantError(
                f"entrant {e.name}: {' '.join(e.command)!r} printed no 'listening on HOST:PORT' within "
                f"{START_TIMEOUT_S:.0f} s (its output is in {log_path})"
            ) from None
        except BaseException:
            log.close()
            raise
        self._drains.append(asyncio.create_task(_drain(proc.stdout, log)))
        self._watchers.append(asyncio.create_task(self._on_exit(e, proc)))

    async def _watch_init(self, launcher: int, pipes: sandbox.InitPipes) -> None:
        """Learn the sandbox's init, tell the watchdog, then let the bot run: whatever it starts, in any
        session, runs in a namespace whose init the watchdog kills if the referee dies."""
        try:
            if (init := await pipes.init_pid(launcher)) is not None:
                self._inits[launcher] = init
                self._watch(f"+{init}")  # a session of its own: the group id is its pid
        finally:
            pipes.release()

    def _groups(self, launcher: int) -> list[int]:
        """The process groups of a bot: its launcher's, and its sandbox's init's if it has one."""
        init = self._inits.get(launcher)
        return [launcher] if init is None else [launcher, init]

    def _kill(self, launcher: int) -> None:
        """SIGKILL every group of a bot; the watchdog forgets them."""
        for group in self._groups(launcher):
            _signal_group(group, signal.SIGKILL)
            self._watch(f"-{group}")
        self._inits.pop(launcher, None)

    def _serving(self, name: str, address: str, pgid: int) -> None:
        self.addresses[name] = address
        if self.shared is not None:
            self.shared[name] = address
        exits.watch(address, alive=lambda: _group_alive(pgid))  # its own session: the group id is its pid

    async def _on_exit(self, e: Bot, proc: asyncio.subprocess.Process) -> None:
        """When ``e``'s process ends before ``stop``: say how (to the games it was in, the log and the summary),
        and start it again if the policy and the cap allow."""
        code = await proc.wait()
        if self._stopping:
            return
        how = exits.how_it_ended(code)
        exits.exited(self.addresses[e.name], how)
        again = self.restart == "on-crash" and sum(c.entrant == e.name for c in self.crashes) < self.max_restarts
        self.crashes.append(Crash(e.name, how, again))
        log = get_logger(entrant=e.name)
        log.warning("command bot ended", why=how, restart="yes" if again else "no (the cap is reached)"
                    if self.restart == "on-crash" else "no (restart = never)")  # fmt: skip
        if not again:
            return
        self._kill(proc.pid)  # what it left behind in its group, and its sandbox
        done = self._restarting[e.name] = asyncio.get_running_loop().create_future()
        try:
            await self._start(e)
        except EntrantError as err:  # it stays down: its games fault as unreachable
            log.error("command bot did not restart", error=str(err))
        finally:
            del self._restarting[e.name]
            done.set_result(None)

    async def settled(self, names: Collection[str]) -> None:
        """Wait until no entrant of ``names`` is being started again."""
        for name in names:
            if (pending := self._restarting.get(name)) is not None:
                await asyncio.shield(pending)

    async def stop(self) -> None:
        """SIGTERM every bot's process group, up to STOP_GRACE_S for them all to end, then SIGKILL what is left."""
        self._stopping = True
        for w in self._watchers:
            if w is not asyncio.current_task():
                w.cancel()
        procs = list(self.procs.values())
        groups = [g for p in procs for g in self._groups(p.pid)]
        for group in groups:
            _signal_group(group, signal.SIGTERM)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STOP_GRACE_S
        while any(_group_alive(g) for g in groups) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        for proc in procs:
            self._kill(proc.pid)
            await proc.wait()
        for t in self._drains:
            t.cancel()
        for address in self.addresses.values():
            exits.forget(address)
        self.procs.clear()
        for box in self._boxes.values():
            box.remove()
        self._boxes.clear()
        if self._watchdog is not None:
            with contextlib.suppress(OSError):
                self._guard.close()  # the watchdog ends: every group it knew of is gone
            await asyncio.to_thread(self._watchdog.wait)
            self._watchdog = self._guard = None


async def _drain(stream: asyncio.StreamReader, log) -> None:
    try:
        while line := await stream.readline():
            log.write(line)
            log.flush()
    finally:
        log.close()


async def check_reachable(addresses: dict[str, str]) -> None:
    """Every entrant answers Hello (the match's, before every game), or EntrantError names each one that does not."""

    async def one(name: str, address: str) -> str | None:
        try:
            await hello(address)
        except HelloError as e:
            return f"entrant {name}: {e}"
        return None

    problems = [p for p in await asyncio.gather(*(one(n, a) for n, a in addresses.items())) if p]
    if problems:
        raise EntrantError("; ".join(problems))


def crash_summary(crashes: list[Crash]) -> list[str]:
    """One line per command entrant whose process ended mid-run: how often and how, and the restarts, e.g.
    ``crasher: 2 crashes (the bot's process exited with code 7 x2); started again 2 times``. With workers each
    runs its own copy of the bot (``Crash.where``): the line names the copies left down, if any."""
    lines = []
    for name in dict.fromkeys(c.entrant for c in crashes):
        mine = [c for c in crashes if c.entrant == name]
        hows = {h: sum(c.how == h for c in mine) for h in dict.fromkeys(c.how for c in mine)}
        told = ", ".join(f"{h} x{n}" if n > 1 else h for h, n in hows.items())
        again = sum(c.restarted for c in mine)
        last = {c.where: c for c in mine}  # each copy's last crash
        down = [w for w, c in last.items() if not c.restarted]
        tail = f"started again {again} time{'s' * (again != 1)}"
        if down:
            tail += "; then left down" + (f" (on {', '.join(down)})" if any(down) else "")
        lines.append(f"{name}: {len(mine)} crash{'es' * (len(mine) != 1)} ({told}); {tail}")
    return lines


class Addresses(dict[str, str]):
    """Each entrant's address by name, kept current as command bots restart; ``bots`` are the command bots, and
    ``crashes`` every command bot's process that ended mid-run (this process's, or the workers' as they close)."""

    def __init__(self, addresses: dict[str, str]) -> None:
        super().__init__(addresses)
        self.bots: LocalBots | None = None
        self.crashes: list[Crash] = []

    async def settled(self, names: Collection[str]) -> None:
        """Wait until no entrant of ``names`` is being restarted, so that a game seats the fresh process."""
        if self.bots is not None:
            await self.bots.settled(names)


@contextlib.asynccontextmanager
async def ready(
    lineup: Lineup,
    log_dir: Path,
    *,
    retry_s: float | None = None,
    keep_trying: Callable[[], bool] = lambda: True,
    prefix: str | None = None,
) -> AsyncIterator[dict[str, str]]:
    """Start the command bots, wait until every entrant answers Hello, and yield each one's address; the command
    bots are stopped on leaving (with ``fresh_process``, at once: each game starts its own).

    Without ``retry_s`` an unreachable entrant raises EntrantError at once. With it, Hello is asked again every
    ``retry_s`` seconds for as long as ``keep_trying()`` (the service's resumed run waits for its bots to come back
    rather than fault them all); EntrantError is raised once it says stop. Command bots log to
    ``<log_dir>/<prefix>-<name>.log`` (the prefix defaults to the run's id; a worker adds its own name)."""
    addresses = Addresses(lineup.addresses())
    restart = "never" if lineup.fresh_process else lineup.restart
    async with LocalBots(lineup.bots, log_dir, prefix or lineup.run_id, restart=restart,
                         max_restarts=lineup.max_restarts, shared=addresses) as bots:  # fmt: skip
        addresses.bots, addresses.crashes = bots, bots.crashes
        while True:
            try:
                await check_reachable(addresses)
                break
            except EntrantError as e:
                if retry_s is None:
                    raise
                get_logger(run=lineup.run_id).warning("entrants unreachable; retrying", error=str(e), retry_s=retry_s)
                await asyncio.sleep(retry_s)
                if not keep_trying():
                    raise
        if lineup.fresh_process:  # every game starts its own (fresh_bots): these only answered Hello
            await bots.stop()
            for name in bots.addresses:
                del addresses[name]
            addresses.bots = None
        yield addresses


@contextlib.asynccontextmanager
async def fresh_bots(
    lineup: Lineup, seats: tuple[str, ...], addresses: dict[str, str], log_dir: Path, prefix: str
) -> AsyncIterator[dict[str, str]]:
    """The addresses to seat a game with. With ``fresh_process``, the game's command bots are started for it alone
    and stopped after it, so no process of theirs outlives one game (it cannot remember a deal)."""
    if isinstance(addresses, Addresses):  # a crashed command bot being started again: wait for it
        await addresses.settled(seats)
    commands = tuple(b for b in lineup.commands if b.name in seats) if lineup.fresh_process else ()
    if not commands:
        yield addresses
        return
    async with LocalBots(commands, log_dir, prefix) as bots:
        yield {**addresses, **bots.addresses}
