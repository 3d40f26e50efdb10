"""Play one game: the engine, the seats, the clock and the fault policy together (docs/match.md).

    async with ChannelPool() as pool:
        result = await play_game(spec, pool=pool, record_path=path)

The game always finishes: a seat that fails a decision costs a strike and the fallback plays that decision; after
``spec.max_strikes`` strikes, or when its bot cannot be reached or its stream drops, the fallback plays the seat to
the end and it places last.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from referee.engine import RULES_VERSION, apply, deck_from_seed, digest, event_for, new_game, placings, scores
from referee.log import get_logger
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as pb
from referee.proto.abluxxen.v1 import record_pb2 as rec_pb
from referee.records import FAULT_NAME, FORMAT_VERSION, RecordWriter, commitment, decision_record_bytes, new_salt
from referee.records.build import utc_now
from referee.wire import (
    WireError,
    action_from_pb,
    decision_request_bytes,
    end_reason_pb,
    event_pb,
    options_pb,
)

from .clock import lag_monitor
from .seats import (
    INVALID,
    TIMEOUT,
    UNREACHABLE,
    Answer,
    BuiltinSeat,
    ChannelPool,
    RemoteSeat,
    Seat,
    SeatError,
    fallback_index,
)
from .spec import EntrantRef, GameResult, GameSpec, SeatStats

REFEREE = rec_pb.FAULT_KIND_REFEREE
RETIRED = rec_pb.FAULT_KIND_RETIRED


def fault_name(kind: int) -> str:
    """ "timeout", "invalid", ... for a FaultKind value (the keys of SeatStats.faults)."""
    return FAULT_NAME[kind]


MAX_BOT_ERROR_CHARS = 200  # bot.proto DecisionReply.error: the part of a bot's own error text the record keeps


def bot_error_words(error: str) -> str:
    """A bot's error text as the record keeps it: one line of printable characters, at most MAX_BOT_ERROR_CHARS."""
    words = "".join(c if c.isprintable() else " " for c in error[:MAX_BOT_ERROR_CHARS])
    return words + ("…" if len(error) > MAX_BOT_ERROR_CHARS else "")


# --- seats from entrants --------------------------------------------------------------------------------------


def make_seat(entrant: EntrantRef, pool: ChannelPool, seed: int = 0, prefer: str | None = None) -> Seat:
    """The seat for ``entrant``: a RemoteSeat on the shared ``pool`` for an address, a BuiltinSeat for a policy."""
    if (entrant.address is None) == (entrant.policy is None):
        raise ValueError(f"entrant {entrant.name!r} must have exactly one of address and policy")
    if entrant.address is not None:
        return RemoteSeat(entrant.name, entrant.address, pool, prefer=prefer)
    return BuiltinSeat.from_policy(entrant.name, entrant.policy or "", seed)


def make_seats(spec: GameSpec, pool: ChannelPool, prefer: str | None = None) -> list[Seat]:
    """One seat per entrant of ``spec``, remote ones sharing ``pool``'s channels. Built-in policies get the seed
    ``spec.seed`` (they mix in the game id and seat themselves)."""
    return [make_seat(e, pool, spec.seed, prefer) for e in spec.entrants]


# --- one game -------------------------------------------------------------------------------------------------


async def play_game(
    spec: GameSpec,
    seats: Sequence[Seat] | None = None,
    *,
    pool: ChannelPool | None = None,
    record_path: Path | str | None = None,
    salt: bytes | None = None,
    prefer: str | None = None,
    on_decision: Callable[[rec_pb.DecisionRecord], None] | None = None,
) -> GameResult:
    """Play ``spec`` to the end and return its result; write its record to ``record_path`` when given.

    ``seats`` defaults to ``make_seats(spec, pool)``; pass one ``pool`` to every game so each bot address keeps
    one channel (without one, a pool is made and closed for this game). ``prefer`` ("stream"/"unary") forces a
    transport the bots offer. ``salt`` defaults to 16 random bytes. ``on_decision`` sees each decision's record
    as it is written (progress, live watching); it must not block.
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
        game = _Game(spec, list(seats), Path(record_path) if record_path is not None else None, salt)
        game.on_decision = on_decision
        return await game.run()
    finally:
        if own_pool is not None:
            await own_pool.close()


class _Game:
    def __init__(self, spec: GameSpec, seats: list[Seat], record_path: Path | None, salt: bytes | None) -> None:
        self.spec = spec
        self.seats = seats
        self.n = len(seats)
        self.record_path = record_path
        self.salt = salt if salt is not None else new_salt()
        self.deck = deck_from_seed(spec.seed)
        tc = spec.time_control
        self.bank_ms = [tc.bank_ms] * self.n
        self.strikes = [0] * self.n
        self.retired = [False] * self.n
        self.why_retired: list[tuple[int, str] | None] = [None] * self.n  # fault to record on the next decision
        self.stats = [SeatStats() for _ in range(self.n)]
        self.referee_faults = 0
        self.on_decision: Callable[[rec_pb.DecisionRecord], None] | None = None
        self.log = get_logger(game_id=spec.game_id)
        self.seat_logs = [
            self.log.bind(seat=i, bot=e.address or f"builtin:{e.policy}") for i, e in enumerate(spec.entrants)
        ]

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
                self._retire(i, UNREACHABLE, f"could not connect: {e!r}")

        await asyncio.gather(*(connect(i) for i in range(self.n)))
        tc = spec.time_control
        players = [pb.Player(seat=i, name=e.name, version=self.seats[i].version) for i, e in enumerate(spec.entrants)]
        common: dict[str, Any] = dict(  # GameStart's fields but the seat
            game_id=spec.game_id,
            players=players,
            options=options_pb(spec.options),
            time_control=pb.TimeControl(decision_ms=tc.decision_ms, bank_ms=tc.bank_ms, grace_ms=tc.grace_ms),
            start_seat=spec.start_seat,
            rules_version=RULES_VERSION,
            deck_commitment=commitment(self.salt, self.deck),
        )

        async def start(i: int) -> None:
            if self.retired[i]:
                return
            try:
                await self.seats[i].start(bot_pb.GameStart(seat=i, **common))
            except SeatError as e:
                self._retire(i, e.fault, e.detail)
            except Exception as e:  # e.g. a built-in policy's bug: it costs that seat, not the game
                self._retire(i, UNREACHABLE, f"could not start: {e!r}")

        await asyncio.gather(*(start(i) for i in range(self.n)))

    def _header(self) -> rec_pb.RecordHeader:
        spec, tc = self.spec, self.spec.time_control
        return rec_pb.RecordHeader(
            format_version=FORMAT_VERSION,
            rules_version=RULES_VERSION,
            game_id=spec.game_id,
            tournament_id=spec.tournament_id,
            options=options_pb(spec.options),
            players=[
                rec_pb.PlayerRecord(
                    seat=i,
                    name=e.name,
                    version=s.version,
                    author=s.author,
                    address=s.address,
                    kind=s.kind,
                    transport=s.transport,
                )
                for i, (e, s) in enumerate(zip(spec.entrants, self.seats, strict=True))
            ],
            time_control=pb.TimeControl(decision_ms=tc.decision_ms, bank_ms=tc.bank_ms, grace_ms=tc.grace_ms),
            seed=spec.seed,
            deck=self.deck,
            start_seat=spec.start_seat,
            commitment=commitment(self.salt, self.deck),
            max_strikes=spec.max_strikes,
            started_at=utc_now(),
        )

    def _check(self, answer: Answer, legal: tuple) -> tuple[int, int, str]:
        """(index, fault, detail) for a seat's answer: the index into ``legal`` when the reply names a legal
        action, else fault INVALID saying why (or the seat's own fault)."""
        if answer.reply is None:
            return -1, answer.fault, answer.detail
        reply = answer.reply
        which = reply.WhichOneof("decision")
        if which == "index":
            if reply.index < len(legal):
                return reply.index, 0, ""
            return -1, INVALID, f"index {reply.index} is out of range: {len(legal)} legal actions"
        if which == "action":
            try:
                action = action_from_pb(reply.action)
            except WireError as e:
                return -1, INVALID, f"the reply's action names no action: {e}"
            try:
                return legal.index(action), 0, ""
            except ValueError:
                return -1, INVALID, f"{action!r} is not a legal action here"
        if reply.error:  # the bot says why it could not decide (bot.proto DecisionReply.error)
            return -1, INVALID, f"the bot raised {bot_error_words(reply.error)}"
        return -1, INVALID, "the reply holds neither an index nor an action"

    async def run(self) -> GameResult:
        spec, tc, seats, n = self.spec, self.spec.time_control, self.seats, self.n
        monitor = lag_monitor()
        writer: RecordWriter | None = None
        log: list = []  # every event so far, unredacted
        since = [0] * n  # per seat: how much of ``log`` its last request carried
        fallback_only = [isinstance(s, BuiltinSeat) and s.session is None for s in seats]
        decision_s, grace_s = tc.decision_ms / 1000, tc.grace_ms / 1000
        seq = 0
        try:
            # Inside the try: once a seat's stream is open, every way out of here must close it.
            await self._open()
            writer = RecordWriter(self.record_path, self._header()) if self.record_path is not None else None
            state = new_game(self.deck, n, spec.options, spec.start_seat)
            while not state.over:
                seat = state.seat
                seq += 1
                legal = state.legal
                bot_us = transport_us = 0
                fault, detail, retired_now = 0, "", False
                if self.retired[seat]:
                    index, chosen_by = fallback_index(state), rec_pb.CHOOSER_FALLBACK
                    fault, detail = RETIRED, "the seat has retired; the fallback plays it"
                    if self.why_retired[seat] is not None:  # the first decision after retiring names why
                        fault, detail = self.why_retired[seat]  # type: ignore[misc]
                        self.why_retired[seat] = None
                        faults = self.stats[seat].faults
                        faults[fault_name(fault)] = faults.get(fault_name(fault), 0) + 1
                        retired_now = True
                elif fallback_only[seat]:
                    index, chosen_by = fallback_index(state), rec_pb.CHOOSER_BOT
                else:
                    bank = self.bank_ms[seat]
                    request = decision_request_bytes(state, spec.game_id, seq, log[since[seat] :], tc.decision_ms, bank)
                    since[seat] = len(log)
                    t0 = time.perf_counter()
                    answer = await seats[seat].decide(request, seq, decision_s + bank / 1000 + grace_s)
                    bot_us, transport_us = answer.bot_us, answer.transport_us
                    index, fault, detail = self._check(answer, legal)
                    over_ms = bot_us // 1000 - tc.decision_ms
                    if fault == TIMEOUT and not answer.fatal:  # a fatal one already allowed for the stalls
                        stall = monitor.worst_since(t0)
                        if stall * 1000 >= max(tc.grace_ms, 20):
                            fault = REFEREE
                            detail = f"the referee's event loop stalled {stall * 1000:.0f} ms ({detail})"
                        else:
                            self.bank_ms[seat] = 0
                    elif over_ms > 0:
                        # The referee's own lateness in reading the reply is not the bot's time (clock.py).
                        over_ms -= int(monitor.worst_since(t0) * 1000)
                        if over_ms > 0:
                            self.bank_ms[seat] = max(0, bank - over_ms)
                    if fault:
                        chosen_by = rec_pb.CHOOSER_FALLBACK
                        index = fallback_index(state)
                        slog = self.seat_logs[seat]
                        if fault == REFEREE:
                            self.referee_faults += 1
                            slog.warning("referee fault", seq=seq, detail=detail)
                        else:
                            self.strikes[seat] += 1
                            faults = self.stats[seat].faults
                            name = fault_name(fault)
                            faults[name] = faults.get(name, 0) + 1
                            if not self.stats[seat].first_fault:
                                self.stats[seat].first_fault = f"{name} at decision {seq}: {detail}"
                            slog.warning("fault", seq=seq, fault=name, detail=detail, strikes=self.strikes[seat])
                            if answer.fatal or self.strikes[seat] >= spec.max_strikes:
                                retired_now = True
                                self._retire(seat, fault, detail)
                                self.why_retired[seat] = None
                    else:
                        chosen_by = rec_pb.CHOOSER_BOT
                        self.stats[seat].decision_us.append(bot_us)
                action = legal[index]
                kind = state.kind
                assert kind is not None  # the game goes on
                state, events = apply(state, action)
                log.extend(events)
                if writer is not None or self.on_decision is not None:
                    record = decision_record_bytes(seq, seat, kind, index, action, chosen_by, fault, detail, bot_us,
                                                   transport_us, self.bank_ms[seat], events, retired_now)  # fmt: skip
                    if writer is not None:
                        writer.decision(record)
                    if self.on_decision is not None:
                        self.on_decision(rec_pb.DecisionRecord.FromString(record))
                if retired_now:
                    await seats[seat].finish(None)
            retired = {i for i in range(n) if self.retired[i]}
            final = scores(state)
            places = placings(final, [state.hand_size(i) for i in range(n)], retired)
            final_digest = digest(state)
            reason, end_reason = end_reason_pb(state), state.end_reason
            assert end_reason is not None  # the loop ran until the game ended
            if writer is not None:
                # In a thread: finish fsyncs, which takes milliseconds that every other game on this loop would wait.
                await asyncio.to_thread(
                    writer.finish,
                    rec_pb.RecordFooter(
                        reason=reason,
                        scores=final,
                        places=places,
                        retired=sorted(retired),
                        final_digest=final_digest,
                        salt=self.salt,
                        finished_at=utc_now(),
                    ),
                )
        except BaseException:
            if writer is not None:
                writer.close()  # an incomplete record: no footer
            await asyncio.gather(*(s.finish(None) for s in seats), return_exceptions=True)
            raise

        def notice(i: int) -> bot_pb.GameOverNotice | None:
            if i in retired:
                return None
            return bot_pb.GameOverNotice(
                game_id=spec.game_id,
                seat=i,
                reason=reason,
                scores=final,
                places=places,
                events=[event_pb(event_for(e, i)) for e in log[since[i] :]],
                deck=self.deck if spec.reveal_deal else (),
                salt=self.salt if spec.reveal_deal else b"",
                deck_commitment=commitment(self.salt, self.deck),
            )

        await asyncio.gather(*(s.finish(notice(i)) for i, s in enumerate(seats)), return_exceptions=True)
        self.log.debug("game over", decisions=seq, scores=list(final), places=list(places), retired=sorted(retired),
                      referee_faults=self.referee_faults)  # fmt: skip
        return GameResult(
            game_id=spec.game_id,
            scores=final,
            places=places,
            end_reason=end_reason,
            seats=self.stats,
            decisions=seq,
            final_digest=final_digest,
            record_path=self.record_path,
            referee_faults=self.referee_faults,
        )
