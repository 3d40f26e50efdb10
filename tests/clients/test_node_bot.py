"""The Node bot (clients/node) as a real process, played over real sockets on both transports.

A small driver here runs engine games and asks the bot for its seats' decisions: Decide per decision, or one
Play stream per seat. (The match runner will take over this job; the driver stays small until then.)
"""

from __future__ import annotations

import hashlib
import os
import queue
import random
import select
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from referee.engine import (
    RULES_VERSION,
    Choice,
    Event,
    Group,
    Kind,
    Options,
    State,
    apply,
    deck_from_seed,
    new_game,
    placings,
    scores,
)
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import bot_pb2_grpc
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.wire import END_PB, decision_request, options_pb

NODE_DIR = Path(__file__).resolve().parents[2] / "clients" / "node"
MAX_DECISIONS = 5000  # far more than any game needs; a game still running then does not end


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"`{tool}` is not installed, and CI must run the Node bot's tests")
        pytest.skip(f"`{tool}` is not installed: the Node bot cannot run")
    return path


@pytest.fixture(scope="module")
def node() -> str:
    node = _need("node")
    npm = _need("npm")
    if not (NODE_DIR / "node_modules").is_dir():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300)
    return node


class NodeBot:
    """The bot as a subprocess on a free port of 127.0.0.1."""

    def __init__(self, node: str) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 -- read by errors() for as long as the bot lives
        self.proc = subprocess.Popen(
            [node, str(NODE_DIR / "bot.js"), "--port", "0"], stdout=subprocess.PIPE, stderr=self.stderr, text=True
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], 15)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("listening on "):
            self.proc.kill()
            raise AssertionError(f"the bot did not say where it listens: {line!r}; stderr: {self.errors()}")
        self.address = line.removeprefix("listening on ").strip()
        self.channel = grpc.insecure_channel(self.address)
        self.stub = bot_pb2_grpc.BotStub(self.channel)

    def errors(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        """Send ``sig``, with any calls still open; the bot's exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.channel.close()
            self.proc.stdout.close()


@pytest.fixture(scope="module")
def bot(node: str) -> Iterator[NodeBot]:
    b = NodeBot(node)
    yield b
    b.stop()


class StreamSeat:
    """One seat's Play stream: messages go in through a queue, replies come out in order."""

    def __init__(self, stub: bot_pb2_grpc.BotStub) -> None:
        self.outbox: queue.Queue[bot_pb.RefereeMessage | None] = queue.Queue()
        self.replies = stub.Play(iter(self.outbox.get, None), timeout=60)

    def send(self, msg: bot_pb.RefereeMessage) -> None:
        self.outbox.put(msg)

    def ask(self, req: bot_pb.DecisionRequest) -> bot_pb.DecisionReply:
        self.send(bot_pb.RefereeMessage(decision=req))
        return next(self.replies)

    def close(self) -> None:
        self.outbox.put(None)  # ends the request stream; the bot then ends its side
        assert list(self.replies) == [], "the bot sent a reply nobody asked for"


def abluxxes(g: Group, state: State, seat: int) -> bool:
    """R8: whether laying ``g`` would abluxx some opponent of ``seat``."""
    for other, stack in enumerate(state.stacks):
        if other != seat and stack:
            top = stack[-1]
            if g.numbers + g.jokers == top.numbers + top.jokers and g.value > top.value:
                return True
    return False


def play_game(bot: NodeBot, transport: str, players: int, bot_seats: set[int], seed: int, options: Options) -> State:
    """Play one game; ``bot_seats`` ask the Node bot, the others play at random. Checks every reply."""
    rng = random.Random(seed)
    game_id = f"g-{transport}-{seed}"
    deck = deck_from_seed(seed)
    salt = seed.to_bytes(8, "big")
    start_seat = seed % players
    state = new_game(deck, players, options, start_seat)
    start = bot_pb.GameStart(
        game_id=game_id,
        players=[pb.Player(seat=i, name="node" if i in bot_seats else "random") for i in range(players)],
        options=options_pb(options),
        time_control=pb.TimeControl(decision_ms=1000, bank_ms=10000, grace_ms=100),
        start_seat=start_seat,
        rules_version=RULES_VERSION,
        deck_commitment=hashlib.sha256(salt + bytes(deck)).digest(),
    )
    streams: dict[int, StreamSeat] = {}
    if transport == "stream":
        for seat in sorted(bot_seats):
            streams[seat] = StreamSeat(bot.stub)
            seat_start = bot_pb.GameStart()
            seat_start.CopyFrom(start)
            seat_start.seat = seat
            streams[seat].send(bot_pb.RefereeMessage(start=seat_start))
    unseen: dict[int, list[Event]] = {s: [] for s in range(players)}
    started: set[int] = set()
    seq = 0
    for _ in range(MAX_DECISIONS):
        if state.over:
            break
        seat = state.seat
        if seat in bot_seats:
            seq += 1
            req = decision_request(state, game_id, seq, unseen[seat], decision_ms=1000, bank_ms=10000)
            unseen[seat] = []
            if transport == "stream":
                reply = streams[seat].ask(req)
            else:
                if seat not in started:
                    req.start.CopyFrom(start)
                    req.start.seat = seat
                    started.add(seat)
                reply = bot.stub.Decide(req, timeout=10)
            assert (reply.game_id, reply.seq) == (game_id, seq)
            assert reply.WhichOneof("decision") == "index", reply
            assert reply.index < len(state.legal), f"index {reply.index} of {len(state.legal)} legal actions"
            action = state.legal[reply.index]
            check_strategy(state, action)
        else:
            action = rng.choice(state.legal)
        state, events = apply(state, action)
        for s in unseen:
            unseen[s].extend(events)
    assert state.over, f"game {game_id} did not end in {MAX_DECISIONS} decisions"

    final = scores(state)
    hand_sizes = [state.hand_size(s) for s in range(players)]
    for seat in sorted(bot_seats):
        notice = bot_pb.GameOverNotice(
            game_id=game_id,
            seat=seat,
            reason=END_PB[state.end_reason],
            scores=final,
            places=placings(final, hand_sizes),
            deck=deck,
            salt=salt,
        )
        if transport == "stream":
            streams[seat].send(bot_pb.RefereeMessage(game_over=notice))
            streams[seat].close()
        else:
            bot.stub.GameOver(notice, timeout=10)
    return state


def check_strategy(state: State, action: object) -> None:
    """What the README promises: abluxx when a legal group can, take when abluxxing, reclaim when declined."""
    if state.kind is Kind.PLAY:
        if any(abluxxes(g, state, state.seat) for g in state.legal):
            assert abluxxes(action, state, state.seat), f"{action} abluxxes nobody, though a legal group would"
    elif state.kind is Kind.TAKE_OR_DECLINE:
        assert action is Choice.TAKE
    elif state.kind is Kind.RECLAIM_OR_DISCARD:
        assert action is Choice.RECLAIM


GAMES = [
    # players, the Node bot's seats, seed, options
    (2, {0, 1}, 11, Options()),
    (3, {1}, 12, Options(draw_one=True)),
    (4, {0, 2}, 13, Options(end_on_empty_pile=True)),
]


def test_hello_names_the_bot_and_both_transports(bot: NodeBot) -> None:
    hello = bot.stub.Hello(bot_pb.HelloRequest(protocol_version=bot_pb.PROTOCOL_VERSION_1), timeout=10)
    assert hello.name == "node-largest"
    assert hello.version == "0.1.0"
    assert hello.author
    assert hello.protocol_version == bot_pb.PROTOCOL_VERSION_1
    assert sorted(hello.transports) == [bot_pb.TRANSPORT_UNARY, bot_pb.TRANSPORT_STREAM]


@pytest.mark.parametrize("transport", ["unary", "stream"])
@pytest.mark.parametrize(("players", "bot_seats", "seed", "options"), GAMES)
def test_bot_plays_whole_games(
    bot: NodeBot, transport: str, players: int, bot_seats: set[int], seed: int, options: Options
) -> None:
    state = play_game(bot, transport, players, bot_seats, seed, options)
    assert state.end_reason is not None
    assert bot.proc.poll() is None, f"the bot died: {bot.errors()}"


def test_bot_outscores_random_players(bot: NodeBot) -> None:
    """A sensible strategy: over seeded 2-player games against random play, the bot's total score is higher."""
    ours = theirs = 0
    for seed in range(100, 106):
        final = scores(play_game(bot, "stream", 2, {0}, seed, Options()))
        ours += final[0]
        theirs += final[1]
    assert ours > theirs, (ours, theirs)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_bot_cleanly_with_a_stream_open(node: str, sig: signal.Signals) -> None:
    b = NodeBot(node)
    stream = StreamSeat(b.stub)
    stream.send(bot_pb.RefereeMessage(start=bot_pb.GameStart(game_id="g-open", seat=0)))
    state = new_game(deck_from_seed(1), 2)
    reply = stream.ask(decision_request(state, "g-open", 1, []))
    assert reply.seq == 1
    assert b.stop(sig) == 0, b.errors()


@pytest.mark.parametrize("transport", ["unary", "stream"])
def test_a_strategy_bug_answers_no_action_and_its_error_in_words(bot: NodeBot, transport: str) -> None:
    """bot.proto DecisionReply.error: a play request whose only listed action is no group trips strategy.js, and the
    bot says so in the reply rather than guessing an index (the referee's fallback plays it, for one strike)."""
    state = new_game(deck_from_seed(3), 2)
    state, _ = apply(state, state.legal[0])  # seat 0 has a stack: the strategy looks at it
    req = decision_request(state, f"g-bug-{transport}", 7, [])
    del req.legal_actions[:]
    req.legal_actions.add().choice = pb.CHOICE_SKIP
    req.kind = pb.DECISION_KIND_PLAY
    if transport == "unary":
        reply = bot.stub.Decide(req, timeout=10)
    else:
        seat = StreamSeat(bot.stub)
        reply = seat.ask(req)
        seat.close()
    assert reply.seq == 7 and reply.WhichOneof("decision") is None
    assert reply.error.startswith("TypeError: ") and len(reply.error) <= 200, reply.error
    assert bot.proc.poll() is None
