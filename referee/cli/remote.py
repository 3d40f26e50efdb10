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
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from referee.errors import BadInput, Unauthenticated
from referee.netaddr import dial_problem
from referee.terminal import say

from .args import add_order_arg, add_table_formats, add_tournament_arg, add_versions_arg

if TYPE_CHECKING:
    from .args import Commands
from .client import call, connection_args, game_line, handled, state_name, tournament_id, tournament_line
from .remote_reads import entrants, games, health_words, record, standings, standings_of, tournaments, watch_game


def register(sub: Commands) -> None:
    def command(
        where: Commands, name: str, fn: Callable[[argparse.Namespace], int], text: str
    ) -> argparse.ArgumentParser:
        p = where.add_parser(name, help=text)
        connection_args(p)
        p.set_defaults(func=fn)
        return p

    p = command(sub, "submit", submit, "submit a bot to a referee service (it must pass Hello and a validation game)")
    p.add_argument("name", help="the bot's name on the server; the same name again submits a new version")
    p.add_argument("address", nargs="?", default="", help="HOST:PORT where the bot serves, reachable from the referee "
                   "(or --upload its files)")  # fmt: skip
    p.add_argument("--upload", metavar="DIR|ARCHIVE", help="upload the bot's files (a folder, or a tar or zip "
                   "archive): the server runs it in its sandbox (docs/sandbox.md)")  # fmt: skip
    # dest: not "command", which names the subcommand in every error line (cli/__init__.py)
    p.add_argument("--command", dest="bot_command", default="", help="with --upload: the command that starts the "
                   'bot, e.g. "python3 bot.py"')  # fmt: skip
    p.add_argument("--owner", default="", help="the owning author (default: the token's author)")
    p.add_argument("--force", action="store_true", help="a new version even if the bot is unchanged (same address, "
                   "same Hello version)")  # fmt: skip
    p.add_argument("--games-at-once", type=int, default=0, metavar="N",
                   help="games at once in a ladder (default: the ladder's; at most its cap and 64)")  # fmt: skip

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
    add_versions_arg(p)
    add_table_formats(p)
    p = command(rsub, "entrants", entrants, "the bots submitted to the server: each bot's latest version")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    add_versions_arg(p)
    p = command(rsub, "retire", retire, "retire a bot (its owner, or an organiser): it plays no new tournament")
    p.add_argument("name", help="the bot's name on the server")
    p = command(rsub, "games", games, "finished games on the server, the latest first")
    add_order_arg(p)
    p.add_argument("id", nargs="?", default="", help="a tournament's id or name (default: every tournament)")
    p.add_argument("--entrant", default="", help="only games this entrant played")
    p.add_argument("--fault", default="", help="'any', or a fault kind (timeout, invalid, ...)")
    p.add_argument("--json", action="store_true", help="print JSON lines (the schema of `abluxx games --json`)")
    p = command(rsub, "record", record, "fetch a game's record into a file, to replay, view or verify it locally")
    p.add_argument("game_id", help="the game's id (abluxx remote games lists them)")
    p.add_argument("-o", "--output", type=Path, help="the file to write (default: GAME_ID.abluxx here)")
    p = command(rsub, "watch-game", watch_game, "follow one game live as a spectator sees it, as text")
    p.add_argument("game_id", help="the game's id (abluxx remote tournament watch names each as it starts)")


# -- commands --------------------------------------------------------------------------------------------------


def _upload(args: argparse.Namespace) -> bytes | None:
    """The bytes of ``--upload`` (a folder is packed as a .tar.gz, its links kept as links), or None."""
    if args.upload is None:
        if args.bot_command:
            raise BadInput("--command is for --upload: a bot at an address is already running")
        return None
    if args.address:
        raise BadInput("give the bot's address or --upload its files, not both")
    if not args.bot_command.strip():
        raise BadInput('--upload needs --command, the command that starts the bot, e.g. --command "python3 bot.py"')
    path = Path(args.upload)
    if path.is_dir():
        import io
        import tarfile

        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for child in sorted(path.iterdir()):
                tar.add(child, arcname=child.name)
        return buf.getvalue()
    try:
        return path.read_bytes()
    except OSError as e:
        raise BadInput(f"--upload {args.upload}: {e.strerror or e}") from None


@handled
def submit(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    upload = _upload(args)
    if upload is None and (problem := dial_problem(args.address, unix=True)):
        raise BadInput(problem)
    if not args.token:  # the server refuses a submission without one (docs/service.md): say so before anything
        raise Unauthenticated("submitting a bot needs a token: --token T or $ABLUXX_TOKEN (the server's operator "
                              "gives authors theirs)")  # fmt: skip
    # The token and the server, checked by a read that changes nothing (a read checks any token it is given):
    # a refused token or a wrong --server is said before the line that promises a validation game.
    call(args, "ListEntrants", ref_pb.ListEntrantsRequest(page_size=1))
    where = f"from {args.upload}" if upload is not None else f"at {args.address}"
    say(f"submitting {args.name} {where}: checking Hello and playing a validation game...", file=sys.stderr)
    request = ref_pb.SubmitBotRequest(name=args.name, address=args.address, owner=args.owner, force=args.force,
                                      games_at_once=args.games_at_once, upload=upload if upload is not None else b"",
                                      command=args.bot_command)  # fmt: skip
    out = call(args, "SubmitBot", request)
    if out.output:
        say(f"the bot's output while it was checked:\n{out.output}", file=sys.stderr)
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


_NOT_REMOTE = {
    "command": "a server does not start bots; run the bot, then submit it or give its address",
    "owner": "a submitted bot's owner is its author; give its name as bot",
    "fresh_process": "a server starts no bots, so it has none to start afresh",
    "restart": "a server starts no bots, so it has none to restart",
    "max_restarts": "a server starts no bots, so it has none to restart",
}


@handled
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
    t = call(args, "CreateTournament", ref_pb.CreateTournamentRequest(config=config))
    if "ladder" in data:  # its games are chosen as it runs: say who it has, not a schedule it does not have
        budget = f"a budget of {t.budget} games" if t.budget else "no budget (it runs until stopped)"
        say(f"created ladder {t.tournament_id}: {budget}; entrants: {', '.join(t.entrants) or 'none yet'}")
    else:
        say(f"created {t.tournament_id}: {t.games} games between {', '.join(t.entrants)}")
    if args.start:
        t = call(args, "StartTournament", ref_pb.StartTournamentRequest(tournament_id=t.tournament_id))
        say(tournament_line(t))
    else:
        say(f"start it with: abluxx remote tournament start {t.tournament_id}")
    return 0


def _on_tournament(method: str) -> Callable[[argparse.Namespace], int]:
    """The command that calls ``method`` (StartTournament, ...) on the tournament ``args.id`` names, and says how
    the tournament stands."""

    def command(args: argparse.Namespace) -> int:
        from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

        request = getattr(ref_pb, f"{method}Request")(tournament_id=tournament_id(args, args.id))
        say(tournament_line(call(args, method, request)))
        return 0

    command.__name__ = method
    return handled(command)


start = _on_tournament("StartTournament")
cancel = _on_tournament("CancelTournament")
pause = _on_tournament("PauseTournament")
stop = _on_tournament("StopTournament")
show = _on_tournament("GetTournament")


@handled
def watch(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    last = None
    state = ""
    tid = tournament_id(args, args.id)
    for ev in call(args, "WatchTournament", ref_pb.WatchTournamentRequest(tournament_id=tid), stream=True):
        which = ev.WhichOneof("event")
        if which == "tournament":
            if state_name(ev.tournament) != state:
                state = state_name(ev.tournament)
                say(tournament_line(ev.tournament), flush=True)
        elif which == "started":
            say(f"started   {ev.started.game_id}  {' vs '.join(ev.started.entrants)}", flush=True)
        elif which == "finished":
            say(f"finished  {game_line(ev.finished.game)}", flush=True)
        elif which == "standings":
            last = ev.standings
        elif which == "health":
            say(f"health    {ev.health.entrant}: {health_words(ev.health.health)}", flush=True)
    if last is not None:
        say()
        say(standings_of(last).table())
    if state != "finished":
        say(f"the stream ended with the tournament {state or 'unknown'}", file=sys.stderr)
        return 1
    return 0


@handled
def retire(args: argparse.Namespace) -> int:
    from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb

    e = call(args, "RetireEntrant", ref_pb.RetireEntrantRequest(name=args.name))
    state = ref_pb.EntrantState.Name(e.state).removeprefix("ENTRANT_STATE_").lower()
    say(f"{e.entrant_id}: {state}")
    return 0
