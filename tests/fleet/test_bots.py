"""The command bots the fleet starts itself (fleet/bots.py), in the test's process so mutation testing sees them:
the address a bot prints, its log, the refusals when it cannot start, the stop of its whole process group (SIGTERM,
then SIGKILL after the grace), a restart's leftovers killed and its fresh address, the launcher that dies with its
parent, the process groups counted alive (and left unsignalled by the check), a bot outside a sandbox with the
referee's environment, and a sandbox's init among the groups the stop signals. Every bot is a real process
(``sys.executable -c``); the bots that must answer Hello are the example bot served by ``abluxx bot``."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from referee.fleet import bots, sandbox
from referee.fleet.bots import Addresses, LocalBots, check_reachable, fresh_bots, launch, ready
from referee.fleet.errors import EntrantError
from referee.fleet.lineup import Bot, Lineup
from referee.match import exits
from tests.sandbox.conftest import needs_sandbox

# Says where it "listens" (its first argument's port), writes a line to stdout and one to stderr, then waits; on
# SIGTERM it writes "TERM" to its log and ends. With a second argument it first starts a child in its own group
# that ignores SIGTERM and says its pid ("child PID") once the child ignores it.
SERVER = (sys.executable, "-c", """
import os, signal, subprocess, sys, time
def term(*_):
    print("TERM", flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
print("starting", flush=True)
if len(sys.argv) > 2:
    deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(flush=True); time.sleep(120)"
    c = subprocess.Popen([sys.executable, "-c", deaf], stdout=subprocess.PIPE)
    c.stdout.readline()  # it ignores SIGTERM from now on
    print("child", c.pid, flush=True)
print("listening on 127.0.0.1:" + sys.argv[1], flush=True)
print("after", flush=True)
print("to stderr", file=sys.stderr, flush=True)
while True:
    time.sleep(1)
""")  # fmt: skip
STUBBORN = (sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('listening on 127.0.0.1:1', flush=True); time.sleep(120)")  # fmt: skip
EXAMPLE = (sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())", "bot", "random",
           "--port", "0")  # fmt: skip


# The stop's grace in the tests where a bot must write "TERM" before the SIGKILL: a bot a loaded machine leaves
# unscheduled for seconds still answers SIGTERM well inside it (a child that ignores SIGTERM makes the stop wait all
# of it, so it is not longer).
GRACE_S = 5.0
# Exits with code 2 once the log named by its argument holds the line "after" (up to 60 s)
FAILS_AFTER = (sys.executable, "-c", """
import os, sys, time
for _ in range(3000):
    if os.path.exists(sys.argv[1]) and "after" in open(sys.argv[1]).read().splitlines():
        break
    time.sleep(0.02)
sys.exit(2)
""")  # fmt: skip


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _child_pid(log: Path) -> int:
    return next(int(line.split()[1]) for line in log.read_text().splitlines() if line.startswith("child "))


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


async def _logged(log: Path, lines: set[str]) -> None:
    """Wait (up to 60 s) until ``lines`` are in a bot's log: the lines before its address are flushed with the
    first one after it."""
    async with asyncio.timeout(60):
        while not lines <= set(log.read_text().splitlines()):
            await asyncio.sleep(0.02)


def test_a_bot_is_reached_at_the_address_it_prints_and_everything_it_writes_is_logged(tmp_path: Path) -> None:
    """Only the command entrants start; their address goes to ``addresses`` and the shared dict; stdout (before and
    after the address) and stderr go to ``<prefix>-<name>.log``; on leaving, the bot is stopped."""
    shared: dict[str, str] = {"away": "10.0.0.1:5"}
    entrants = (Bot("b", command=(*SERVER, "4567")), Bot("away", address="10.0.0.1:5"), Bot("p", policy="greedy"))

    async def go() -> tuple[dict[str, str], int]:
        async with LocalBots(entrants, tmp_path, "run1", shared=shared) as local:
            assert [e.name for e in local.entrants] == ["b"]
            await _logged(tmp_path / "run1-b.log", {"after", "to stderr"})  # its last lines reach the log
            return dict(local.addresses), local.procs["b"].pid

    addresses, pid = asyncio.run(go())
    assert addresses == {"b": "127.0.0.1:4567"}
    assert shared == {"away": "10.0.0.1:5", "b": "127.0.0.1:4567"}
    log = (tmp_path / "run1-b.log").read_text()
    for line in ("starting", "listening on 127.0.0.1:4567", "after", "to stderr"):
        assert line in log.splitlines(), log
    assert not _alive(pid)


def test_stop_kills_the_whole_group_after_the_grace_and_no_sooner_than_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child that ignores SIGTERM keeps the group alive: it is killed once the grace is over. A bot that ends on
    SIGTERM is not waited for the whole grace."""
    monkeypatch.setattr(bots, "STOP_GRACE_S", GRACE_S)

    async def go(entrant: Bot) -> float:
        async with LocalBots((entrant,), tmp_path, "stop") as local:
            await asyncio.sleep(0.2)
            started = time.monotonic()
            await local.stop()
            assert local.procs == {}
            return time.monotonic() - started

    with_child = asyncio.run(go(Bot("g", command=(*SERVER, "1", "child"))))
    child = _child_pid(tmp_path / "stop-g.log")
    # SIGKILL was sent; on a loaded machine the kernel may take a moment to end it (it ignores SIGTERM: without the
    # SIGKILL it would run on)
    assert _gone_within(child, 10)
    assert with_child >= GRACE_S  # the grace, for the child that ignored SIGTERM
    assert "TERM" in (tmp_path / "stop-g.log").read_text().splitlines()  # SIGTERM came first
    monkeypatch.setattr(bots, "STOP_GRACE_S", 60.0)
    assert asyncio.run(go(Bot("q", command=(*SERVER, "2")))) < 30.0  # it ended at SIGTERM: not the 60 s grace


def test_a_bot_that_ignores_sigterm_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bots, "STOP_GRACE_S", 0.5)

    async def go() -> int:
        async with LocalBots((Bot("s", command=STUBBORN),), tmp_path, "stubborn") as local:
            return local.procs["s"].pid

    assert not _alive(asyncio.run(go()))


EXITS = (sys.executable, "-c", "print('hello'); raise SystemExit(3)")
SILENT = (sys.executable, "-c", "import time; print('listening nowhere', flush=True); time.sleep(30)")
HUGE = ("true", "x" * 200_000)  # one argument over the kernel's 128 KiB: the exec itself fails (E2BIG)


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (("no-such-program-xyz", "--flag"), "cannot start 'no-such-program-xyz --flag': no such program"),
        (EXITS, f"{' '.join(EXITS)!r} exited with code 3 before printing 'listening on HOST:PORT' (its output is in "
                "LOG)"),
        (SILENT, f"{' '.join(SILENT)!r} printed no 'listening on HOST:PORT' within 1 s (its output is in LOG)"),
        (HUGE, f"cannot start {' '.join(HUGE)!r}: [Errno 7] Argument list too long: {sys.executable!r}"),
    ],
    ids=["no-program", "exits", "silent", "huge"],
)  # fmt: skip
def test_a_bot_that_cannot_start_is_named_with_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...], words: str
) -> None:
    # Only the silent bot waits out the start timeout: the one that exits is told apart from it by its exit, which
    # a loaded machine may take more than a second to start Python and reach.
    monkeypatch.setattr(bots, "START_TIMEOUT_S", 1.0 if command == SILENT else 60.0)

    async def go() -> None:
        async with LocalBots((Bot("b", command=command),), tmp_path, "start"):
            pass

    with pytest.raises(EntrantError) as e:
        asyncio.run(go())
    assert str(e.value) == "entrant b: " + words.replace("LOG", str(tmp_path / "start-b.log"))


def test_a_failed_start_stops_the_bots_already_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bots, "STOP_GRACE_S", GRACE_S)
    good = Bot("good", command=(*SERVER, "1", "child"))
    log = tmp_path / "half-good.log"
    # "bad" fails once "good" is started (its first line after the address is in its log), however slow the machine
    # makes good's start: the two start side by side
    bad = Bot("bad", command=(*FAILS_AFTER, str(log)))

    async def go() -> None:
        async with LocalBots((good, bad), tmp_path, "half"):
            pass

    with pytest.raises(EntrantError, match=r"entrant bad: .* exited with code 2"):
        asyncio.run(go())
    assert "TERM" in log.read_text().splitlines()
    assert _gone_within(_child_pid(log), 10)


# Each start prints the next port of a counter file; the first two starts leave a child in their group and end
# with code 7 half a second after saying where they listen. (The child does not keep the bot's stdout: on Python
# 3.11 asyncio sees a process end only once its pipes are closed.)
RESTARTING = (sys.executable, "-c", """
import os, subprocess, sys, time
n = int(open(sys.argv[1]).read()) if os.path.exists(sys.argv[1]) else 0
open(sys.argv[1], "w").write(str(n + 1))
if n < 2:
    c = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], stdout=subprocess.DEVNULL)
    print("child", c.pid, flush=True)
print("listening on 127.0.0.1:" + str(7000 + n), flush=True)
time.sleep(0.5 if n < 2 else 120)
raise SystemExit(7)
""")  # fmt: skip


def test_a_restarted_bot_gets_its_fresh_address_and_what_it_left_is_killed(tmp_path: Path) -> None:
    count = tmp_path / "count"
    shared: dict[str, str] = {}
    entrant = Bot("r", command=(*RESTARTING, str(count)))

    async def go() -> tuple[list[bots.Crash], str, str]:
        async with LocalBots((entrant,), tmp_path, "again", restart="on-crash", max_restarts=5,
                             shared=shared) as local:  # fmt: skip
            async with asyncio.timeout(60):
                while len(local.crashes) < 2:
                    await asyncio.sleep(0.02)
                await local.settled(["r", "not-a-bot"])
            return list(local.crashes), local.addresses["r"], shared["r"]

    crashes, address, told = asyncio.run(go())
    how = "the bot's process exited with code 7"
    assert crashes == [bots.Crash("r", how, True), bots.Crash("r", how, True)]
    assert address == told == "127.0.0.1:7002"
    children = [int(line.split()[1]) for line in (tmp_path / "again-r.log").read_text().splitlines()
                if line.startswith("child ")]  # fmt: skip
    assert len(children) == 2 and not [c for c in children if _alive(c)]


@pytest.mark.parametrize("policy", [{"max_restarts": 5}, {"restart": "on-crash"}], ids=["never", "no-cap-given"])
def test_without_the_restart_policy_or_a_cap_a_crashed_bot_stays_down(tmp_path: Path, policy: dict) -> None:
    entrant = Bot("r", command=(*RESTARTING, str(tmp_path / "count")))

    async def go() -> list[bots.Crash]:
        async with LocalBots((entrant,), tmp_path, "never", **policy) as local:
            async with asyncio.timeout(60):
                while not local.crashes:
                    await asyncio.sleep(0.02)
            await asyncio.sleep(1.0)  # no second start comes
            return list(local.crashes)

    assert asyncio.run(go()) == [bots.Crash("r", "the bot's process exited with code 7", False)]
    assert (tmp_path / "count").read_text() == "1"


@pytest.mark.usefixtures("every_log_level")
def test_a_restart_that_fails_leaves_the_bot_down_and_settled(tmp_path: Path) -> None:
    count = tmp_path / "count"
    first = (sys.executable, "-c", "import os, sys, time; p = sys.argv[1]; "
             "n = os.path.exists(p); open(p, 'a').write('x'); "
             "n and sys.exit(4); print('listening on 127.0.0.1:9', flush=True); time.sleep(0.3); sys.exit(7)",
             str(count))  # fmt: skip

    async def go() -> list[bots.Crash]:
        async with LocalBots((Bot("f", command=first),), tmp_path, "fails", restart="on-crash",
                             max_restarts=3) as local:  # fmt: skip
            async with asyncio.timeout(60):
                while not local.crashes:
                    await asyncio.sleep(0.02)
                await asyncio.sleep(0)
                await local.settled(["f"])
            assert local._restarting == {}
            return list(local.crashes)

    with capture_logs() as logs:
        assert asyncio.run(go()) == [bots.Crash("f", "the bot's process exited with code 7", True)]
    assert count.read_text() == "xx"
    (failed,) = [e for e in logs if e["event"] == "command bot did not restart"]
    assert failed["entrant"] == "f" and failed["log_level"] == "error"
    assert failed["error"].startswith("entrant f: ") and "exited with code 4 before printing" in failed["error"]


def test_the_watchdog_kills_every_group_when_the_referee_is_gone(tmp_path: Path) -> None:
    """The watchdog is told of each bot's group: when its pipe closes (as when the referee is SIGKILLed), it kills
    them, a child that ignores SIGTERM too."""

    async def go() -> tuple[int, int]:
        local = LocalBots((Bot("w", command=(*SERVER, "1", "child")),), tmp_path, "dog")
        async with local:
            await _logged(tmp_path / "dog-w.log", {"after"})  # with it, the child's pid
            pid = local.procs["w"].pid
            assert local._watchdog is not None  # a signal to the referee's process group (a Ctrl-C) spares it
            assert os.getpgid(local._watchdog.pid) == local._watchdog.pid != os.getpgid(0)
            # What the kernel does to the pipe of a referee that died, with nothing flushed: its end closes. (A
            # broken pipe takes the place of its descriptor, so the stop's own lines to it fail as they would.)
            read, broken = os.pipe()
            os.close(read)
            os.dup2(broken, local._guard.fileno())
            os.close(broken)
            child = _child_pid(tmp_path / "dog-w.log")
            gone = await asyncio.to_thread(_gone_within, child, 20)
            assert gone and await asyncio.to_thread(_gone_within, pid, 20)
        return pid, child

    asyncio.run(go())


def test_a_zombie_group_is_not_alive_and_a_running_one_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    ended = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    try:
        assert bots._group_alive(running.pid)
        deadline = time.monotonic() + 30
        while _alive(ended.pid) and time.monotonic() < deadline:  # a zombie until it is reaped
            time.sleep(0.05)
        assert os.path.exists(f"/proc/{ended.pid}")  # not reaped yet
        assert not bots._group_alive(ended.pid)
        running.terminate()
        assert running.wait(30) == -signal.SIGTERM  # the checks sent it nothing: this is the first signal it died of
    finally:
        running.kill()
        running.wait()
        ended.wait()
    assert not bots._group_alive(running.pid)

    def refused(pgid: int, sig: int) -> None:
        raise PermissionError  # another user's group: it runs, and is not this process's to kill

    # a process whose name holds ") Z" is read from the last ")" of its stat line, where its own fields begin
    odd = tmp_path / "x) Z 1 ("
    odd.symlink_to(sys.executable)
    named = subprocess.Popen([str(odd), "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        assert bots._group_alive(named.pid)
    finally:
        named.kill()
        named.wait()
    monkeypatch.setattr(os, "killpg", refused)
    assert bots._group_alive(running.pid)
    bots._signal_group(running.pid, signal.SIGKILL)  # said nothing: not ours


def test_a_launched_command_runs_and_dies_with_the_process_that_launched_it() -> None:
    out = subprocess.run(launch((sys.executable, "-c", "import sys; print(sys.argv[1:])", "a", "b")),
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.stdout == "['a', 'b']\n" and out.returncode == 0
    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys, time; from referee.fleet.bots import launch; "
         "p = subprocess.Popen(launch((sys.executable, '-c', 'import time; time.sleep(120)'))); "
         "print(p.pid, flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _alive(child)
    finally:
        parent.kill()
        parent.wait()
    assert _gone_within(child, 20)


def test_the_start_up_check_names_every_entrant_that_does_not_answer(tmp_path: Path) -> None:
    async def go() -> None:
        async with LocalBots((Bot("good", command=EXAMPLE),), tmp_path, "hello") as local:
            await check_reachable({**local.addresses, "x": "127.0.0.1:1", "y": "127.0.0.1:2"})

    with pytest.raises(EntrantError) as e:
        asyncio.run(go())
    assert str(e.value).startswith("entrant x: ") and "; entrant y: " in str(e.value), e.value
    assert "good" not in str(e.value)


def test_ready_gives_the_addresses_and_the_bots_and_retries_as_long_as_told(tmp_path: Path) -> None:
    lineup = Lineup("run7", (Bot("c", command=EXAMPLE), Bot("p", policy="greedy")), restart="on-crash",
                    max_restarts=2)  # fmt: skip

    async def go() -> None:
        async with ready(lineup, tmp_path) as addresses:
            assert isinstance(addresses, Addresses) and set(addresses) == {"c"}
            assert addresses.bots is not None and addresses.bots.restart == "on-crash"
            assert addresses.bots.max_restarts == 2 and addresses.crashes is addresses.bots.crashes
            async with fresh_bots(lineup, ("c", "p"), addresses, tmp_path, "g1") as seats:
                assert seats is addresses
        assert (tmp_path / "run7-c.log").exists()

    asyncio.run(go())
    asked: list[int] = []
    away = Lineup("run8", (Bot("a", address="127.0.0.1:1"),))

    async def retry() -> None:
        async with ready(away, tmp_path, retry_s=0.05, keep_trying=lambda: asked.append(1) or len(asked) < 3):
            pass

    with pytest.raises(EntrantError, match="entrant a: "):
        asyncio.run(retry())
    assert len(asked) == 3


def test_fresh_process_bots_answer_hello_then_start_for_each_game_alone(tmp_path: Path) -> None:
    lineup = Lineup("run9", (Bot("c", command=EXAMPLE), Bot("p", policy="greedy")), fresh_process=True)

    async def play() -> None:
        async with ready(lineup, tmp_path, prefix="pre") as addresses:
            assert dict(addresses) == {} and addresses.bots is None
            async with fresh_bots(lineup, ("c", "p"), addresses, tmp_path, "g1") as seats:
                assert set(seats) == {"c"}
                await check_reachable(seats)
            async with fresh_bots(lineup, ("p",), addresses, tmp_path, "g2") as seats:
                assert seats is addresses

    asyncio.run(play())
    assert (tmp_path / "pre-c.log").exists() and (tmp_path / "g1-c.log").exists()
    assert not (tmp_path / "g2-c.log").exists()


@pytest.mark.usefixtures("every_log_level")  # tests/conftest.py: capture_logs sees every event
def test_a_crash_is_told_to_the_games_at_its_address_and_in_the_log(tmp_path: Path) -> None:
    """The match runner asks fleet/bots' record in match/exits.py how a seat's process ended (its fault's words):
    the address is watched while the bot serves, alive while its group runs, and its end is told there."""
    entrant = Bot("r", command=(*RESTARTING, str(tmp_path / "count")))

    async def go() -> None:
        async with LocalBots((entrant,), tmp_path, "told") as local:
            address = local.addresses["r"]
            assert exits._watched[address].alive() is True
            with capture_logs() as logs:
                async with asyncio.timeout(60):
                    while not local.crashes:
                        await asyncio.sleep(0.02)
            assert await exits.note(address, 5) == "the bot's process exited with code 7"
            (ended,) = [e for e in logs if e["event"] == "command bot ended"]
            assert (ended["entrant"], ended["restart"], ended["log_level"]) == ("r", "no (restart = never)", "warning")
            assert ended["why"] == "the bot's process exited with code 7"
        assert await exits.note(address, 0.1) is None  # stopped: forgotten

    asyncio.run(go())


def test_the_summary_counts_each_way_a_bot_ended_and_names_every_copy_left_down() -> None:
    code7, killed = "the bot's process exited with code 7", "the bot's process was killed by signal SIGKILL"
    crashes = [bots.Crash("b", code7, True, "t-w0"), bots.Crash("b", killed, True, "t-w1"),
               bots.Crash("b", code7, False, "t-w0"), bots.Crash("b", killed, False, "t-w1")]  # fmt: skip
    assert bots.crash_summary(crashes) == [
        f"b: 4 crashes ({code7} x2, {killed} x2); started again 2 times; then left down (on t-w0, t-w1)"
    ]
    assert bots.crash_summary(crashes[:2]) == [f"b: 2 crashes ({code7}, {killed}); started again 2 times"]


def test_addresses_start_with_no_bots_and_no_crashes() -> None:
    addresses = Addresses({"a": "127.0.0.1:5"})
    assert addresses.crashes == [] and addresses.bots is None and dict(addresses) == {"a": "127.0.0.1:5"}
    asyncio.run(addresses.settled(["a"]))  # no command bots: nothing to wait for


@pytest.mark.usefixtures("every_log_level")
def test_the_log_says_whether_a_crashed_bot_is_started_again(tmp_path: Path) -> None:
    entrant = Bot("r", command=(*RESTARTING, str(tmp_path / "count")))

    async def go() -> list[dict]:
        with capture_logs() as logs:
            async with LocalBots((entrant,), tmp_path, "cap", restart="on-crash", max_restarts=1) as local:
                async with asyncio.timeout(60):
                    while len(local.crashes) < 2:
                        await asyncio.sleep(0.02)
        return [e for e in logs if e["event"] == "command bot ended"]

    ended = asyncio.run(go())
    assert [(e["entrant"], e["restart"], e["why"]) for e in ended] == [
        ("r", "yes", "the bot's process exited with code 7"),
        ("r", "no (the cap is reached)", "the bot's process exited with code 7"),
    ]


# In its sandbox: says whether the referee's environment shows in bwrap's own /proc (its pid 1) and how many CPUs
# it may use, then where it serves, then ends with code 5 a moment later.
BOXED = ("python3", "-c", "import os, sys, time; env = open('/proc/1/environ', 'rb').read(); "
         "print('SEEN' if b'ABLUXX_SECRET' in env else 'UNSEEN', flush=True); "
         "print('cpus', len(os.sched_getaffinity(0)), flush=True); "
         "print('listening on {listen}', flush=True); time.sleep(1); sys.exit(5)")  # fmt: skip


@needs_sandbox()
def test_a_sandboxed_bot_is_dialled_through_its_box_without_the_referees_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its address is its socket in the launcher's mount namespace; each start gets a fresh box and the last one's
    folders are removed (at a restart, and at the stop)."""
    monkeypatch.setenv("ABLUXX_SECRET", "x")
    entrant = Bot("s", command=BOXED, sandbox=sandbox.Sandbox())

    async def go() -> tuple[list[sandbox.Started], list[str]]:
        seen: list[sandbox.Started] = []
        addresses: list[str] = []
        async with LocalBots((entrant,), tmp_path / "logs", "box", restart="on-crash", max_restarts=1) as local:
            async with asyncio.timeout(60):
                while len(local.crashes) < 2:
                    if (address := local.addresses.get("s")) not in addresses:  # a start has served
                        box = local._boxes["s"]
                        seen.append(box)
                        addresses.append(address)
                        assert address == box.address(local.procs["s"].pid) and os.path.isdir(box.socket_dir)
                    await asyncio.sleep(0.01)
                await local.settled(["s"])
            assert seen[0] is not local._boxes["s"] and not os.path.exists(seen[0].socket_dir)  # replaced
        assert local._boxes == {}
        return seen, addresses

    seen, addresses = asyncio.run(go())
    assert len(seen) == 2 and not [b for b in seen if os.path.exists(b.socket_dir) or os.path.exists(b.stage_dir)]
    assert addresses[0] != addresses[1] and addresses[1].startswith("unix:/proc/")
    log = (tmp_path / "logs" / "box-s.log").read_text().splitlines()
    assert log.count("UNSEEN") == 2 and "SEEN" not in log
    if len(os.sched_getaffinity(0)) > 1:
        assert log.count("cpus 1") == 2  # pinned to one CPU


@pytest.mark.usefixtures("every_log_level")
def test_a_stop_during_a_restart_abandons_the_restart(tmp_path: Path) -> None:
    """The bot crashed and its next start is slow to serve: the stop ends that start (its process too) rather than
    letting it fail afterwards as a restart that did not work."""
    slow = (sys.executable, "-c", "import os, sys, time; p = sys.argv[1]; again = os.path.exists(p); "
            "open(p, 'a').write('x'); time.sleep(30 if again else 0); "
            "print('listening on 127.0.0.1:9', flush=True); time.sleep(0.3); sys.exit(7)",
            str(tmp_path / "count"))  # fmt: skip

    async def go() -> list[dict]:
        with capture_logs() as logs:
            async with LocalBots((Bot("s", command=slow),), tmp_path, "slow", restart="on-crash",
                                 max_restarts=3) as local:  # fmt: skip
                async with asyncio.timeout(60):
                    while not ("s" in local._restarting and (tmp_path / "count").read_text() == "xx"):
                        await asyncio.sleep(0.02)
                restarting = local._restarting["s"]
            assert restarting.done() and local._restarting == {}
        return [e for e in logs if e["event"] == "command bot did not restart"]

    assert asyncio.run(go()) == []


ENVIRONMENT = (sys.executable, "-c", "import os, time; print('mark', os.environ.get('ABLUXX_MARK'), flush=True); "
               "print('listening on 127.0.0.1:1', flush=True); time.sleep(120)")  # fmt: skip


def test_a_bot_outside_a_sandbox_runs_with_the_referees_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ABLUXX_MARK", "here")

    async def go() -> None:
        async with LocalBots((Bot("e", command=ENVIRONMENT),), tmp_path, "env"):
            pass

    asyncio.run(go())
    assert "mark here" in (tmp_path / "env-e.log").read_text().splitlines()


LASTING = ("python3", "-c", "import time; print('listening on {listen}', flush=True); time.sleep(120)")


@needs_sandbox()
def test_the_stop_reaches_a_sandboxs_init_and_forgets_it(tmp_path: Path) -> None:
    """bwrap's init (pid 1 of the bot's namespace, in a session of its own that a signal to the launcher's group
    misses) is learnt as the bot starts, and is one of the groups the stop signals; after the stop it is gone and
    forgotten."""

    async def go() -> int:
        async with LocalBots((Bot("s", command=LASTING, sandbox=sandbox.Sandbox()),), tmp_path, "init") as local:
            launcher = local.procs["s"].pid
            [(key, init)] = local._inits.items()
            assert key == launcher and sandbox._parent_of(init) == launcher and os.getsid(init) == init
            assert local._groups(launcher) == [launcher, init]
        assert local._inits == {}
        return init

    init = asyncio.run(go())
    assert _gone_within(init, 20)


STDIN = (sys.executable, "-c", "import sys, time; print('stdin', repr(sys.stdin.read()), flush=True); "
         "print('listening on 127.0.0.1:1', flush=True); time.sleep(120)")  # fmt: skip


def test_a_bot_reads_nothing_of_the_referees_stdin(tmp_path: Path) -> None:
    """What is typed at the referee's terminal is the referee's: a bot's stdin is /dev/null. The test lends its own
    fd 0 a pipe with data for the bot's start (a pytest-xdist worker's channel is on another descriptor: execnet
    points fd 0 at /dev/null)."""
    read, write = os.pipe()
    os.write(write, b"typed")
    os.close(write)
    kept = os.dup(0)
    os.dup2(read, 0)
    os.close(read)

    async def go() -> None:
        async with LocalBots((Bot("i", command=STDIN),), tmp_path, "stdin"):
            pass

    try:
        asyncio.run(go())
    finally:
        os.dup2(kept, 0)
        os.close(kept)
    assert "stdin ''" in (tmp_path / "stdin-i.log").read_text().splitlines()
