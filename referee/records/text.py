"""A record told in words, turn by turn, as everyone, one seat, or a spectator saw it (``abluxx replay``).

A seat's view shows only its own hand and hides the cards other seats drew from the pile (``event_for``); the
public view shows no hand at all. A fault's detail can describe a hand, so only its own seat (or the full view)
sees it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from referee.engine import Abluxxed, GameOver, State, TurnStarted, card_name, cards_of, event_for, scores
from referee.engine.words import END_WORDS, say_event
from referee.proto.abluxxen.v1 import record_pb2 as rpb
from referee.wire import END_FROM_PB, options_from_pb

from .build import FAULT_NAME, final_places
from .verify import VerifyError, check_footer, replay, start_state

# Events that follow from an action rather than carry it out.
_CONSEQUENCES = (Abluxxed, TurnStarted, GameOver)


def _cards(counts: Sequence[int]) -> str:
    return " ".join(card_name(c) for c in cards_of(counts)) or "(empty)"


def seat_names(h: rpb.RecordHeader) -> list[str]:
    """What to call each seat: the entrants' names when they tell the seats apart, else "seat N"."""
    names = [p.name for p in h.players]
    if all(names) and len(set(names)) == len(names):
        return names
    return [f"seat {i}" for i in range(len(h.players))]


def seat_of(h: rpb.RecordHeader, which: str) -> int:
    """The seat ``which`` names: its number, or the name of the entrant in it (a ladder seats a bot differently
    every game, so its name is what its author knows; ``cppbot`` finds a ladder's ``cppbot.v5``). ValueError,
    naming the seats, when it names none or two."""
    players = [f"{i} ({p.name})" if p.name else str(i) for i, p in enumerate(h.players)]
    if which.strip().isdigit():
        return int(which)
    seats = [i for i, p in enumerate(h.players) if p.name == which]
    if not seats:  # a ladder's entrant is NAME.vN: its name alone will do while one seat has it
        seats = [i for i, p in enumerate(h.players) if re.sub(r"\.v\d+$", "", p.name) == which]
    if len(seats) == 1:
        return seats[0]
    why = "names two seats" if seats else "is no seat's number or entrant"
    raise ValueError(f"--seat {which!r} {why}; the seats are {', '.join(players)}")


def replay_turns(record: rpb.GameRecord, seat: int | None = None, public: bool = False) -> Iterator[list[str]]:
    """The game as lines of text, one list per turn (the first also holds the game's header and deal).

    ``seat``: that seat's view; ``public``: a spectator's; neither: everything. The game is re-run with the
    engine as it is told, so a record that does not verify raises VerifyError after the turns before the mismatch.
    """
    h = record.header
    n = len(h.players)
    if seat is not None and not 0 <= seat < n:
        raise ValueError(f"seat {seat} is not a seat of this {n}-player game (0 to {n - 1})")
    if seat is not None and public:
        raise ValueError("choose one view: a seat or the public view")
    viewer = None if public else seat  # event_for's reader
    full = seat is None and not public
    names = seat_names(h)

    def sees_hand(s: int) -> bool:
        return full or s == seat

    state = start_state(h)
    chunk = _opening(h, names, seat, public)
    chunk += [f"{names[s]} hand: {_cards(state.hands[s])}" for s in range(n) if sees_hand(s)]
    chunk.append(f"market: {_cards(state.market)}")
    chunk.append(say_event(TurnStarted(state.active, state.turn), names))

    retired: frozenset[int] = frozenset()
    try:
        for step in replay(record):
            d = step.decision
            who = names[d.seat]
            fallback_mark = ""
            if d.fault == rpb.FAULT_KIND_RETIRED:
                fallback_mark = " [fallback]"
            elif d.fault:
                detail = f": {d.fault_detail}" if d.fault_detail and sees_hand(d.seat) else ""
                chunk.append(f"  ! {who} fault, {FAULT_NAME.get(d.fault, str(d.fault))}{detail}; the fallback chose")
            after: list[str] = []
            if sees_hand(d.seat) and step.after.hands[d.seat] != step.before.hands[d.seat]:
                after.append(f"  {who} hand: {_cards(step.after.hands[d.seat])}")
            if d.retired:
                after.append(f"  ! {who} retires: the fallback plays the seat to the end, and it places last")
            for e in step.events:
                if type(e) in _CONSEQUENCES:  # the decider's hand is shown before what its action led to
                    chunk += after
                    after = []
                if type(e) in (TurnStarted, GameOver):
                    if type(e) is TurnStarted:
                        yield chunk
                        chunk = []
                    chunk.append(say_event(e, names))
                else:
                    shown = e if full else event_for(e, viewer)
                    chunk.append("  " + say_event(shown, names) + fallback_mark)
                    fallback_mark = ""
            chunk += after
            state, retired = step.after, step.retired
    except VerifyError:
        yield chunk
        raise
    if record.complete:
        try:
            check_footer(record, state, retired)
        except VerifyError:
            yield chunk
            raise
        retired = frozenset(record.footer.retired)
        chunk.append(f"result: {END_WORDS[END_FROM_PB[record.footer.reason]]}")
    else:
        chunk.append(f"the record stops after {len(record.decisions)} decisions: the game did not finish")
        chunk.append("standing so far:")
    yield chunk + _standing(state, retired, names)


def _opening(h: rpb.RecordHeader, names: list[str], seat: int | None, public: bool) -> list[str]:
    """The lines before the deal: the game, its rules and options, the seats, and whose view this is."""
    opts = options_from_pb(h.options)
    options = [name for name, on in (("draw_one", opts.draw_one), ("end_on_empty_pile", opts.end_on_empty_pile)) if on]
    lines = [f"game {h.game_id}" + (f" in tournament {h.tournament_id}" if h.tournament_id else "")]
    lines.append(f"rules {h.rules_version}; options: {', '.join(options) or 'none'}")
    for p in h.players:
        about = ", ".join(x for x in (p.version and f"version {p.version}", p.transport) if x)
        at = f" at {p.address}" if p.address else ""  # a bot's address, as a detail beside its name
        lines.append(f"seat {p.seat}: {p.name or '(no name)'}{at}" + (f" ({about})" if about else ""))
    if seat is not None:
        lines.append(f"view: {names[seat]} (other hands and their draws from the pile hidden)")
    elif public:
        lines.append("view: public (no hands; cards drawn from the pile hidden)")
    else:
        lines.append("view: everything")
    lines.append(f"deck commitment: {h.commitment.hex() or '(none)'}")
    return lines


def _standing(state: State, retired: frozenset[int], names: list[str]) -> list[str]:
    """The places, scores and hand sizes (R15), best first; retired seats last and marked."""
    final = scores(state)
    places = final_places(state, retired)
    lines = []
    for s in sorted(range(state.players), key=lambda s: (places[s], s)):
        line = f"  place {places[s]}: {names[s]}  score {final[s]:+d}  hand {state.hand_size(s)}"
        lines.append(line + ("  (retired)" if s in retired else ""))
    return lines
