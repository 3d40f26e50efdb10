"""The kit's local game judges a reply as the match runner does (referee.wire.reply_index): the same faults, in the
words the record would hold, so a bot that passes here passes the referee."""

from __future__ import annotations

import pytest
from abluxx_bot.local import ReplyError, reply_action

from referee.engine import deck_from_seed, new_game
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.wire import decision_request


def _judge(**decision: object) -> str:
    state = new_game(deck_from_seed(3), 2)
    request = decision_request(state, "g", 1, [])
    with pytest.raises(ReplyError) as caught:
        reply_action(state, request, bot_pb.DecisionReply(game_id="g", seq=1, **decision))  # type: ignore[arg-type]
    return str(caught.value)


def test_a_bots_error_text_is_cut_and_made_printable_as_in_the_record() -> None:
    # the very words tests/match/test_faults.py finds in the record of a real game with this reply
    said = _judge(error="KeyError: 7\nforged line " + "x" * 5000)
    assert said == "the bot raised KeyError: 7 forged line " + "x" * 176 + "…"


def test_bad_replies_are_named_in_the_runners_words() -> None:
    state = new_game(deck_from_seed(3), 2)
    n = len(state.legal)
    assert _judge(index=n + 3) == f"index {n + 3} is out of range: {n} legal actions"
    assert _judge(action=pb.Action(choice=pb.CHOICE_SKIP)).endswith("is not a legal action here")
    assert _judge(action=pb.Action(draw=pb.Draw())).startswith("the reply's action names no action: draw has no")
    assert _judge() == "the reply holds neither an index nor an action"
