"""The example bots served over real gRPC, in real `abluxx bot NAME --port 0` subprocesses."""

from __future__ import annotations

import re
import signal
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from abluxx_bot import BotSession
from abluxx_bot.examples import REGISTRY
from abluxx_bot.local import ReplyError, play_local
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.engine import Kind, Options, State, counts_of, digest
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.wire import KIND_FROM_PB

from .driver import ServedBot, StreamSeat, UnarySeat

NAMES = ["random", "greedy", "counter", "hoard"]
SEED = 7  # the bots' seed


@pytest.fixture(scope="module")
def servers():
    bots = {name: ServedBot.example(name, SEED) for name in NAMES}  # start all, then wait: they boot in parallel
    try:
        for b in bots.values():
            b.wait_ready()
        yield bots
    finally:
        for b in bots.values():
            b.stop()


def check_request(state: State, req: bot_pb.DecisionRequest) -> None:
    """What the driver sends to a seat holds nothing that seat may not know (R17)."""
    s = req.seat
    assert s == state.seat
    assert counts_of(req.view.hand) == state.hands[s], "view.hand is not exactly the seat's own hand"
    assert list(req.view.hand_sizes) == [state.hand_size(i) for i in range(state.players)]
    assert list(req.view.hand) == sorted(req.view.hand)
    for e in req.events:
        if e.WhichOneof("event") == "drew" and not e.drew.from_market and e.drew.seat != s:
            assert e.drew.card == 0, f"seat {s} was told the pile card seat {e.drew.seat} drew"


class Recorder:
    """Wraps a seat and keeps (seq, reply) for every answer."""

    def __init__(self, seat, log: list) -> None:
        self.seat, self.log = seat, log

    def start(self, start):
        self.seat.start(start)

    def answer(self, req):
        reply = self.seat.answer(req)
        self.log.append((req.seat, req.seq, reply.WhichOneof("decision"), reply.index))
        return reply

    def game_over(self, notice):
        self.seat.game_over(notice)


def play(seats, seed: int, game_id: str, options: Options | None = None, kinds: dict | None = None):
    log: list = []

    def on_request(state, req):
        check_request(state, req)
        if kinds is not None:
            kinds.setdefault(req.seat, set()).add(KIND_FROM_PB[req.kind])

    game = play_local(
        [Recorder(s, log) for s in seats],
        seed,
        game_id=game_id,
        options=options,
        names=[getattr(s, "name", None) or s.bot.name for s in seats],
        on_request=on_request,
    )
    return digest(game.state), game.scores, log


@pytest.mark.parametrize("transport", ["unary", "stream"])
@pytest.mark.parametrize("name", NAMES)
def test_served_bot_answers_every_kind_legally(servers, name, transport):
    Seat = UnarySeat if transport == "unary" else StreamSeat
    lineup = [name, "random", name, "random"]
    kinds: dict = {}
    for g in range(8):
        seats = [Seat(servers[b].stub, b) for b in lineup]
        # play_local raises if a reply is not a legal action for its request; check_request checks the views.
        play(seats, 1000 + g, f"{name}-{transport}-{g}", Options(draw_one=g % 2 == 1), kinds)
    seen = kinds[0] | kinds[2]
    assert seen == set(Kind), f"{name} was never asked {set(Kind) - seen}"


@pytest.mark.parametrize("name", NAMES)
def test_decide_and_play_give_the_same_games_as_in_process(servers, name):
    for g in range(3):
        seed, gid = 2000 + g, f"same-{name}-{g}"
        unary = play([UnarySeat(servers[name].stub, name) for _ in range(4)], seed, gid)
        stream = play([StreamSeat(servers[name].stub, name) for _ in range(4)], seed, gid)
        local = play([BotSession(REGISTRY[name](SEED)) for _ in range(4)], seed, gid)
        assert unary == stream == local


def test_many_concurrent_stream_games_match_sequential_ones(servers):
    def one(i: int):
        return play([StreamSeat(servers["random"].stub, "random") for _ in range(4)], 3000 + i, f"conc-{i}")

    sequential = [one(i) for i in range(4)]
    with ThreadPoolExecutor(16) as pool:
        concurrent = list(pool.map(one, range(16)))
    assert concurrent[:4] == sequential
    assert len({c[0] for c in concurrent}) == 16  # 16 different games really were played


def test_hello_and_health(servers):
    for name, served in servers.items():
        hello = served.stub.Hello(bot_pb.HelloRequest(protocol_version=bot_pb.PROTOCOL_VERSION_1), timeout=5)
        assert hello.name == name and hello.version and hello.author
        assert hello.protocol_version == bot_pb.PROTOCOL_VERSION_1
        assert set(hello.transports) == {bot_pb.TRANSPORT_UNARY, bot_pb.TRANSPORT_STREAM}
        health = health_pb2_grpc.HealthStub(served.channel)
        for service in ("", "abluxxen.v1.Bot"):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


BOOM_BOT = textwrap.dedent(
    """
    import sys
    from abluxx_bot import Bot, serve

    class Boom(Bot):
        name, version, author = "boom", "0.1", "tests"

        key = None

        def decide(self, d):
            if self.key is None:
                self.key = (d.game_id, d.seat)
            if self.key != (d.game_id, d.seat):  # the kit makes one instance per game and seat
                raise AssertionError(f"instance for {self.key} asked about {(d.game_id, d.seat)}")
            if d.game_id.startswith("boom") and d.turn >= 3:
                raise ValueError("kaboom on turn %d" % d.turn)
            return 0

    serve(Boom, int(sys.argv[1]))
    """
)


def test_a_bot_that_raises_gives_a_clear_error_and_keeps_serving(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text(BOOM_BOT)
    served = ServedBot([sys.executable, str(script), "0"]).wait_ready()
    try:
        for Seat in (UnarySeat, StreamSeat):
            seats = [Seat(served.stub, "boom") for _ in range(4)]
            # Either transport: the failed decision is answered with no action and the exception in the reply's
            # error field (one strike); the call or stream stays open.
            with pytest.raises(ReplyError, match=r"^the bot raised ValueError: kaboom on turn 3$"):
                play(seats, 5, f"boom-{Seat.__name__}")
            for s in seats:
                if isinstance(s, StreamSeat):
                    s.cancel()

            # Later games on the same server still work, on both transports, several at once.
            def fine(i: int, Seat=Seat):
                return play([Seat(served.stub, "boom") for _ in range(4)], 5 + i, f"fine-{Seat.__name__}-{i}")

            with ThreadPoolExecutor(4) as pool:
                for _, scores, log in pool.map(fine, range(4)):
                    assert log and len(scores) == 4
    finally:
        assert served.stop() == 0
    assert "kaboom" in served.proc.stderr.read()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_the_server_cleanly(sig):
    served = ServedBot.example("random").wait_ready()
    StreamSeat(served.stub, "random")  # an open stream must not hold the server up
    play([UnarySeat(served.stub, "random") for _ in range(4)], 9, "before-stop")
    # a bound, not a measure: the server's 2 s grace and its exit on a loaded machine; a held server never ends
    assert served.stop(sig, timeout=60) == 0


def test_the_minimal_bot_in_the_docs_plays_over_grpc(tmp_path, servers):
    doc = (Path(__file__).parents[2] / "docs" / "writing-a-bot.md").read_text()
    script = tmp_path / "mybot.py"
    script.write_text(re.findall(r"```python\n(.*?)```", doc, re.S)[0])
    served = ServedBot([sys.executable, str(script), "0"]).wait_ready()
    try:
        hello = served.stub.Hello(bot_pb.HelloRequest(), timeout=5)
        assert hello.name == "biggest"
        for g in range(3):
            seats = [UnarySeat(served.stub, "biggest"), StreamSeat(servers["random"].stub, "random")]
            play(seats, 4000 + g, f"doc-{g}", Options(draw_one=True))
    finally:
        assert served.stop() == 0


ONCE_BOT = textwrap.dedent(
    """
    import sys
    from abluxx_bot import Bot, serve

    class Once(Bot):
        name, version, author = "once", "0.1", "tests"
        asked = 0

        def decide(self, d):
            self.asked += 1
            if self.asked == 2:
                raise ValueError("a bug on my second decision")
            return 0

    serve(Once, int(sys.argv[1]))
    """
)


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_one_exception_costs_a_strike_not_the_game_on_either_transport(tmp_path, capsys, transport):
    # writing-a-bot.md: if the bot raises, the fallback plays that decision and it costs a strike; the seat plays on.
    from referee.cli import main

    script = tmp_path / "once.py"
    script.write_text(ONCE_BOT)
    served = ServedBot([sys.executable, str(script), "0"]).wait_ready()
    try:
        address = served.address
        code = main(["match", address, "greedy", "--seed", "5", "--transport", transport, "--data", str(tmp_path)])
        out = capsys.readouterr().out
    finally:
        assert served.stop() == 0
    assert code == 0
    line = next(s for s in out.splitlines() if address in s)
    assert "RETIRED" not in line, out
    # the kit answers with no action and the exception, so the stream or call lives on and the author reads why
    assert "invalid 1, median" in line, out
    assert re.search(r"first fault: invalid at decision \d+: the bot raised ValueError: a bug on my second decision$",
                     out, flags=re.M), out  # fmt: skip
    assert "a bug on my second decision" in served.proc.stderr.read()
