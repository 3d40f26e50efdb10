"""A progress bar on a terminal is cleared before anything else is printed: no `...greedy 25.4^Cabluxx tournament:
interrupted` on one line, and no leftover characters (`0-25-00`) when a shorter line is drawn over a longer one."""

from __future__ import annotations

import io

from referee.terminal import StatusLine
from referee.tournament.progress import Progress


class Terminal(io.StringIO):
    """What a terminal shows: \r goes back to the start of the line, and characters overwrite what is there."""

    def isatty(self) -> bool:
        return True

    def screen(self) -> list[str]:
        lines, col = [""], 0
        for ch in self.getvalue():
            if ch == "\r":
                col = 0
            elif ch == "\n":
                lines.append("")
                col = 0
            else:
                line = lines[-1]
                lines[-1] = line[:col] + ch + line[col + 1 :]
                col += 1
        return [line.rstrip() for line in lines]  # trailing blanks show as nothing


def test_a_shorter_line_covers_a_longer_one_and_clear_blanks_it() -> None:
    term = Terminal()
    bar = StatusLine(term)
    bar.draw("3/10 pairs  0-25-00  llr 1.23")
    bar.draw("4/10 pairs  1-2")
    assert term.screen()[-1] == "4/10 pairs  1-2"
    bar.clear()
    term.write("abluxx duel: interrupted\n")
    assert term.screen()[:-1] == ["abluxx duel: interrupted"]


def test_the_tournament_bar_is_cleared_before_the_next_output() -> None:
    term = Terminal()
    bar = Progress(20, stream=term)
    bar.update(5, [("greedy", 25.4)])
    assert "top: greedy 25.4" in term.screen()[-1]
    bar.clear()
    term.write("abluxx tournament: interrupted; resume with: ...\n")
    assert term.screen()[0] == "abluxx tournament: interrupted; resume with: ..."
