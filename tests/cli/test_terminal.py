"""No bot can drive the terminal of someone reading its games: ESC ]0; (retitle), ESC [2J (clear) and CR in a
bot's Hello strings, its gRPC error details, or an entrant's name reach `abluxx match`, its log lines, `replay`,
`games` and `standings` escaped (``\\x1b``). Real `abluxx` processes, a real bot, a real data folder."""

from __future__ import annotations

import asyncio
import io
import re
import subprocess
import sys
from pathlib import Path

from match.helpers import bot_process  # tests/match (pytest puts tests/ on the path)

from referee.fleet import match_player
from referee.store import open_store
from referee.terminal import StatusLine, printable, said, say
from referee.tournament.config import EntrantConfig, TournamentConfig
from referee.tournament.runner import run_tournament

ABLUXX = [sys.executable, "-c", "import sys; from referee.cli import main; sys.exit(main())"]
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\rgotcha"  # as tests/fixtures/bad_bots.py --mode hostile sends it
ESCAPED = r"\x1b]0;pwned\x07\x1b[2J\rgotcha"
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f]")  # any control character but the line break


def abluxx(*args: str | Path, cwd: Path, code: int = 0, stream: str = "stdout") -> str:
    """What the command printed on ``stream``; nothing it printed holds a raw control character."""
    # bytes, not text mode, which would turn a CR into a line break
    out = subprocess.run([*ABLUXX, *map(str, args)], cwd=cwd, capture_output=True, timeout=120)
    stdout, stderr = out.stdout.decode(), out.stderr.decode()
    assert out.returncode == code, stderr
    assert not RAW.search(stdout + stderr), repr(stdout + stderr)
    return stdout if stream == "stdout" else stderr


def test_a_bots_hello_strings_and_error_details_are_escaped_in_match_logs_and_replay(tmp_path: Path) -> None:
    args = ("--mode", "hostile", "--transports", "unary", "--bad-count", "1")  # one abort per bot process
    with bot_process(*args) as hostile, bot_process(*args) as hostile2:
        played = abluxx("match", hostile, "greedy", "--game-id", "g", "--data", tmp_path, cwd=tmp_path)
        # the readable log lines of a tournament run, with the bot's error in a fault line
        (tmp_path / "t.toml").write_text(f'[[entrants]]\nname = "h"\naddress = "{hostile2}"\n'
                                         '[[entrants]]\nname = "g"\npolicy = "greedy"\n')  # fmt: skip
        logged = abluxx("tournament", "run", "t.toml", "--data", tmp_path / "d", "--no-progress", cwd=tmp_path,
                        stream="stderr")  # fmt: skip
    assert "first fault" in played and ESCAPED in played  # the bot's abort details, escaped
    assert "fault" in logged and "pwned" in logged
    shown = abluxx("replay", "g", "--data", tmp_path, cwd=tmp_path)  # the Hello version and the fault detail
    assert "1.0" + ESCAPED in shown and ESCAPED in shown.split("fault", 1)[1]


def test_a_hello_name_and_a_command_line_name_show_control_characters_alike(tmp_path: Path) -> None:
    """ESC in a Hello name became a space while a name given on the command line showed as \\x1b: one rendering."""
    with bot_process("--mode", "hostile", "--transports", "unary", "--bad-count", "0") as hostile:
        from_hello = abluxx("match", hostile, "greedy", "--data", tmp_path, cwd=tmp_path, code=0)
        from_cli = abluxx("match", f"{HOSTILE}={hostile}", "greedy", "--data", tmp_path, cwd=tmp_path, code=0)
    shown = ESCAPED[:40]  # a Hello name is cut at 40 characters
    assert f"{shown} ({hostile})" in from_hello, from_hello
    assert f"{ESCAPED} ({hostile})" in from_cli, from_cli


def test_entrant_names_are_escaped_in_games_and_standings(tmp_path: Path) -> None:
    # A data folder whose names hold escapes (the config file's rules would refuse them; the store does not).
    evil = "evil" + HOSTILE
    entrants = (EntrantConfig(evil, policy="random"), EntrantConfig("b", policy="greedy"))
    config = TournamentConfig(name="t", entrants=entrants)
    with open_store(tmp_path / "d") as store:
        asyncio.run(run_tournament(config, store, match_player, progress=False))
    for command in (["games"], ["standings"], ["standings", "--csv"]):
        shown = abluxx(*command, "--data", tmp_path / "d", cwd=tmp_path)
        assert r"evil\x1b]0;" in shown  # (a table cuts long names)


def test_the_cli_prints_only_through_say() -> None:
    # a bare print() in a command would be an output path that escapes nothing
    import ast

    import referee.cli

    for path in Path(referee.cli.__file__).parent.glob("*.py"):
        calls = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)]
        bare = [n.lineno for n in calls if isinstance(n.func, ast.Name) and n.func.id == "print"]
        assert not bare, f"{path.name} calls print() on lines {bare}: use referee.terminal.say"


def test_c1_controls_and_unicode_reorderings_are_escaped_at_their_edges() -> None:
    # issue 22 item 4: a C1 CSI (\x9b, a one-byte ESC [) clears a screen like ESC [2J does; NEL (\x85) breaks a line
    escaped = {
        "\x9b2J": r"\x9b2J", "\x85": r"\x85", "\x80": r"\x80", "\x9f": r"\x9f", "\x7f": r"\x7f", "\x00": r"\x00",
        "\x09": r"\t", "\x0b": r"\x0b", "\x1f": r"\x1f", "\u2028": r"\u2028", "\u2029": r"\u2029",
        "\u202a": r"\u202a", "\u202e": r"\u202e", "\u2066": r"\u2066", "\u2069": r"\u2069",
    }  # fmt: skip
    for raw, shown in escaped.items():
        assert printable(f"a{raw}b") == f"a{shown}b", raw
    kept = "line\nnext \xa0é\u2027\u202f\u2065\u206a ok ~"  # the line break, printable neighbours of the ranges
    assert printable(kept) == kept
    out = io.StringIO()
    say("x\x9b2J", "\x85y", file=out)
    assert out.getvalue() == "x\\x9b2J \\x85y\n"


class _Flushes(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


def test_say_is_print_with_escapes_its_end_and_flush(capsys) -> None:
    out = _Flushes()
    say("a", 1, None, sep="|", end="", file=out)
    assert out.getvalue() == "a|1|None" and out.flushes == 0  # no flush unless asked, like print
    say("b", file=out, flush=True)
    assert out.getvalue() == "a|1|Noneb\n" and out.flushes == 1
    say("to\x1bstdout")
    assert capsys.readouterr().out == "to\\x1bstdout\n"


def test_said_spells_a_value_as_a_file_would() -> None:
    assert said(None) == "nothing"
    assert [said(v) for v in (True, 3, 2.5, "two", "é", [1, "x"])] == ["true", "3", "2.5", '"two"', '"é"', '[1, "x"]']
    assert said({1}) == "{1}"  # not JSON: as Python writes it
    assert said(float("nan")) == "NaN"


def test_a_status_line_starts_empty_and_cuts_its_text() -> None:
    out = _Flushes()
    line = StatusLine(out, max_chars=5)
    assert line.stream is out and line.width == 0
    line.clear()  # nothing drawn: nothing to blank
    assert out.getvalue() == "" and out.flushes == 0
    line.draw("abc\x1bdef")
    assert out.getvalue() == "\rabc\\x" and out.flushes == 1 and line.width == 5
    line.draw("z")
    assert out.getvalue().endswith("\rz    ") and line.width == 5
    line.clear()
    assert out.getvalue().endswith("\r     \r") and line.width == 0 and out.flushes == 3
    assert StatusLine(out).max_chars == 160
