"""The sign-in throttle on a clock the test sets: its window, its two keys, and what a refusal says."""

from __future__ import annotations

import pytest

from referee.service.throttle import SignInThrottle, Throttled, address_of


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
