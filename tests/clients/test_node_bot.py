"""The Node bot (clients/node) as a real process, played over real sockets on both transports.

The driver in bot_driver.py runs engine games and asks the bot for its seats' decisions: Decide per decision, or
one Play stream per seat.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.engine import Options
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from tests.builds import node_packages

from .bot_driver import (
    BotProcess,
    StreamSeat,
    need,
    no_group_request,
    play_game,
    stops_with_a_stream_open,
    totals_against_random,
)

NODE_DIR = Path(__file__).resolve().parents[2] / "clients" / "node"


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> str:
    node = need("node", "the Node bot's tests")
    node_packages(tmp_path_factory, need("npm", "the Node bot's tests"))
    return node


def node_command(node: str) -> list[str]:
    return [node, str(NODE_DIR / "bot.js"), "--port", "0"]


@pytest.fixture(scope="module")
def bot(node: str) -> Iterator[BotProcess]:
    b = BotProcess(node_command(node))
    yield b
    b.stop()


GAMES = [
    # players, the Node bot's seats, seed, options
    (2, {0, 1}, 11, Options()),
    (3, {1}, 12, Options(draw_one=True)),
    (4, {0, 2}, 13, Options(end_on_empty_pile=True)),
]


def test_hello_names_the_bot_and_both_transports(bot: BotProcess) -> None:
    hello = bot.stub.Hello(bot_pb.HelloRequest(protocol_version=bot_pb.PROTOCOL_VERSION_1), timeout=10)
    assert hello.name == "node-largest"
    assert hello.version == "0.1.0"
    assert hello.author
    assert hello.protocol_version == bot_pb.PROTOCOL_VERSION_1
    assert sorted(hello.transports) == [bot_pb.TRANSPORT_UNARY, bot_pb.TRANSPORT_STREAM]


@pytest.mark.parametrize("transport", ["unary", "stream"])
@pytest.mark.parametrize(("players", "bot_seats", "seed", "options"), GAMES)
def test_bot_plays_whole_games(
    bot: BotProcess, transport: str, players: int, bot_seats: set[int], seed: int, options: Options
) -> None:
    state = play_game(bot, transport, players, bot_seats, seed, options)
    assert state.end_reason is not None
    assert bot.proc.poll() is None, f"the bot died: {bot.errors()}"


def test_bot_outscores_random_players(bot: BotProcess) -> None:
    """A sensible strategy: over seeded 2-player games against random play, the bot's total score is higher."""
    ours, theirs = totals_against_random(bot, range(100, 106))
    assert ours > theirs, (ours, theirs)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_bot_cleanly_with_a_stream_open(node: str, sig: signal.Signals) -> None:
    assert stops_with_a_stream_open(node_command(node), sig) == 0


@pytest.mark.parametrize("transport", ["unary", "stream"])
def test_a_strategy_bug_answers_no_action_and_its_error_in_words(bot: BotProcess, transport: str) -> None:
    """bot.proto DecisionReply.error: a play request whose only listed action is no group trips strategy.js, and the
    bot says so in the reply rather than guessing an index (the referee's fallback plays it, for one strike)."""
    req = no_group_request(f"g-bug-{transport}")
    if transport == "unary":
        reply = bot.stub.Decide(req, timeout=10)
    else:
        seat = StreamSeat(bot.stub)
        reply = seat.ask(req)
        seat.close()
    assert reply.seq == 7 and reply.WhichOneof("decision") is None
    assert reply.error.startswith("TypeError: ") and len(reply.error) <= 200, reply.error
    assert bot.proc.poll() is None
