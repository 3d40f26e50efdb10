"""Built-in seats, the time bank, and `abluxx match`."""

from __future__ import annotations

import asyncio
import time

import pytest

from referee.cli import main
from referee.engine import apply, deck_from_seed, event_for, new_game
from referee.match import EntrantRef, GameSpec, TimeControl, fallback_index, play_game
from referee.match.builtin import BuiltinSeat
from referee.match.runner import TRIM_EVENTS
from referee.match.seats import SeatAnswer
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records import read_record
from referee.wire import event_from_pb, event_pb

from .helpers import bot_process, free_address, play_one, verify


def test_builtin_policies_play_a_whole_game(tmp_path):
    entrants = tuple(EntrantRef(p, policy=p) for p in ("greedy", "random", "counter", "fallback"))
    spec = GameSpec("builtin", 11, entrants)
    result = asyncio.run(play_game(spec, record_path=tmp_path / "g.abluxx"))
    rec = verify(tmp_path / "g.abluxx")
    assert sorted(result.places) == sorted(rec.footer.places) and len(result.places) == 4
    assert all(p.kind == rec_pb.SEAT_KIND_BUILTIN and p.transport == "builtin" for p in rec.header.players)
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in rec.decisions)
    assert not any(s.retired for s in result.seats)


def test_fallback_is_deterministic_and_lays_the_biggest_group():
    state = new_game(deck_from_seed(5), 3)
    for _ in range(60):
        if state.over:
            break
        i = fallback_index(state)
        assert i == fallback_index(state)
        if state.kind.value == "play":
            assert state.legal[i].count == max(g.count for g in state.legal)
            assert all(g.count < state.legal[i].count for g in state.legal[:i])
        else:
            assert i == 0
        state, _ = apply(state, state.legal[i])


def test_a_slow_answer_draws_on_the_bank_without_a_fault(tmp_path):
    # Each slow answer is 1.5 s over its decision time, and every other answer has 3 s before it draws on the bank,
    # so a busy machine makes no good answer draw. What a slow answer draws is 1.5 s less the referee's own stalls
    # (clock.py) plus whatever the machine adds: so assert only that each draws, and nothing else does.
    tc = TimeControl(decision_ms=3000, bank_ms=6000, grace_ms=1000)
    with (
        bot_process("--mode", "ok") as good,
        bot_process("--mode", "slow", "--delay-ms", "4500", "--bad-count", "2") as slow,
    ):
        spec = GameSpec("bank", 5, (EntrantRef("slow", slow), EntrantRef("good", good)), time_control=tc)
        result = play_one(spec, tmp_path / "g.abluxx")
    rec = verify(tmp_path / "g.abluxx")
    mine = [d for d in rec.decisions if d.seat == 0]
    assert all(d.chosen_by == rec_pb.CHOOSER_BOT and d.fault == 0 for d in mine)
    assert [d.bot_us >= 4_500_000 for d in mine[:3]] == [True, True, False]
    assert 0 < mine[-1].bank_left_ms < 6000
    assert 6000 > mine[0].bank_left_ms > mine[1].bank_left_ms == mine[-1].bank_left_ms
    assert result.seats[0].faults == {}


def test_abluxx_match_prints_the_result_and_writes_a_verifiable_record(tmp_path, capsys):
    with bot_process("--mode", "ok") as bot:
        code = main(["match", bot, "greedy", "--seed", "3", "--data", str(tmp_path), "--game-id", "cli-1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "game cli-1, seed 3" in out and "place 1:" in out and "place 2:" in out
    path = tmp_path / "records" / "cli-1.abluxx"
    assert f"record: {path}" in out
    rec = verify(path)
    assert rec.header.players[0].address == bot and rec.header.players[0].transport == "stream"


def test_abluxx_match_names_a_bad_seat(tmp_path, capsys):
    assert main(["match", "greedy", "nonsense", "--data", str(tmp_path)]) == 2
    assert "'nonsense' is neither HOST:PORT nor a built-in policy" in capsys.readouterr().err
    assert main(["match", "greedy", "--data", str(tmp_path)]) == 2
    assert "2 to 5 seats" in capsys.readouterr().err


def test_match_exits_1_when_a_bot_cannot_be_reached(tmp_path, capsys):
    """The check the docs recommend for a new bot: a bot that is down fails it, naming the seat and why."""
    nobody = free_address()
    assert main(["match", nobody, "greedy", "counter", "--data", str(tmp_path), "--seed", "1"]) == 1
    out, err = capsys.readouterr()
    assert "RETIRED" in out and "record: " in out  # the game was still played to the end, with the fallback
    assert f"seat 0, {nobody}, retired: cannot reach a bot at {nobody}: Hello failed: UNAVAILABLE" in err


def test_match_exits_1_when_a_bot_retires_during_the_game(tmp_path, capsys):
    with bot_process("--mode", "crash", "--after", "3") as crashing:
        assert main(["match", crashing, "greedy", "--data", str(tmp_path), "--seed", "1"]) == 1
    assert "retired: " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("seat", "says"),
    [
        ("127.0.0.1:99999", 'bad address "127.0.0.1:99999": port must be 1 to 65535'),
        ("127.0.0.1:0", "port must be 1 to 65535"),
        ("mine=nohost", 'bad address "nohost": expected host:port'),
        ("=127.0.0.1:5000", "names no bot before '='"),
        ("127.0.0.1:50051:7", 'bad address "127.0.0.1:50051:7"'),
    ],
)
def test_match_refuses_a_bad_address_before_dialling(tmp_path, capsys, seat, says):
    assert main(["match", seat, "greedy", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert says in err and "seat 0" in err and "Traceback" not in err
    assert not (tmp_path / "records").exists()  # no game was started


def test_match_names_a_bot_seat_by_its_hello_name_with_the_address_as_detail(tmp_path, capsys):
    with bot_process("--mode", "ok") as bot, bot_process("--mode", "ok") as twin:
        assert main(["match", bot, "mine=" + twin, "greedy", "--data", str(tmp_path), "--game-id", "g"]) == 0
    out = capsys.readouterr().out
    assert f"ok ({bot})" in out  # bad_bots.py says its name is its mode
    assert f"mine ({twin})" in out  # a name given on the command line wins
    players = read_record(tmp_path / "records" / "g.abluxx").header.players
    assert [(p.name, p.address) for p in players] == [("ok", bot), ("mine", twin), ("greedy", "")]
    assert main(["replay", "g", "--data", str(tmp_path)]) == 0  # the replay names the seats the same way
    assert f"seat 0: ok at {bot} (" in capsys.readouterr().out


STALL_S = 4.0  # the referee's stall in _StalledSeat's first answer


class _StalledSeat:
    """Answers the first legal action in 20 ms, but its first answer is read late: the referee's loop stalled."""

    name, version, author, address, transport = "stalled", "1", "tests", "", "builtin"
    kind = rec_pb.SEAT_KIND_BUILTIN
    is_fallback = False

    def __init__(self) -> None:
        self.stalls = 1

    async def connect(self) -> None: ...

    async def start(self, start: bot_pb.GameStart) -> None: ...

    async def finish(self, notice: bot_pb.GameOverNotice | None) -> None: ...

    async def decide(self, request: bytes, seq: int, allowance_s: float) -> SeatAnswer:
        t0 = time.perf_counter()
        await asyncio.sleep(0.02)  # the bot answers in 20 ms...
        if self.stalls:
            self.stalls -= 1
            time.sleep(STALL_S)  # ...but the referee's event loop is busy before it reads the reply
        return SeatAnswer(bot_pb.DecisionReply(seq=seq, index=0), bot_us=int((time.perf_counter() - t0) * 1e6))


def test_a_referee_stall_is_not_taken_from_the_bank():
    # 4 s of stall against 3 s of decision time: the bank would lose 1 s if the stall counted, and keeps all of it
    # unless the machine delays the 20 ms answer by a further 3 s.
    tc = TimeControl(decision_ms=3000, bank_ms=1000, grace_ms=50)
    spec = GameSpec("stall", 4, (EntrantRef("stalled", policy="fallback"), EntrantRef("greedy", policy="greedy")),
                    time_control=tc)  # fmt: skip
    seen: list[rec_pb.DecisionRecord] = []
    seats = [_StalledSeat(), BuiltinSeat.from_policy("greedy", "greedy", 4)]
    asyncio.run(play_game(spec, seats, on_decision=lambda d: seen.append(rec_pb.DecisionRecord.FromString(d))))
    first = next(d for d in seen if d.seat == 0)
    assert first.bot_us >= STALL_S * 1e6 and first.fault == 0
    assert first.bank_left_ms == 1000


class _BrokenAtStart:
    """A built-in policy's session whose start has a bug."""

    def start(self, start: bot_pb.GameStart) -> None:
        raise KeyError("no such option")


def test_a_builtin_policy_that_fails_at_start_retires_its_seat_not_the_game():
    spec = GameSpec("broken", 6, (EntrantRef("broken", policy="greedy"), EntrantRef("greedy", policy="greedy")))
    seats = [BuiltinSeat("broken", "greedy", _BrokenAtStart()), BuiltinSeat.from_policy("greedy", "greedy", 6)]
    seen: list[rec_pb.DecisionRecord] = []
    result = asyncio.run(play_game(spec, seats, on_decision=lambda d: seen.append(rec_pb.DecisionRecord.FromString(d))))
    assert result.seats[0].retired and not result.seats[1].retired
    first = next(d for d in seen if d.seat == 0)
    assert first.retired and first.fault == rec_pb.FAULT_KIND_UNREACHABLE and "no such option" in first.fault_detail


class _Listener:
    """A built-in greedy session that keeps every event it is told, from its requests and its GameOverNotice."""

    def __init__(self, seed: int) -> None:
        from abluxx_bot import BotSession
        from abluxx_bot.examples import REGISTRY

        self.inner = BotSession(REGISTRY["greedy"](seed))
        self.events: list[bytes] = []
        self.notices = 0

    def start(self, start: bot_pb.GameStart) -> None:
        self.inner.start(start)

    def answer(self, request: bot_pb.DecisionRequest) -> bot_pb.DecisionReply:
        self.events += [e.SerializeToString() for e in request.events]
        return self.inner.answer(request)

    def game_over(self, notice: bot_pb.GameOverNotice) -> None:
        self.notices += 1
        self.events += [e.SerializeToString() for e in notice.events]
        self.inner.game_over(notice)


@pytest.mark.parametrize("seed", [3, 11])
def test_every_seat_is_told_every_event_of_the_game_once_in_order(tmp_path, seed):
    """Requests and the GameOverNotice together tell each asking seat the whole game, redacted for it: nothing
    dropped, repeated or reordered, however long the game (the runner drops events every seat has been sent)."""
    spec = GameSpec("told", seed, tuple(EntrantRef(n, policy="greedy") for n in ("a", "b", "c")))
    listeners = [_Listener(seed), _Listener(seed + 1)]
    seats = [BuiltinSeat("a", "greedy", listeners[0]), BuiltinSeat("b", "greedy", listeners[1]),
             BuiltinSeat.from_policy("c", "fallback", seed)]  # fmt: skip
    path = tmp_path / "told.abluxx"
    asyncio.run(play_game(spec, seats, record_path=path))
    everything = [event_from_pb(e) for d in read_record(path).decisions for e in d.events]
    assert len(everything) > 2 * TRIM_EVENTS
    for seat, listener in enumerate(listeners):
        assert listener.notices == 1
        assert listener.events == [event_pb(event_for(e, seat)).SerializeToString() for e in everything]
