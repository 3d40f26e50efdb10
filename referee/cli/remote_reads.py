"""The remote commands that read a Referee service: tournaments, standings, entrants, games, a record, a game
watched live."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from referee.errors import BadInput
from referee.terminal import say

if TYPE_CHECKING:
    pass
from .client import call, game_line, handled, message_json, pages, state_name, tournament_id

_CONVERTED = ("faults", "median_decision_ms", "separated_from_next")  # fields standings_of converts itself


def standings_of(s):
    """The service's standings as the local commands' Standings, so both print one schema (table, JSON, CSV).
    The API has no head to head yet: it is empty."""
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
    from referee.tournament.standings import Standing, Standings

    # the proto's Standing has the same fields, but the intervals (not in the API yet)
    names = [f.name for f in dataclasses.fields(Standing) if f.name in ref_pb.Standing.DESCRIPTOR.fields_by_name]
    rows = [
        Standing(**{k: getattr(r, k) for k in names if k not in _CONVERTED},
                 faults=dict(sorted(r.faults.items())),
                 median_decision_ms=None if r.median_decision_ms < 0 else r.median_decision_ms,  # -1: no decision
                 separated_from_next=r.separated_from_next if r.HasField("separated_from_next") else None)
        for r in s.rows
    ]  # fmt: skip
    return Standings(s.tournament_id, s.games, s.scheduled, rows, {})


@handled
def tournaments(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    out = list(pages(args, "ListTournaments", ref_pb.ListTournamentsRequest(), "tournaments"))
    for t in out:
        if args.json:
            d = message_json(t)
            d["state"] = state_name(t)
            say(json.dumps(d))
        else:
            say(f"{t.tournament_id:<32} {t.name:<20} {state_name(t):<10} {t.finished}/{t.games} games  "
                  f"created {t.created_at}")  # fmt: skip
    if not args.json:
        say(f"{len(out)} tournaments" + (f"; the latest is {out[-1].tournament_id}" if out else ""))
    return 0


@handled
def standings(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
    from referee.tournament.standings import dumps

    tid = tournament_id(args, args.id)
    request = ref_pb.GetStandingsRequest(tournament_id=tid, all_versions=args.all_versions)
    s = standings_of(call(args, "GetStandings", request))
    say(dumps(s) if args.json else s.to_csv().rstrip("\n") if args.csv else s.table())
    return 0


@handled
def entrants(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    for e in pages(args, "ListEntrants", ref_pb.ListEntrantsRequest(all_versions=args.all_versions), "entrants"):
        state = ref_pb.EntrantState.Name(e.state).removeprefix("ENTRANT_STATE_").lower()
        if args.json:
            say(json.dumps({**message_json(e), "state": state}))
        else:
            say(
                f"{e.entrant_id:<24} {'(' + (e.bot_version or '-') + ')':<12} {state:<10} owner {e.owner:<12} "
                f"{e.address:<22} mu {e.mu:.2f} sigma {e.sigma:.2f} games {e.games}  {health_words(e.health)}"
            )
    return 0


def health_words(h) -> str:
    """An entrant's health (an EntrantHealth message) in a few words: "up", or "down since ... (why), missed N"."""
    words = h.status or "up"
    if words != "up":
        words += f" since {h.since} ({h.reason})"
    return words + (f", missed {h.missed}" if h.missed else "")


@handled
def record(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
    from referee.records import record_bytes

    rec = call(args, "GetGameRecord", ref_pb.GetGameRecordRequest(game_id=args.game_id))
    out = args.output or Path(f"{rec.header.game_id or args.game_id}.abluxx")
    try:
        out.write_bytes(record_bytes(rec))
    except OSError as e:
        raise BadInput(f"{out}: cannot write the file ({e.strerror})") from None
    say(out)
    if rec.deal_withheld:
        say("deal not yet revealed: other games still play it, so the record holds the result and the commitment "
            "but no deck or decisions; fetch it again once they are over", file=sys.stderr)  # fmt: skip
    else:
        say(f"replay it with: abluxx replay {out}   (or abluxx view {out}, abluxx verify {out})", file=sys.stderr)
    return 0


@handled
def watch_game(args: argparse.Namespace) -> int:
    from referee.engine import TurnStarted
    from referee.engine.words import END_WORDS, say_event
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
    from referee.records import FAULT_NAME
    from referee.wire import END_FROM_PB, event_from_pb

    names: list[str] = []
    for ev in call(args, "WatchGame", ref_pb.WatchGameRequest(game_id=args.game_id), stream=True):
        which = ev.WhichOneof("event")
        if which == "opening":
            o = ev.opening
            names = [p.name or f"seat {p.seat}" for p in o.players]
            where = f" in tournament {o.tournament_id}" if o.tournament_id else ""
            behind = f" ({o.delay_ms} ms behind)" if o.delay_ms else ""
            say(f"game {o.game_id}{where}: {' vs '.join(names)}{behind}", flush=True)
            say(say_event(TurnStarted(o.start_seat, 1), names), flush=True)
        elif which == "decision":
            d = ev.decision
            if d.fault and d.fault in FAULT_NAME and FAULT_NAME[d.fault] != "retired":
                say(f"  ! {names[d.seat]} fault, {FAULT_NAME[d.fault]}; the fallback chose", flush=True)
            for e in d.events:
                say(("" if e.WhichOneof("event") == "turn_started" else "  ") + say_event(event_from_pb(e), names),
                      flush=True)  # fmt: skip
        elif which == "closing":
            c = ev.closing
            say(f"result: {END_WORDS[END_FROM_PB[c.reason]]}")
            for seat in sorted(range(len(c.scores)), key=lambda i: (c.places[i], i)):
                retired = "  (retired)" if seat in c.retired else ""
                say(f"  place {c.places[seat]}: {names[seat]}  score {c.scores[seat]:+d}{retired}")
    return 0


@handled
def games(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    tid = tournament_id(args, args.id) if args.id else ""
    request = ref_pb.ListGamesRequest(
        tournament_id=tid, entrant=args.entrant, fault=args.fault, oldest_first=args.oldest_first
    )
    shown = 0
    for g in pages(args, "ListGames", request, "games"):
        shown += 1
        if args.json:  # the keys of the local `abluxx games --json`; the record is `abluxx remote record`'s to fetch
            seats = [{"entrant": x.entrant, "score": x.score, "place": x.place, "retired": x.retired,
                      "faults": dict(x.faults)} for x in g.seats]  # fmt: skip
            say(json.dumps({"slot": g.slot, "game_id": g.game_id, "table": g.table, "deal": g.deal,
                            "order": g.seat_order, "seats": seats, "end_reason": g.end_reason,
                            "decisions": g.decisions, "record": None}))  # fmt: skip
        else:
            say(game_line(g))
    if not args.json:
        say(f"{shown} games")
    return 0
