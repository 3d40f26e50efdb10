"""The error kinds (referee/errors.py): the gRPC status each is answered with and the exit code the CLI exits with
(docs/cli.md: 1, 2 for a wrong request or unreadable data, 130 interrupted), and a client's view of a status."""

from __future__ import annotations

import pytest
from grpc import StatusCode

from referee.errors import (
    AlreadyExists,
    BadInput,
    Busy,
    DataLoss,
    Denied,
    Exhausted,
    Interrupted,
    NotFound,
    NoTournament,
    Precondition,
    RefereeError,
    Unauthenticated,
    Unavailable,
    from_status,
)

KINDS = [
    (BadInput, StatusCode.INVALID_ARGUMENT, 2),
    (NotFound, StatusCode.NOT_FOUND, 1),
    (AlreadyExists, StatusCode.ALREADY_EXISTS, 1),
    (Unauthenticated, StatusCode.UNAUTHENTICATED, 1),
    (Denied, StatusCode.PERMISSION_DENIED, 1),
    (Precondition, StatusCode.FAILED_PRECONDITION, 1),
    (Busy, StatusCode.ABORTED, 1),
    (Exhausted, StatusCode.RESOURCE_EXHAUSTED, 1),
    (Unavailable, StatusCode.UNAVAILABLE, 1),
    (DataLoss, StatusCode.DATA_LOSS, 2),
]


@pytest.mark.parametrize(("kind", "status", "exit_code"), KINDS, ids=[k.__name__ for k, _, _ in KINDS])
def test_each_kind_has_its_status_and_exit_code_and_a_client_gets_the_same_kind_back(kind, status, exit_code):
    e = kind("what went wrong")
    assert (e.status, e.exit_code, e.message, str(e), e.local) == (status, exit_code, "what went wrong",
                                                                    "what went wrong", False)  # fmt: skip
    back = from_status(status, "told")
    assert type(back) is kind and back.message == "told" and back.exit_code == exit_code


def test_the_base_interrupted_and_unknown_statuses() -> None:
    base = RefereeError("x")
    assert (base.status, base.exit_code) == (StatusCode.INTERNAL, 1)
    assert (Interrupted("x").status, Interrupted("x").exit_code) == (StatusCode.CANCELLED, 130)
    # a call the server cancelled was not stopped by the user: exit 1, not 130; INTERNAL and others are the base
    for status in (StatusCode.CANCELLED, StatusCode.INTERNAL, StatusCode.UNKNOWN, StatusCode.DEADLINE_EXCEEDED):
        e = from_status(status, "m")
        assert type(e) is RefereeError and e.exit_code == 1 and e.message == "m"


def test_a_kind_without_its_own_status_keeps_its_parents() -> None:
    class Sub(BadInput):
        pass

    class Own(BadInput, exit_code=5):
        pass

    class Kind(RefereeError, status=StatusCode.ABORTED):
        pass

    assert (Sub.status, Sub.exit_code) == (StatusCode.INVALID_ARGUMENT, 2)
    assert (Own.status, Own.exit_code) == (StatusCode.INVALID_ARGUMENT, 5)
    assert (Kind.status, Kind.exit_code) == (StatusCode.ABORTED, 1)
    assert (BadInput.status, BadInput.exit_code) == (StatusCode.INVALID_ARGUMENT, 2)  # the parent is untouched


def test_no_tournament_names_what_was_wanted_and_the_latest_five() -> None:
    e = NoTournament("cup", "in d")
    assert isinstance(e, NotFound) and e.status == StatusCode.NOT_FOUND and e.exit_code == 1
    assert e.message == "no tournament 'cup' in d"
    latest = [f"t{i}" for i in range(7)]
    assert NoTournament("cup", "here", latest).message == "no tournament 'cup' here (the latest: t2, t3, t4, t5, t6)"
