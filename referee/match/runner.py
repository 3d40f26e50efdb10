"""Play one game: the engine, the seats, the clock and the fault policy together (docs/match.md).

    async with ChannelPool() as pool:
        result = await play_game(spec, pool=pool, record_path=path)

The game always finishes: a seat that fails a decision costs a strike and the fallback plays that decision; after
``spec.max_strikes`` strikes, or when its bot cannot be reached or its stream drops, the fallback plays the seat to
the end and it places last.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.engine import RULES_VERSION, Action, Event, State, apply, deck_from_seed, event_for, new_game
from referee.errors import SeatsAbsent
from referee.event_loop import as_game_work, game_work
from referee.log import get_logger
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records import FAULT_NAME, RecordWriter, commitment, decision_record_bytes, footer, header, new_salt
from referee.wire import ReplyError, decision_request_bytes, event_pb, options_pb, reply_index

from . import exits
from .builtin import BuiltinSeat
from .channels import ChannelPool, reason
from .clock import lag_monitor
from .remote import RemoteSeat
from .seats import DISCONNECTED, INVALID, TIMEOUT, UNREACHABLE, Seat, SeatAnswer, SeatError, fallback_index
from .spec import EntrantRef, GameResult, GameSpec, SeatStats

CHOOSER_BOT, CHOOSER_FALLBACK = rec_pb.CHOOSER_BOT, rec_pb.CHOOSER_FALLBACK
REFEREE = rec_pb.FAULT_KIND_REFEREE
RETIRED = rec_pb.FAULT_KIND_RETIRED
TRIM_EVENTS = 32  # the runner drops the events every seat has been sent once it holds this many


def fault_name(kind: int) -> str:
    """ "timeout", "invalid", ... for a FaultKind value (the keys of SeatStats.faults)."""
    return FAULT_NAME[kind]


# --- seats from entrants --------------------------------------------------------------------------------------


def make_seat(entrant: EntrantRef, pool: ChannelPool, seed: int = 0, prefer: str | None = None) -> Seat:
    """The seat for ``entrant``: a RemoteSeat on the shared ``pool`` for an address, a BuiltinSeat for a policy."""
    if (entrant.address is None) == (entrant.policy is None):
        raise ValueError(f"entrant {entrant.name!r} must have exactly one of address and policy")
    if entrant.address is not None:
        return RemoteSeat(entrant.name, entrant.address, pool, prefer=prefer)
    return BuiltinSeat.from_policy(entrant.name, entrant.policy or "", seed)


def make_seats(spec: GameSpec, pool: ChannelPool, prefer: str | None = None) -> list[Seat]:
    """One seat per entrant of ``spec``, remote ones sharing ``pool``'s channels. Built-in policies get their
    entrant's ``seed``, else ``spec.seed`` (they mix in the game id and seat themselves)."""
    return [make_seat(e, pool, spec.seed if e.seed is None else e.seed, prefer) for e in spec.entrants]


# --- one game -------------------------------------------------------------------------------------------------


async def play_game(
    spec: GameSpec,
    seats: Sequence[Seat] | None = None,
    *,
    pool: ChannelPool | None = None,
    record_path: Path | str | None = None,
    salt: bytes | None = None,
    prefer: str | None = None,
    on_decision: Callable[[bytes], None] | None = None,
) -> GameResult:
    """Play ``spec`` to the end and return its result; write its record to ``record_path`` when given.

    ``seats`` defaults to ``make_seats(spec, pool)``; pass one ``pool`` to every game so each bot address keeps
    one channel (without one, a pool is made and closed for this game). ``prefer`` ("stream"/"unary") forces a
    transport the bots offer. ``salt`` defaults to 16 random bytes. ``on_decision`` gets each decision's record
    as it is written, a serialized DecisionRecord (progress, live watching; a worker sends the bytes on as they
    are, and ``rec_pb.DecisionRecord.FromString`` reads them); it must not block.
    """
    if not 2 <= len(spec.entrants) <= 5:
        raise ValueError(f"a game needs 2 to 5 entrants, got {len(spec.entrants)}")
    own_pool = None
    if seats is None:
        if pool is None:
            pool = own_pool = ChannelPool()
        seats = make_seats(spec, pool, prefer)
    elif len(seats) != len(spec.entrants):
        raise ValueError(f"{len(seats)} seats for {len(spec.entrants)} entrants")
    try:
        path = Path(record_path) if record_path is not None else None
        return await _Game(spec, list(seats), path, salt, on_decision).run()
    finally:
        if own_pool is not None:
            await own_pool.close()


@dataclass(slots=True)
class _Choice:
    """How one decision was made: the index into the legal list, who chose it, and the fault that made the
    fallback choose (0 for none), as the decision's record keeps them."""

    index: int
    chosen_by: int = CHOOSER_BOT
    fault: int = 0
    detail: str = ""
    bot_us: int = 0
    transport_us: int = 0
    fatal: bool = False  # the seat cannot answer any more (SeatAnswer.fatal)
    retired_now: bool = False  # this decision retired the seat


class _Game:
    """One game in play. ``run`` is the whole game: ``_open`` the seats, then ``_play`` every decision (the
    ``_request`` to the seat, ``_settle`` its answer and the clock, ``_judge`` it, ``_record`` it), then
    ``_finish_record`` (the footer) and ``_finish_seats`` (every seat's GameOverNotice)."""

    def __init__(
        self,
        spec: GameSpec,
        seats: list[Seat],
        record_path: Path | None,
        salt: bytes | None,
        on_decision: Callable[[bytes], None] | None = None,
    ) -> None:
        self.spec = spec
        self.seats = seats
        self.n = len(seats)
        self.record_path = record_path
        self.salt = salt if salt is not None else new_salt()
        self.deck = deck_from_seed(spec.seed)
        self.bank_ms = [spec.time_control.bank_ms] * self.n
        self.strikes = [0] * self.n
        self.retired = [False] * self.n
        self.why_retired: list[tuple[int, str] | None] = [None] * self.n  # fault to record on the next decision
        self.stats = [SeatStats() for _ in range(self.n)]
        self.referee_faults = 0
        self.on_decision = on_decision
        self.writer: RecordWriter | None = None
        self.events: list[Event] = []  # the events some seat still asking has not been sent, unredacted
        self.since = [0] * self.n  # per seat: how much of ``events`` its last request carried
        self.seq = 0
        self.monitor = lag_monitor()
        self.log = get_logger(game_id=spec.game_id)
        self.seat_logs = [
            self.log.bind(seat=i, bot=e.address or f"builtin:{e.policy}") for i, e in enumerate(spec.entrants)
        ]

    async def run(self) -> GameResult:
        with game_work():  # this task's steps yield to what times the bots (referee/event_loop.py)
            return await self._run()

    async def _run(self) -> GameResult:
        try:
            # Inside the try: once a seat's stream is open, every way out of here must close it.
            await self._open()
            if self.record_path is not None:
                self.writer = RecordWriter(self.record_path, self._header())
            state = await self._play(new_game(self.deck, self.n, self.spec.options, self.spec.start_seat))
            end = await self._finish_record(state)
        except BaseException:
            if self.writer is not None:
                self.writer.close()  # an incomplete record: no footer
            await asyncio.gather(*(as_game_work(s.finish, None) for s in self.seats), return_exceptions=True)
            raise
        await self._finish_seats(end)
        return self._result(state, end)

    # --- the start ---

    def _retire(self, seat: int, fault: int, detail: str) -> None:
        self.retired[seat] = True
        self.stats[seat].retired = True
        self.why_retired[seat] = (fault, detail)
        self.seat_logs[seat].warning("seat retired", fault=fault_name(fault), detail=detail,
                                     strikes=self.strikes[seat])  # fmt: skip

    async def _open(self) -> None:
        """Hello every seat, then send each its GameStart; a seat that fails either is retired from the start."""
        spec = self.spec

        async def connect(i: int) -> None:
            try:
                await self.seats[i].connect()
            except SeatError as e:
                self._retire(i, e.fault, e.detail)
            except Exception as e:
                self._retire(i, UNREACHABLE, f"could not connect: {reason(e)}")

        await asyncio.gather(*(as_game_work(connect, i) for i in range(self.n)))
        if spec.absent_aborts and any(self.retired):
            raise SeatsAbsent({e.name: why[1] for e, why in zip(spec.entrants, self.why_retired, strict=True) if why})
        tc = spec.time_control
        common = bot_pb.GameStart(
            game_id=spec.game_id,
            players=[pb.Player(seat=i, name=e.name, version=s.version) for i, (e, s) in enumerate(self._seated())],
            options=options_pb(spec.options),
            time_control=pb.TimeControl(decision_ms=tc.decision_ms, bank_ms=tc.bank_ms, grace_ms=tc.grace_ms),
            start_seat=spec.start_seat,
            rules_version=RULES_VERSION,
            deck_commitment=commitment(self.salt, self.deck),
        )

        async def start(i: int) -> None:
            if self.retired[i]:
                return
            message = bot_pb.GameStart()
            message.CopyFrom(common)
            message.seat = i
            try:
                await self.seats[i].start(message)
            except SeatError as e:
                self._retire(i, e.fault, e.detail)
            except Exception as e:  # e.g. a built-in policy's bug: it costs that seat, not the game
                self._retire(i, UNREACHABLE, f"could not start: {reason(e)}")

        await asyncio.gather(*(as_game_work(start, i) for i in range(self.n)))

    def _seated(self) -> list[tuple[EntrantRef, Seat]]:
        return list(zip(self.spec.entrants, self.seats, strict=True))

    def _header(self) -> rec_pb.RecordHeader:
        spec = self.spec
        players = [
            rec_pb.PlayerRecord(
                name=e.name, version=s.version, author=s.author, address=s.address, kind=s.kind, transport=s.transport
            )
            for e, s in self._seated()
        ]
        return header(spec.game_id, self.deck, players, salt=self.salt, options=spec.options,
                      start_seat=spec.start_seat, seed=spec.seed, time_control=spec.time_control,
                      max_strikes=spec.max_strikes, tournament_id=spec.tournament_id)  # fmt: skip

    # --- the decisions ---

    async def _play(self, state: State) -> State:
        """Every decision to the end of the game: ask the seat (or play the fallback for it), judge the answer,
        apply it and record it. One loop, awaiting only the seat: this is the referee's hot path."""
        seats = self.seats
        while not state.over:
            seat = state.seat
            self.seq += 1
            if self.retired[seat]:
                choice = self._retired_choice(seat, state)
            elif seats[seat].is_fallback:
                choice = _Choice(fallback_index(state))
            else:
                request, allowance_s = self._request(seat, state)
                t0 = time.perf_counter()
                answer = await seats[seat].decide(request, self.seq, allowance_s)
                if answer.fatal and answer.fault == DISCONNECTED and (how := await exits.note(seats[seat].address)):
                    answer = dataclasses.replace(answer, detail=f"{how} ({answer.detail})")
                choice = self._judge(seat, state, self._settle(seat, state, answer, t0))
            action = state.legal[choice.index]
            after, events = apply(state, action)
            self.events.extend(events)
            self._record(seat, state, action, events, choice)
            if choice.retired_now:
                await seats[seat].finish(None)
            state = after
        return state

    def _retired_choice(self, seat: int, state: State) -> _Choice:
        """The fallback plays a retired seat; its first decision after retiring records why it retired."""
        choice = _Choice(fallback_index(state), CHOOSER_FALLBACK, RETIRED)
        choice.detail = "the seat has retired; the fallback plays it"
        why = self.why_retired[seat]
        if why is not None:
            self.why_retired[seat] = None
            choice.fault, choice.detail = why
            choice.retired_now = True
            self._count_fault(seat, choice.fault)
        return choice

    def _request(self, seat: int, state: State) -> tuple[bytes, float]:
        """The seat's request (its view, the events since its last one, its time) and the decision's allowance in
        seconds: ``decision_ms``, the bank left and the grace."""
        tc, bank = self.spec.time_control, self.bank_ms[seat]
        request = decision_request_bytes(state, self.spec.game_id, self.seq, self.events[self.since[seat] :],
                                         tc.decision_ms, bank)  # fmt: skip
        self.since[seat] = len(self.events)
        if len(self.events) >= TRIM_EVENTS:
            self._trim_events()
        return request, (tc.decision_ms + bank + tc.grace_ms) / 1000

    def _trim_events(self) -> None:
        """Drop the events that every seat still asking has been sent. Only unsent events stay alive, so a game's
        history does not pile up in the collector's older generations (referee/gc_policy.py). A retired seat gets
        no GameOverNotice and the fallback policy reads none, so neither holds events back."""
        asking = [self.since[i] for i in range(self.n) if not self.retired[i] and not self.seats[i].is_fallback]
        sent = min(asking, default=len(self.events))
        if sent:
            del self.events[:sent]
            self.since = [max(0, s - sent) for s in self.since]

    def _settle(self, seat: int, state: State, answer: SeatAnswer, t0: float) -> _Choice:
        """The choice the seat's answer (asked at ``t0``) makes, and the clock settled: time beyond
        ``decision_ms`` comes from the bank, less the referee's own stalls, and a timeout while the referee's event
        loop stalled is the referee's fault, not the bot's."""
        tc, bank = self.spec.time_control, self.bank_ms[seat]
        # The seat's fault, or INVALID for a reply that names no legal action (the kit's local game judges alike).
        choice = _Choice(-1, CHOOSER_BOT, answer.fault, answer.detail, answer.bot_us, answer.transport_us, answer.fatal)
        if answer.reply is not None:
            try:
                choice.index = reply_index(answer.reply, state.legal)
            except ReplyError as e:
                choice.fault, choice.detail = INVALID, str(e)
        over_ms = answer.bot_us // 1000 - tc.decision_ms
        if choice.fault == TIMEOUT and not answer.fatal:  # a fatal one already allowed for the stalls
            stall = self.monitor.worst_since(t0)
            if stall * 1000 >= max(tc.grace_ms, 20):
                choice.fault = REFEREE
                choice.detail = f"the referee's event loop stalled {stall * 1000:.0f} ms ({choice.detail})"
            else:
                self.bank_ms[seat] = 0
        elif over_ms > 0:
            # The referee's own lateness in reading the reply is not the bot's time (clock.py).
            over_ms -= int(self.monitor.worst_since(t0) * 1000)
            if over_ms > 0:
                self.bank_ms[seat] = max(0, bank - over_ms)
        return choice

    def _judge(self, seat: int, state: State, choice: _Choice) -> _Choice:
        """A faulty answer: the fallback chooses, the seat takes a strike (not for the referee's own fault), and it
        retires at ``max_strikes`` or when it cannot answer any more. A good one: its time goes into the stats."""
        if not choice.fault:
            self.stats[seat].decision_us.append(choice.bot_us)
            return choice
        choice.chosen_by, choice.index = CHOOSER_FALLBACK, fallback_index(state)
        if choice.fault == REFEREE:
            self.referee_faults += 1
            self.seat_logs[seat].warning("referee fault", seq=self.seq, detail=choice.detail)
            return choice
        self.strikes[seat] += 1
        name = self._count_fault(seat, choice.fault)
        if not self.stats[seat].first_fault:
            self.stats[seat].first_fault = f"{name} at decision {self.seq}: {choice.detail}"
        self.seat_logs[seat].warning("fault", seq=self.seq, fault=name, detail=choice.detail,
                                     strikes=self.strikes[seat])  # fmt: skip
        if choice.fatal or self.strikes[seat] >= self.spec.max_strikes:
            choice.retired_now = True
            self._retire(seat, choice.fault, choice.detail)
            self.why_retired[seat] = None  # this decision's record says why
        return choice

    def _count_fault(self, seat: int, fault: int) -> str:
        faults = self.stats[seat].faults
        name = fault_name(fault)
        faults[name] = faults.get(name, 0) + 1
        return name

    def _record(self, seat: int, state: State, action: Action, events: list[Event], choice: _Choice) -> None:
        """Write the decision's record frame and show it to ``on_decision``."""
        if self.writer is None and self.on_decision is None:
            return
        assert state.kind is not None  # a state that asked a decision
        record = decision_record_bytes(self.seq, seat, state.kind, choice.index, action, choice.chosen_by,
                                       choice.fault, choice.detail, choice.bot_us, choice.transport_us,
                                       self.bank_ms[seat], events, choice.retired_now)  # fmt: skip
        if self.writer is not None:
            self.writer.decision(record)
        if self.on_decision is not None:
            self.on_decision(record)

    # --- the end ---

    async def _finish_record(self, state: State) -> rec_pb.RecordFooter:
        """The footer, written to the record when there is one."""
        end = footer(state, salt=self.salt, retired=[i for i in range(self.n) if self.retired[i]])
        if self.writer is not None:
            # In a thread: finish fsyncs, which takes milliseconds that every other game on this loop would wait.
            await asyncio.to_thread(self.writer.finish, end)
        return end

    async def _finish_seats(self, end: rec_pb.RecordFooter) -> None:
        """Send every seat still playing its GameOverNotice (the deal revealed unless the spec says not yet), and
        close every seat's transport."""
        spec = self.spec

        def notice(i: int) -> bot_pb.GameOverNotice | None:
            if self.retired[i]:
                return None
            return bot_pb.GameOverNotice(
                game_id=spec.game_id,
                seat=i,
                reason=end.reason,
                scores=end.scores,
                places=end.places,
                events=[event_pb(event_for(e, i)) for e in self.events[self.since[i] :]],
                deck=self.deck if spec.reveal_deal else (),
                salt=self.salt if spec.reveal_deal else b"",
                deck_commitment=commitment(self.salt, self.deck),
            )

        await asyncio.gather(*(as_game_work(s.finish, notice(i)) for i, s in enumerate(self.seats)),
                             return_exceptions=True)

    def _result(self, state: State, end: rec_pb.RecordFooter) -> GameResult:
        scores, places = tuple(end.scores), tuple(end.places)
        self.log.debug("game over", decisions=self.seq, scores=list(scores), places=list(places),
                       retired=list(end.retired), referee_faults=self.referee_faults)  # fmt: skip
        assert state.end_reason is not None
        for stats, seat in zip(self.stats, self.seats, strict=True):
            stats.transport = seat.transport
        return GameResult(
            game_id=self.spec.game_id,
            scores=scores,
            places=places,
            end_reason=state.end_reason,
            seats=self.stats,
            decisions=self.seq,
            final_digest=end.final_digest,
            record_path=self.record_path,
            referee_faults=self.referee_faults,
        )
