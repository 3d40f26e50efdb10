"""The compliance check a submitted bot goes through (docs/service.md):

1. Hello: it answers in time, speaks protocol version 1 and offers a transport;
2. a validation game against built-in bots at the server's normal time control, which must end without a single
   fault by the bot. The game stops at the first fault, and the refusal names that decision.

A refusal's reason is generic ("unreachable", "not an abluxxen bot", "Hello refused", "validation game: fault X at
decision N"): what the far end said goes to the server's log only, so SubmitBot cannot be used to read another
service's error texts or to tell a closed port from an open one that speaks something else.

Faults the referee itself causes (FAULT_KIND_REFEREE) are not the bot's and do not refuse it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from dataclasses import dataclass
from pathlib import Path

import grpc

from referee.log import get_logger
from referee.match import ChannelPool, play_game
from referee.match.hello import HelloError, hello
from referee.match.runner import fault_name
from referee.match.spec import EntrantRef, GameSpec
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records.paths import record_in
from referee.tournament.deals import fresh_seed

from .settings import Settings


@dataclass
class Passed:
    hello: bot_pb.HelloReply
    game_id: str


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


async def check_bot(name: str, address: str, settings: Settings, folder: Path) -> Passed | ref_pb.Refusal:
    """Run both checks on the bot at ``address``; the validation game's record goes to ``folder``."""
    hello = await check_hello(address)
    if isinstance(hello, ref_pb.Refusal):
        return hello
    game_id = f"validate-{name}-{secrets.token_hex(4)}"
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

    folder.mkdir(parents=True, exist_ok=True)
    async with ChannelPool() as pool:
        game = asyncio.create_task(
            play_game(spec, pool=pool, record_path=record_in(folder, game_id), on_decision=on_decision)
        )
        fault_seen = asyncio.create_task(faulted.wait())
        try:
            await asyncio.wait({game, fault_seen}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (game, fault_seen):
                if not t.done():
                    t.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await t
    if first_fault:
        d = first_fault[0]
        kind = pb.DecisionKind.Name(d.kind).removeprefix("DECISION_KIND_").lower()
        get_logger(service="referee").info(
            "validation game fault", bot=name, game_id=game_id, seq=d.seq, fault=fault_name(d.fault),
            detail=d.fault_detail,
        )  # fmt: skip
        return _refuse(
            ref_pb.COMPLIANCE_CHECK_VALIDATION_GAME,
            f"validation game {game_id}: fault {fault_name(d.fault)} at decision {d.seq} ({kind})",
            game_id=game_id,
            seq=d.seq,
            kind=d.kind,
            fault=d.fault,
        )
    game.result()  # a referee failure in the game raises here
    return Passed(hello, game_id)
