"""Play a game in-process against ``BotSession``s (``play_local``): for testing a bot locally and for the bots table.

This builds exactly the messages a referee sends (``referee.wire.decision_request``) and judges replies as the
match runner does (``referee.wire.reply_index``), so a bot that plays here plays the same over gRPC. It is not the
match runner (``referee.match.play_game``): no clocks, no faults, no records; a bad reply raises ``ReplyError``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from referee.engine import (
    RULES_VERSION,
    Action,
    Options,
    State,
    apply,
    deck_from_seed,
    event_for,
    new_game,
    placings,
    scores,
)
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.records import commitment
from referee.wire import ReplyError, decision_request, end_reason_pb, event_pb, options_pb, reply_index


def game_start(
    game_id: str,
    seat: int,
    names: list[str],
    deck: tuple[int, ...],
    salt: bytes,
    options: Options | None = None,
    start_seat: int = 0,
    decision_ms: int = 0,
    bank_ms: int = 0,
) -> bot_pb.GameStart:
    return bot_pb.GameStart(
        game_id=game_id,
        seat=seat,
        players=[pb.Player(seat=i, name=n) for i, n in enumerate(names)],
        options=options_pb(options or Options()),
        time_control=pb.TimeControl(decision_ms=decision_ms, bank_ms=bank_ms),
        start_seat=start_seat,
        rules_version=RULES_VERSION,
        deck_commitment=commitment(salt, deck),
    )


def reply_action(state: State, request: bot_pb.DecisionRequest, reply: bot_pb.DecisionReply) -> Action:
    """The legal action ``reply`` names for ``request`` (asked in ``state``), or ReplyError saying what is wrong:
    the match runner's own judgement of a reply (``referee.wire.reply_index``), and the request's game and seq."""
    if reply.seq != request.seq or reply.game_id != request.game_id:
        raise ReplyError(
            f"reply is for game {reply.game_id!r} seq {reply.seq}, the request was {request.game_id!r} "
            f"seq {request.seq}"
        )
    return state.legal[reply_index(reply, state.legal)]


@dataclass
class LocalGame:
    state: State  # the final state
    scores: tuple[int, ...]
    places: tuple[int, ...]
    decisions: int


def play_local(
    seat_sessions: list,
    seed: int,
    game_id: str = "local",
    options: Options | None = None,
    start_seat: int = 0,
    names: list[str] | None = None,
    on_request: Callable[[State, bot_pb.DecisionRequest], None] | None = None,
) -> LocalGame:
    """Play one game with the deal ``deck_from_seed(seed)``; ``seat_sessions[i]`` is a ``BotSession`` for seat i.

    ``on_request(state, request)`` sees every request before it is answered (tests check views with it).
    """
    n = len(seat_sessions)
    deck = deck_from_seed(seed)
    salt = hashlib.sha256(f"salt:{game_id}:{seed}".encode()).digest()[:16]
    names = names or [getattr(s.bot, "name", f"seat{i}") for i, s in enumerate(seat_sessions)]
    for i, s in enumerate(seat_sessions):
        s.start(game_start(game_id, i, names, deck, salt, options, start_seat))
    state = new_game(deck, n, options, start_seat)
    pending: list[list] = [[] for _ in range(n)]
    seq = 0
    while not state.over:
        seat = state.seat
        seq += 1
        req = decision_request(state, game_id, seq, pending[seat])
        pending[seat] = []
        if on_request is not None:
            on_request(state, req)
        reply = seat_sessions[seat].answer(req)
        state, events = apply(state, reply_action(state, req, reply))
        for p in pending:
            p.extend(events)
    final = scores(state)
    places = placings(final, [state.hand_size(i) for i in range(n)])
    for i, s in enumerate(seat_sessions):
        s.game_over(
            bot_pb.GameOverNotice(
                game_id=game_id,
                seat=i,
                reason=end_reason_pb(state),
                scores=final,
                places=places,
                events=[event_pb(event_for(e, i)) for e in pending[i]],
                deck=deck,
                salt=salt,
            )
        )
    return LocalGame(state, final, places, seq)
