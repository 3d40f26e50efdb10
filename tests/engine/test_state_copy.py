"""``State._copy``, which ``apply`` starts from, copies every slot: a slot it forgot would be unset in every later
state (an AttributeError at best, a stale value if a default crept in)."""

from __future__ import annotations

from referee.engine import Options, State, apply, deck_from_seed, new_game


def test_a_copy_holds_every_slot_of_the_state_it_copies() -> None:
    for players, options in ((2, Options()), (4, Options(draw_one=True, end_on_empty_pile=True))):
        state = new_game(deck_from_seed(players), players, options)
        while not state.over:
            copy = state._copy()
            assert copy is not state
            for name in State.__slots__:
                assert getattr(copy, name) is getattr(state, name), name
            state, _ = apply(state, state.legal[-1])
