"""A bot in another language as a real process, and a small driver that plays engine games against it over real
sockets: Decide per decision, or one Play stream per seat (tests/clients: the Node and the C++ bot)."""

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

MAX_DECISIONS = 5000  # far more than any game needs; a game still running then does not end


def need(tool: str, what: str) -> str:
    """The path of ``tool``; the test skips without it, or fails under CI=true (.ci/run installs it)."""
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"`{tool}` is not installed, and CI must run {what}")
        pytest.skip(f"`{tool}` is not installed: {what} cannot run")
    return path


class BotProcess:
    """A bot as a subprocess: ``command`` must make it listen on a free port of 127.0.0.1 and print where."""

    def __init__(self, command: list[str]) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 -- read by errors() for as long as the bot lives
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.stderr, text=True)
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


def play_game(bot: BotProcess, transport: str, players: int, bot_seats: set[int], seed: int, options: Options) -> State:
    """Play one game; ``bot_seats`` ask the bot, the others play at random. Checks every reply."""
    rng = random.Random(seed)
    game_id = f"g-{transport}-{seed}"
    deck = deck_from_seed(seed)
    salt = seed.to_bytes(8, "big")
    start_seat = seed % players
    state = new_game(deck, players, options, start_seat)
    start = bot_pb.GameStart(
        game_id=game_id,
        players=[pb.Player(seat=i, name="bot" if i in bot_seats else "random") for i in range(players)],
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


def totals_against_random(bot: BotProcess, seeds: range) -> tuple[int, int]:
    """The bot's total score at seat 0 of 2-player stream games against random play, and random's."""
    ours = theirs = 0
    for seed in seeds:
        final = scores(play_game(bot, "stream", 2, {0}, seed, Options()))
        ours += final[0]
        theirs += final[1]
    return ours, theirs


def stops_with_a_stream_open(command: list[str], sig: signal.Signals) -> int:
    """Start the bot, leave a Play stream open after one answered decision, send ``sig``: its exit code."""
    b = BotProcess(command)
    stream = StreamSeat(b.stub)
    stream.send(bot_pb.RefereeMessage(start=bot_pb.GameStart(game_id="g-open", seat=0)))
    reply = stream.ask(decision_request(new_game(deck_from_seed(1), 2), "g-open", 1, []))
    assert reply.seq == 1
    code = b.stop(sig)
    assert code == 0, b.errors()
    return code


def no_group_request(game_id: str) -> bot_pb.DecisionRequest:
    """A play request whose only listed action is no group: a strategy that looks for groups finds none."""
    state = new_game(deck_from_seed(3), 2)
    state, _ = apply(state, state.legal[0])  # seat 0 has a stack: the strategy looks at it
    req = decision_request(state, game_id, 7, [])
    del req.legal_actions[:]
    req.legal_actions.add().choice = pb.CHOICE_SKIP
    req.kind = pb.DECISION_KIND_PLAY
    return req
