"""The compliance check a submitted bot goes through (docs/service.md):

1. Hello: it answers in time, speaks protocol version 1 and offers a transport;
2. a validation game against built-in bots at the server's normal time control, which must end without a single
   fault by the bot. The game stops at the first fault, and the refusal names that decision.

A refusal at Hello is generic ("unreachable", "not an abluxxen bot", "Hello refused"): what the far end said goes
to the server's log only, so SubmitBot cannot be used to read another service's error texts or to tell a closed
port from an open one that speaks something else. A refusal in the validation game ("validation game ID: fault X at
decision N (KIND): DETAIL") names the fault's detail, the bot's own error text included: by then the far end has
answered Hello as an abluxxen bot, and the caller is the bot's author. The game's record stays in the data
folder's ``validation/``, with its owner beside it (``owner_of``) and, when refused, the reason (``refusals_of``):
the author and organisers may fetch it (GetGameRecord, ``visibility.private_to``; the site's author page lists the
refusals), since its deal was fresh and is never dealt again.

Faults the referee itself causes (FAULT_KIND_REFEREE) are not the bot's and do not refuse it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

import grpc

from referee.log import get_logger
from referee.match import ChannelPool, play_game
from referee.match.hello import HelloError, hello
from referee.match.runner import fault_name
from referee.match.spec import EntrantRef, GameSpec, TimeControl
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records.paths import record_in
from referee.records.private import private_folder, write_private
from referee.records.recordfile import RecordError
from referee.tasks import cancel_and_wait
from referee.tournament.deals import fresh_seed

from .settings import Settings


@dataclass
class Passed:
    hello: bot_pb.HelloReply
    game_id: str


def _time_words(tc: TimeControl, bank_left_ms: int) -> str:
    """A timeout's context: the time control the bot was held to, and its bank after the decision (an allowance
    such as "within 2191 ms" means little without them)."""
    empty = " (empty: every decision now has its free time and the grace only)" if bank_left_ms == 0 else ""
    return (
        f"; the time control: {tc.decision_ms} ms free a decision, a {tc.bank_ms} ms bank a game that a slower "
        f"decision draws on, {tc.grace_ms} ms transport grace; the bank left: {bank_left_ms} ms{empty}"
    )


def _refuse(check: ref_pb.ComplianceCheck, reason: str, **more) -> ref_pb.Refusal:
    return ref_pb.Refusal(check=check, reason=reason, **more)


UNREACHABLE = "unreachable"
NOT_A_BOT = "not an abluxxen bot"
HELLO_REFUSED = "Hello refused"


def _hello_failure(code: grpc.StatusCode) -> str:
    """The generic reason for a Hello that ended with ``code``."""
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return UNREACHABLE  # no gRPC conversation: nothing listens, or something that does not speak it
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return NOT_A_BOT
    return HELLO_REFUSED


async def check_hello(address: str) -> bot_pb.HelloReply | ref_pb.Refusal:
    """The match's Hello; a refusal in generic words when it fails (the far end's own words go to the log)."""
    try:
        return await hello(address)
    except HelloError as e:
        if e.code is None:  # a reply, but not a bot's: the reason is the referee's own words
            return _refuse(ref_pb.COMPLIANCE_CHECK_HELLO, f"{NOT_A_BOT}: {e.why}")
        get_logger(service="referee").info("Hello failed", address=address, error=e.why)
        return _refuse(ref_pb.COMPLIANCE_CHECK_HELLO, _hello_failure(e.code))


VALIDATION_PREFIX = "validate-"  # every validation game's id starts so
_OWNER = ".owner"  # beside a validation game's record: the submitting author's name


_REFUSAL = ".refusal"  # beside a refused bot's validation game: the bot's name and why it was refused (JSON)


@dataclass(frozen=True)
class Refused:
    """A submission refused in its validation game: shown to its author (and organisers) on the site."""

    game_id: str
    bot: str
    reason: str
    at: float
    seq: int = 0  # the decision that faulted: the viewer's step (0: not known)


def refusals_of(folder: Path, owner: str) -> list[Refused]:
    """The submissions of ``owner`` refused in their validation game, the latest first."""
    out = []
    for path in folder.glob(f"{VALIDATION_PREFIX}*{_REFUSAL}") if folder.is_dir() else ():
        game_id = path.name.removesuffix(_REFUSAL)
        if owner_of(folder, game_id) != owner:
            continue
        try:
            said = json.loads(path.read_text(encoding="utf-8"))
            seq = said.get("seq", 0)
            at = path.stat().st_mtime
            out.append(Refused(game_id, str(said["bot"]), str(said["reason"]), at, seq if isinstance(seq, int) else 0))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(out, key=lambda r: -r.at)


def owner_of(folder: Path, game_id: str) -> str | None:
    """The author who submitted the bot of the validation game ``game_id`` in ``folder``, or None (no such game,
    nor an id any game could have, such as one with a slash: NotFound, not DataLoss, for a caller's bad id)."""
    try:
        return record_in(folder, game_id).with_suffix(_OWNER).read_text(encoding="utf-8").strip() or None
    except (OSError, ValueError, RecordError):
        return None


async def check_bot(
    name: str, address: str, settings: Settings, folder: Path, owner: str = ""
) -> Passed | ref_pb.Refusal:
    """Run both checks on the bot at ``address``; the validation game's record goes to ``folder``, and its owner
    beside it."""
    hello = await check_hello(address)
    if isinstance(hello, ref_pb.Refusal):
        return hello
    game_id = f"{VALIDATION_PREFIX}{name}-{secrets.token_hex(4)}"
    write_private(record_in(folder, game_id).with_suffix(_OWNER), owner + "\n")
    opponents = tuple(EntrantRef(name=f"{p}-{i + 1}", policy=p) for i, p in enumerate(settings.validation_opponents))
    spec = GameSpec(
        game_id=game_id,
        seed=fresh_seed(),  # a fixed validation deal would be known to every bot after its first submission
        entrants=(EntrantRef(name=name, address=address), *opponents),
        time_control=settings.time_control,
        max_strikes=1,
    )
    first_fault: list[rec_pb.DecisionRecord] = []
    faulted = asyncio.Event()

    def on_decision(raw: bytes) -> None:
        d = rec_pb.DecisionRecord.FromString(raw)
        if (
            d.seat == 0
            and d.fault not in (rec_pb.FAULT_KIND_UNSPECIFIED, rec_pb.FAULT_KIND_REFEREE)
            and not first_fault
        ):
            first_fault.append(d)
            faulted.set()

    private_folder(folder)
    async with ChannelPool() as pool:
        game = asyncio.create_task(
            play_game(spec, pool=pool, record_path=record_in(folder, game_id), on_decision=on_decision)
        )
        fault_seen = asyncio.create_task(faulted.wait())
        try:
            await asyncio.wait({game, fault_seen}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (game, fault_seen):
                with contextlib.suppress(Exception):  # abandoned: how it ended does not matter; a cancel of ours does
                    await cancel_and_wait(t)
    if first_fault:
        d = first_fault[0]
        kind = pb.DecisionKind.Name(d.kind).removeprefix("DECISION_KIND_").lower()
        get_logger(service="referee").info(
            "validation game fault", bot=name, game_id=game_id, seq=d.seq, fault=fault_name(d.fault),
            detail=d.fault_detail,
        )  # fmt: skip
        detail = f": {d.fault_detail}" if d.fault_detail else ""
        if d.fault == rec_pb.FAULT_KIND_TIMEOUT:
            detail += _time_words(settings.time_control, d.bank_left_ms)
        reason = f"validation game {game_id}: fault {fault_name(d.fault)} at decision {d.seq} ({kind}){detail}"
        write_private(
            record_in(folder, game_id).with_suffix(_REFUSAL), json.dumps({"bot": name, "reason": reason, "seq": d.seq})
        )
        return _refuse(
            ref_pb.COMPLIANCE_CHECK_VALIDATION_GAME,
            reason,
            game_id=game_id,
            seq=d.seq,
            kind=d.kind,
            fault=d.fault,
        )
    game.result()  # a referee failure in the game raises here
    return Passed(hello, game_id)
