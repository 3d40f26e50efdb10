"""Clients of the Referee service (docs/service.md): ``abluxx submit``, ``abluxx remote tournament
create|start|watch|cancel|pause|resume|stop|show``, ``abluxx remote tournaments``, ``abluxx remote standings``,
``abluxx remote entrants``, ``abluxx remote retire``, ``abluxx remote games``, ``abluxx remote record`` and
``abluxx remote watch-game``. A tournament is named by its id, or by its name when one tournament has it, or not
at all for the latest (as the local commands do). ``--json`` output is the local commands' snake_case schema
(docs/cli.md).

Every command takes ``--server HOST:PORT`` (or ABLUXX_SERVER) and ``--token`` (or ABLUXX_TOKEN); ``--tls-ca FILE``
trusts a certificate for a TLS server (``--tls`` uses the system's roots).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from referee.errors import BadInput, RefereeError, from_status
from referee.netaddr import dial_problem
from referee.terminal import say

from .args import add_table_formats, add_tournament_arg

if TYPE_CHECKING:
    from .args import Commands

DEFAULT_SERVER = "127.0.0.1:50050"


def _conn(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--server",
        default=os.environ.get("ABLUXX_SERVER", DEFAULT_SERVER),
        help=f"the referee's HOST:PORT (default $ABLUXX_SERVER or {DEFAULT_SERVER})",
    )
    p.add_argument("--token", default=os.environ.get("ABLUXX_TOKEN"), help="bearer token (default $ABLUXX_TOKEN)")
    p.add_argument("--tls", action="store_true", help="connect with TLS, trusting the system's roots")
    p.add_argument("--tls-ca", type=Path, help="connect with TLS, trusting this PEM certificate")
    p.add_argument("--tls-name", help="the name the server's certificate is for, when not the --server host")
    p.add_argument(
        "--insecure",
        action="store_true",
        help="send the token in plaintext to a server that is not on loopback (something else must protect it)",
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for an answer (default 600)")


def register(sub: Commands) -> None:
    def command(
        where: Commands, name: str, fn: Callable[[argparse.Namespace], int], text: str
    ) -> argparse.ArgumentParser:
        p = where.add_parser(name, help=text)
        _conn(p)
        p.set_defaults(func=fn)
        return p

    p = command(sub, "submit", submit, "submit a bot to a referee service (it must pass Hello and a validation game)")
    p.add_argument("name", help="the bot's name on the server; the same name again submits a new version")
    p.add_argument("address", help="HOST:PORT where the bot serves, reachable from the referee")
    p.add_argument("--owner", default="", help="the owning author (default: the token's author)")

    r = sub.add_parser("remote", help="drive a referee service: tournaments, standings, entrants, games")
    rsub = r.add_subparsers(dest="remote_command", metavar="WHAT", required=True)
    t = rsub.add_parser("tournament", help="create, start, watch, cancel or show a tournament on the server")
    tsub = t.add_subparsers(dest="tournament_action", metavar="ACTION", required=True)
    p = command(tsub, "create", create, "create a tournament from a TOML file (entrants may name submitted bots)")
    p.add_argument(
        "config", type=Path, help="TOML: the fields of docs/tournaments.md; entrants: bot, address or policy"
    )
    p.add_argument("--start", action="store_true", help="start it at once")
    for action, text, fn, latest in (
        ("start", "start a created tournament", start, False),
        ("watch", "follow a tournament's games and standings until it ends", watch, True),
        ("cancel", "cancel a tournament", cancel, False),
        ("pause", "pause a ladder: no new games until resume", pause, False),
        ("resume", "resume a paused ladder", start, False),
        ("stop", "stop a ladder: no more rounds; the chosen ones finish, then it is finished", stop, False),
        ("show", "a tournament's state and progress", show, True),
    ):
        add_tournament_arg(command(tsub, action, fn, text), latest)
    p = command(
        rsub, "tournaments", tournaments, "the server's tournaments, oldest first: ids, names, states, progress"
    )
    p.add_argument("--json", action="store_true", help="print JSON lines")
    p = command(rsub, "standings", standings, "a tournament's standings from the server")
    add_tournament_arg(p)
    p.add_argument("--all-versions", action="store_true", help="a ladder: every version of each bot (default: "
                   "each bot's latest)")  # fmt: skip
    add_table_formats(p)
    p = command(rsub, "entrants", entrants, "the bots submitted to the server")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    p = command(rsub, "retire", retire, "retire a bot (its owner, or an organiser): it plays no new tournament")
    p.add_argument("name", help="the bot's name on the server")
    p = command(rsub, "games", games, "finished games on the server")
    p.add_argument("id", nargs="?", default="", help="a tournament's id or name (default: every tournament)")
    p.add_argument("--entrant", default="", help="only games this entrant played")
    p.add_argument("--fault", default="", help="'any', or a fault kind (timeout, invalid, ...)")
    p.add_argument("--json", action="store_true", help="print JSON lines (the schema of `abluxx games --json`)")
    p = command(rsub, "record", record, "fetch a game's record into a file, to replay, view or verify it locally")
    p.add_argument("game_id", help="the game's id (abluxx remote games lists them)")
    p.add_argument("-o", "--output", type=Path, help="the file to write (default: GAME_ID.abluxx here)")
    p = command(rsub, "watch-game", watch_game, "follow one game live as a spectator sees it, as text")
    p.add_argument("game_id", help="the game's id (abluxx remote tournament watch names each as it starts)")


def _stub(args: argparse.Namespace):
    from referee.proto.abluxxen.v1 import referee_pb2_grpc as ref_grpc

    if problem := dial_problem(args.server, unix=True):  # gRPC would wrap a port past 65535 and dial another
        raise BadInput(f"--server: {problem}")
    options = [("grpc.ssl_target_name_override", args.tls_name)] if args.tls_name else []
    if args.tls or args.tls_ca:
        try:
            root = args.tls_ca.read_bytes() if args.tls_ca else None
        except OSError as e:
            raise BadInput(f"{args.tls_ca}: cannot read the file ({e.strerror})") from None
        channel = grpc.secure_channel(args.server, grpc.ssl_channel_credentials(root), options=options)
    else:
        from referee.service.addresses import is_loopback

        host = args.server.rpartition(":")[0] or args.server
        if args.token and not is_loopback(host) and not args.insecure:
            raise BadInput(
                f"refusing to send a token in plaintext to {args.server}, which is not a loopback address: use "
                "--tls or --tls-ca FILE, or --insecure if something else encrypts the traffic"
            )
        channel = grpc.insecure_channel(args.server)
    return ref_grpc.RefereeStub(channel)


def _meta(args: argparse.Namespace) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {args.token}")] if args.token else []


def _call(args: argparse.Namespace, method: str, request: Any, stream: bool = False) -> Any:
    try:
        fn = getattr(_stub(args), method)
        return fn(request, metadata=_meta(args), timeout=None if stream else args.timeout)
    except grpc.RpcError as e:
        raise _refused(e, f"{method}: ") from None


def _refused(e: grpc.RpcError, method: str = "") -> RefereeError:
    """A failed call as the error of its kind (``errors.from_status``), exiting as docs/cli.md says: 2 for
    INVALID_ARGUMENT (the request was wrong) and DATA_LOSS (a record the server cannot read), 1 for the others."""
    return from_status(e.code(), f"{method}{e.code().name}: {e.details()}")


def _pages(args: argparse.Namespace, method: str, request: Any, field: str) -> Iterator[Any]:
    """Every item of a paged List* call, page after page until the server says there is no next one."""
    while True:
        out = _call(args, method, request)
        yield from getattr(out, field)
        if not out.next_page_token:
            return
        request.page_token = out.next_page_token


def _run(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command whose stream, failing while it is read, ends as a failed call does."""

    @functools.wraps(fn)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except grpc.RpcError as e:  # raised while reading a stream
            raise _refused(e) from None

    return wrapped


# -- commands --------------------------------------------------------------------------------------------------


@_run
def submit(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    if problem := dial_problem(args.address, unix=True):
        raise BadInput(problem)
    say(f"submitting {args.name} at {args.address}: checking Hello and playing a validation game...", file=sys.stderr)
    out = _call(args, "SubmitBot", ref_pb.SubmitBotRequest(name=args.name, address=args.address, owner=args.owner))
    if out.HasField("refusal"):
        check = ref_pb.ComplianceCheck.Name(out.refusal.check).removeprefix("COMPLIANCE_CHECK_").lower()
        say(f"refused ({check} check): {out.refusal.reason}")
        return 1
    e = out.entrant
    say(
        f"accepted: {e.entrant_id} (owner {e.owner}, bot version {e.bot_version or '-'}, "
        f"validated by game {e.validation_game_id})"
    )
    return 0


def _state(t) -> str:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    return ref_pb.TournamentState.Name(t.state).removeprefix("TOURNAMENT_STATE_").lower()


def _say(t) -> str:
    return f"tournament {t.tournament_id}: {_state(t)}, {t.finished}/{t.games} games, {t.in_flight} in flight"


# The keys of a local tournament file that a server has no use for, and why.
_NOT_REMOTE = {
    "command": "a server does not start bots; run the bot, then submit it or give its address",
    "owner": "a submitted bot's owner is its author; give its name as bot",
    "fresh_process": "a server starts no bots, so it has none to start afresh",
}


@_run
def create(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
    from referee.service.convert import message_from

    try:
        data = tomllib.loads(args.config.read_text(encoding="utf-8"))
    except OSError as e:
        raise BadInput(f"{args.config}: cannot read the file ({e.strerror})") from None
    except tomllib.TOMLDecodeError as e:
        raise BadInput(f"{args.config}: not valid TOML ({e})") from None
    # the file as the API's message, key for key; the server checks the values (docs/service.md)
    data.setdefault("name", args.config.stem)
    config = message_from(data, ref_pb.TournamentConfig(), str(args.config), hints=_NOT_REMOTE)
    t = _call(args, "CreateTournament", ref_pb.CreateTournamentRequest(config=config))
    say(f"created {t.tournament_id}: {t.games} games between {', '.join(t.entrants)}")
    if args.start:
        t = _call(args, "StartTournament", ref_pb.StartTournamentRequest(tournament_id=t.tournament_id))
        say(_say(t))
    else:
        say(f"start it with: abluxx remote tournament start {t.tournament_id}")
    return 0


def _on_tournament(method: str) -> Callable[[argparse.Namespace], int]:
    """The command that calls ``method`` (StartTournament, ...) on the tournament ``args.id`` names, and says how
    the tournament stands."""

    def command(args: argparse.Namespace) -> int:
        from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

        request = getattr(ref_pb, f"{method}Request")(tournament_id=_tournament_id(args, args.id))
        say(_say(_call(args, method, request)))
        return 0

    command.__name__ = method
    return _run(command)


start = _on_tournament("StartTournament")
cancel = _on_tournament("CancelTournament")
pause = _on_tournament("PauseTournament")
stop = _on_tournament("StopTournament")
show = _on_tournament("GetTournament")


def _game_line(g) -> str:
    seats = "  ".join(
        f"{s.place}.{s.entrant} {s.score:+d}{'(retired)' if s.retired else ''}"
        for s in sorted(g.seats, key=lambda s: s.place)
    )
    return f"{g.game_id}  {seats}  [{g.end_reason}]"


@_run
def watch(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    last = None
    state = ""
    tid = _tournament_id(args, args.id)
    for ev in _call(args, "WatchTournament", ref_pb.WatchTournamentRequest(tournament_id=tid), stream=True):
        which = ev.WhichOneof("event")
        if which == "tournament":
            if _state(ev.tournament) != state:
                state = _state(ev.tournament)
                say(_say(ev.tournament), flush=True)
        elif which == "started":
            say(f"started   {ev.started.game_id}  {' vs '.join(ev.started.entrants)}", flush=True)
        elif which == "finished":
            say(f"finished  {_game_line(ev.finished.game)}", flush=True)
        elif which == "standings":
            last = ev.standings
    if last is not None:
        say()
        say(standings_of(last).table())
    if state != "finished":
        say(f"the stream ended with the tournament {state or 'unknown'}", file=sys.stderr)
        return 1
    return 0


def _tournament_id(args: argparse.Namespace, wanted: str | None) -> str:
    """The id of the tournament ``wanted`` names (an id, or a name one tournament has; None: the latest)."""
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    from .lookup import pick_tournament

    known = list(_pages(args, "ListTournaments", ref_pb.ListTournamentsRequest(), "tournaments"))
    return pick_tournament([(t.tournament_id, t.name) for t in known], wanted, f"on {args.server}")


def _message_json(message) -> dict:
    """A protobuf message as snake_case JSON, every field present (the schema the local commands print)."""
    from google.protobuf import json_format

    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


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


@_run
def tournaments(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    out = list(_pages(args, "ListTournaments", ref_pb.ListTournamentsRequest(), "tournaments"))
    for t in out:
        if args.json:
            d = _message_json(t)
            d["state"] = _state(t)
            say(json.dumps(d))
        else:
            say(f"{t.tournament_id:<32} {t.name:<20} {_state(t):<10} {t.finished}/{t.games} games  "
                  f"created {t.created_at}")  # fmt: skip
    if not args.json:
        say(f"{len(out)} tournaments" + (f"; the latest is {out[-1].tournament_id}" if out else ""))
    return 0


@_run
def standings(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
    from referee.tournament.standings import dumps

    tid = _tournament_id(args, args.id)
    request = ref_pb.GetStandingsRequest(tournament_id=tid, all_versions=args.all_versions)
    s = standings_of(_call(args, "GetStandings", request))
    say(dumps(s) if args.json else s.to_csv().rstrip("\n") if args.csv else s.table())
    return 0


@_run
def entrants(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    for e in _pages(args, "ListEntrants", ref_pb.ListEntrantsRequest(), "entrants"):
        state = ref_pb.EntrantState.Name(e.state).removeprefix("ENTRANT_STATE_").lower()
        if args.json:
            say(json.dumps({**_message_json(e), "state": state}))
        else:
            say(
                f"{e.entrant_id:<24} {state:<10} owner {e.owner:<12} {e.address:<22} "
                f"mu {e.mu:.2f} sigma {e.sigma:.2f} games {e.games}"
            )
    return 0


@_run
def retire(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    e = _call(args, "RetireEntrant", ref_pb.RetireEntrantRequest(name=args.name))
    state = ref_pb.EntrantState.Name(e.state).removeprefix("ENTRANT_STATE_").lower()
    say(f"{e.entrant_id}: {state}")
    return 0


@_run
def record(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
    from referee.records import record_bytes

    rec = _call(args, "GetGameRecord", ref_pb.GetGameRecordRequest(game_id=args.game_id))
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


@_run
def watch_game(args: argparse.Namespace) -> int:
    from referee.engine import TurnStarted
    from referee.engine.words import END_WORDS, say_event
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
    from referee.records import FAULT_NAME
    from referee.wire import END_FROM_PB, event_from_pb

    names: list[str] = []
    for ev in _call(args, "WatchGame", ref_pb.WatchGameRequest(game_id=args.game_id), stream=True):
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


@_run
def games(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    tid = _tournament_id(args, args.id) if args.id else ""
    request = ref_pb.ListGamesRequest(tournament_id=tid, entrant=args.entrant, fault=args.fault)
    shown = 0
    for g in _pages(args, "ListGames", request, "games"):
        shown += 1
        if args.json:  # the keys of the local `abluxx games --json`; the record is `abluxx remote record`'s to fetch
            seats = [{"entrant": x.entrant, "score": x.score, "place": x.place, "retired": x.retired,
                      "faults": dict(x.faults)} for x in g.seats]  # fmt: skip
            say(json.dumps({"slot": g.slot, "game_id": g.game_id, "table": g.table, "deal": g.deal,
                            "order": g.seat_order, "seats": seats, "end_reason": g.end_reason,
                            "decisions": g.decisions, "record": None}))  # fmt: skip
        else:
            say(_game_line(g))
    if not args.json:
        say(f"{shown} games")
    return 0
