"""The sign-in throttle on a clock the test sets: its window, its two keys, and what a refusal says."""

from __future__ import annotations

import pytest

from referee.service import throttle as throttle_module
from referee.service.throttle import SignInThrottle, Throttled, address_of, token_key


def test_failures_past_the_limit_refuse_the_address_until_the_window_ends() -> None:
    now = [100.0]
    throttle = SignInThrottle(limit=2, window_s=60, clock=lambda: now[0])
    throttle.check("10.0.0.1", "a-token")
    throttle.failed("10.0.0.1", "one-token")
    throttle.failed("10.0.0.1", "two-token")
    now[0] = 130.0
    with pytest.raises(Throttled, match="from this address: try again in 30 s") as e:
        throttle.check("10.0.0.1", "right-token")
    assert e.value.retry_after_s == 30
    throttle.check("10.0.0.2", "right-token")  # another address
    now[0] = 160.0  # the window that began at the first failure is over
    throttle.check("10.0.0.1", "right-token")


def test_one_token_failing_from_many_addresses_is_refused_everywhere() -> None:
    throttle = SignInThrottle(limit=3, window_s=60, clock=lambda: 0.0)
    for i in range(3):
        throttle.failed(f"10.0.0.{i}", "guessed-token")
    with pytest.raises(Throttled, match="with this token"):
        throttle.check("10.0.0.99", "guessed-token")
    throttle.check("10.0.0.99", "other-token")


@pytest.mark.parametrize(
    ("peer", "address"),
    [("ipv4:127.0.0.1:5555", "127.0.0.1"), ("ipv6:[::1]:5555", "::1"), ("unix:/tmp/s", "unix:/tmp/s")],
)
def test_a_grpc_peer_is_counted_by_its_address_without_the_port(peer: str, address: str) -> None:
    assert address_of(peer) == address


def test_the_limit_is_exact_and_a_new_window_starts_from_nothing() -> None:
    now = [0.0]
    throttle = SignInThrottle(limit=3, window_s=60, clock=lambda: now[0])
    for _ in range(2):
        throttle.failed("10.0.0.1", "wrong-token")
    throttle.check("10.0.0.1", "right-token")  # two failures of three allowed
    throttle.failed("10.0.0.1", "wrong-token")
    now[0] = 59.5
    with pytest.raises(Throttled) as e:
        throttle.check("10.0.0.1", "right-token")
    assert str(e.value) == "too many failed sign-ins from this address: try again in 1 s" and e.value.retry_after_s == 1
    now[0] = 60.0  # a new window: its first failures count from zero
    for _ in range(2):
        throttle.failed("10.0.0.1", "wrong-token")
    throttle.check("10.0.0.1", "right-token")


def test_a_refusal_names_the_token_when_the_token_is_what_failed() -> None:
    throttle = SignInThrottle(limit=1, window_s=60, clock=lambda: 0.0)
    throttle.failed("10.0.0.1", "guessed-token")
    with pytest.raises(Throttled) as e:
        throttle.check("10.0.0.2", "guessed-token")
    assert str(e.value) == "too many failed sign-ins with this token: try again in 60 s"


def test_beyond_max_keys_the_oldest_windows_are_forgotten(monkeypatch) -> None:
    monkeypatch.setattr(throttle_module, "MAX_KEYS", 4)
    throttle = SignInThrottle(limit=1, window_s=60, clock=lambda: 0.0)
    for address in ("a1", "a2", "a3"):  # 4 keys: three addresses and the one token
        throttle.failed(address, "guessed-token")
    with pytest.raises(Throttled):
        throttle.check("a1", "other-token")  # all 4 kept
    throttle.failed("a4", "guessed-token")  # a fifth key: a1's window, the oldest, goes
    throttle.check("a1", "other-token")
    for address in ("a2", "a3", "a4"):
        with pytest.raises(Throttled):
            throttle.check(address, "other-token")


def test_any_text_has_a_key_even_one_no_encoding_takes() -> None:
    assert token_key("\ud800") != token_key("\ud801")  # a lone surrogate, as no form or header gives
    assert token_key("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
