"""Engine objects to and from their protobuf messages (proto/abluxxen/v1/game.proto): ``*_pb`` build messages;
``*_from_pb`` read them and raise ``WireError`` on bad input."""

from __future__ import annotations

from collections.abc import Sequence

from referee.engine import (
    JOKER,
    Abluxxed,
    Action,
    Choice,
    Declined,
    Discarded,
    Draw,
    Drew,
    EndReason,
    Event,
    GameOver,
    Group,
    Kind,
    Options,
    Played,
    Reclaimed,
    Refilled,
    Skipped,
    State,
    Taken,
    TurnStarted,
    View,
    cards_of,
    event_for,
    view,
)
from referee.engine.cache import TRACKED_MAX, remember
from referee.proto.abluxxen.v1 import bot_pb2 as bot_pb
from referee.proto.abluxxen.v1 import game_pb2 as pb


class WireError(ValueError):
    """A message that does not describe a valid game object."""


KIND_PB = {
    Kind.PLAY: pb.DECISION_KIND_PLAY,
    Kind.TAKE_OR_DECLINE: pb.DECISION_KIND_TAKE_OR_DECLINE,
    Kind.RECLAIM_OR_DISCARD: pb.DECISION_KIND_RECLAIM_OR_DISCARD,
    Kind.DRAW: pb.DECISION_KIND_DRAW,
    Kind.DRAW_ONE: pb.DECISION_KIND_DRAW_ONE,
}
KIND_FROM_PB = {v: k for k, v in KIND_PB.items()}
CHOICE_PB = {
    Choice.TAKE: pb.CHOICE_TAKE,
    Choice.DECLINE: pb.CHOICE_DECLINE,
    Choice.RECLAIM: pb.CHOICE_RECLAIM,
    Choice.DISCARD: pb.CHOICE_DISCARD,
    Choice.SKIP: pb.CHOICE_SKIP,
}
CHOICE_FROM_PB = {v: k for k, v in CHOICE_PB.items()}
END_PB = {
    EndReason.EMPTY_HAND: pb.END_REASON_EMPTY_HAND,
    EndReason.EXHAUSTED: pb.END_REASON_EXHAUSTED,
    EndReason.PILE_EMPTY: pb.END_REASON_PILE_EMPTY,
}
END_FROM_PB = {v: k for k, v in END_PB.items()}


def group_pb(g: Group) -> pb.Group:
    return pb.Group(value=g.value, numbers=g.numbers, jokers=g.jokers)


def group_from_pb(m: pb.Group) -> Group:
    return Group(m.value, m.numbers, m.jokers)


_ACTION_CACHE: dict[Action, pb.Action] = {}  # every action object is one of the engine's few shared ones


def action_pb(a: Action) -> pb.Action:
    """The message for ``a``. Cached: callers copy it into a parent message and never change it."""
    m = _ACTION_CACHE.get(a)
    if m is None:
        if isinstance(a, Group):
            m = pb.Action(play=group_pb(a))
        elif isinstance(a, Draw):
            if a.card is None:
                m = pb.Action(draw=pb.Draw(source=pb.DRAW_SOURCE_PILE))
            else:
                m = pb.Action(draw=pb.Draw(source=pb.DRAW_SOURCE_MARKET, card=a.card))
        else:
            m = pb.Action(choice=CHOICE_PB[a])
        _ACTION_CACHE[a] = m
    return m


def action_from_pb(m: pb.Action) -> Action:
    """The engine action ``m`` names, whether or not it is legal now. WireError if it names none."""
    which = m.WhichOneof("action")
    if which == "play":
        return group_from_pb(m.play)
    if which == "draw":
        if m.draw.source == pb.DRAW_SOURCE_PILE:
            return Draw(None)
        if m.draw.source == pb.DRAW_SOURCE_MARKET:
            if not 1 <= m.draw.card <= JOKER:
                raise WireError(f"draw from the market names card {m.draw.card}; cards are 1 to 14")
            return Draw(m.draw.card)
        raise WireError("draw has no source: set DRAW_SOURCE_MARKET or DRAW_SOURCE_PILE")
    if which == "choice":
        if m.choice not in CHOICE_FROM_PB:
            raise WireError(f"unknown choice {m.choice}")
        return CHOICE_FROM_PB[m.choice]
    raise WireError("action is empty: set one of play, draw, choice")


MAX_BOT_ERROR_CHARS = 200  # bot.proto DecisionReply.error: the part of a bot's own error text the record keeps


class ReplyError(ValueError):
    """A DecisionReply that names no legal action, with the reason (the record's fault detail)."""


def bot_error_words(error: str) -> str:
    """A bot's error text as the record keeps it: one line of printable characters, at most MAX_BOT_ERROR_CHARS."""
    words = "".join(c if c.isprintable() else " " for c in error[:MAX_BOT_ERROR_CHARS])
    return words + ("…" if len(error) > MAX_BOT_ERROR_CHARS else "")


def reply_index(reply: bot_pb.DecisionReply, legal: Sequence[Action]) -> int:
    """The index into ``legal`` of the action ``reply`` names (by its index or as the action itself), or ReplyError
    saying why it names none. The match runner and the bot kit's local game judge replies with this one function."""
    which = reply.WhichOneof("decision")
    if which == "index":
        if reply.index < len(legal):
            return reply.index
        raise ReplyError(f"index {reply.index} is out of range: {len(legal)} legal actions")
    if which == "action":
        try:
            action = action_from_pb(reply.action)
        except WireError as e:
            raise ReplyError(f"the reply's action names no action: {e}") from None
        try:
            return legal.index(action)
        except ValueError:
            raise ReplyError(f"{action!r} is not a legal action here") from None
    if reply.error:  # the bot says why it could not decide (bot.proto DecisionReply.error)
        raise ReplyError(f"the bot raised {bot_error_words(reply.error)}")
    raise ReplyError("the reply holds neither an index nor an action")


def options_pb(o: Options) -> pb.Options:
    return pb.Options(draw_one=o.draw_one, end_on_empty_pile=o.end_on_empty_pile)


def options_from_pb(m: pb.Options) -> Options:
    return Options(draw_one=m.draw_one, end_on_empty_pile=m.end_on_empty_pile)


def event_pb(e: Event) -> pb.Event:
    """The message for ``e`` (already redacted for its reader with ``event_for``)."""
    if type(e) is TurnStarted:
        return pb.Event(turn_started=pb.TurnStarted(seat=e.seat, turn=e.turn))
    if type(e) is Played:
        return pb.Event(played=pb.Played(seat=e.seat, group=group_pb(e.group)))
    if type(e) is Drew:
        return pb.Event(drew=pb.Drew(seat=e.seat, card=e.card or 0, from_market=e.from_market))
    if type(e) is Refilled:
        return pb.Event(refilled=pb.Refilled(cards=e.cards))
    if type(e) is Abluxxed:
        return pb.Event(abluxxed=pb.Abluxxed(seat=e.seat, victim=e.victim, group=group_pb(e.group)))
    if type(e) is Taken:
        return pb.Event(taken=pb.Taken(seat=e.seat, victim=e.victim, group=group_pb(e.group)))
    if type(e) is Declined:
        return pb.Event(declined=pb.Declined(seat=e.seat, victim=e.victim))
    if type(e) is Reclaimed:
        return pb.Event(reclaimed=pb.Reclaimed(seat=e.seat, group=group_pb(e.group)))
    if type(e) is Discarded:
        return pb.Event(discarded=pb.Discarded(seat=e.seat, group=group_pb(e.group)))
    if type(e) is Skipped:
        return pb.Event(skipped=pb.Skipped(seat=e.seat))
    if type(e) is GameOver:
        return pb.Event(game_ended=pb.GameEnded(reason=END_PB[e.reason], scores=e.scores))
    raise TypeError(f"not an event: {e!r}")


_EVENT_CACHE: dict[Event, pb.Event] = {}


def event_pb_shared(e: Event) -> pb.Event:
    """``event_pb(e)``, cached like ``action_pb``: callers copy it into a parent message and never change it."""
    m = _EVENT_CACHE.get(e)  # events compare by type: Taken(1, 2, g) != Abluxxed(1, 2, g)
    return m if m is not None else remember(_EVENT_CACHE, e, event_pb(e), TRACKED_MAX)


def event_from_pb(m: pb.Event) -> Event:
    which = m.WhichOneof("event")
    if which == "turn_started":
        return TurnStarted(m.turn_started.seat, m.turn_started.turn)
    if which == "played":
        return Played(m.played.seat, group_from_pb(m.played.group))
    if which == "drew":
        return Drew(m.drew.seat, m.drew.card or None, m.drew.from_market)
    if which == "refilled":
        return Refilled(tuple(m.refilled.cards))
    if which == "abluxxed":
        return Abluxxed(m.abluxxed.seat, m.abluxxed.victim, group_from_pb(m.abluxxed.group))
    if which == "taken":
        return Taken(m.taken.seat, m.taken.victim, group_from_pb(m.taken.group))
    if which == "declined":
        return Declined(m.declined.seat, m.declined.victim)
    if which == "reclaimed":
        return Reclaimed(m.reclaimed.seat, group_from_pb(m.reclaimed.group))
    if which == "discarded":
        return Discarded(m.discarded.seat, group_from_pb(m.discarded.group))
    if which == "skipped":
        return Skipped(m.skipped.seat)
    if which == "game_ended":
        if m.game_ended.reason not in END_FROM_PB:
            raise WireError(f"unknown end reason {m.game_ended.reason}")
        return GameOver(END_FROM_PB[m.game_ended.reason], tuple(m.game_ended.scores))
    raise WireError("event is empty")


_STACK_CACHE: dict[tuple[Group, ...], pb.Stack] = {}
_CARDS_CACHE: dict[tuple[int, ...], list[int]] = {}


def _stack_pb(st: tuple[Group, ...]) -> pb.Stack:
    """Cached like ``action_pb``: stacks are immutable tuples that many states share, and a view's messages are
    only ever copied into their parent."""
    m = _STACK_CACHE.get(st)
    return m if m is not None else remember(_STACK_CACHE, st, pb.Stack(groups=[group_pb(g) for g in st]), TRACKED_MAX)


def _cards(counts: tuple[int, ...]) -> list[int]:
    cards = _CARDS_CACHE.get(counts)
    return cards if cards is not None else remember(_CARDS_CACHE, counts, cards_of(counts), TRACKED_MAX)


def view_pb(v: View) -> pb.SeatView:
    """A seat's view as a message (the seat must not be None: spectators get events, not requests)."""
    if v.hand is None:
        raise ValueError("a spectator's view has no hand: spectators get events, not requests")
    m = pb.SeatView(
        seat=v.seat,
        turn=v.turn,
        active_seat=v.active,
        hand=_cards(v.hand),
        hand_sizes=v.hand_sizes,
        stacks=[_stack_pb(st) for st in v.stacks],
        market=_cards(v.market),
        discard=_cards(v.discard),
        pile_size=v.pile_size,
        scores=v.scores,
        victim=v.victim,
        to_draw=v.to_draw,
    )
    if v.played is not None:
        m.played.CopyFrom(group_pb(v.played))
    return m


def kind_pb(state: State) -> pb.DecisionKind:
    """The kind of decision ``state`` asks for. ValueError once the game is over."""
    if state.kind is None:
        raise ValueError("the game is over: it asks for no decision")
    return KIND_PB[state.kind]


def end_reason_pb(state: State) -> pb.EndReason:
    """Why the game in ``state`` ended. ValueError while it goes on."""
    if state.end_reason is None:
        raise ValueError("the game is not over: it has no end reason")
    return END_PB[state.end_reason]


def decision_request(
    state: State, game_id: str, seq: int, events: list[Event], decision_ms: int = 0, bank_ms: int = 0
) -> bot_pb.DecisionRequest:
    """The request for the decision ``state`` asks of ``state.seat``.

    ``events`` are the engine's full events since that seat's last request; they are redacted here (R17).
    """
    seat = state.seat
    return bot_pb.DecisionRequest(
        game_id=game_id,
        seat=seat,
        seq=seq,
        kind=kind_pb(state),
        view=view_pb(view(state, seat)),
        events=[event_pb_shared(event_for(e, seat)) for e in events],
        legal_actions=[action_pb(a) for a in state.legal],
        decision_ms=decision_ms,
        bank_ms=bank_ms,
    )
