"""The referee's errors: one hierarchy for everything it refuses or cannot do.

A ``RefereeError`` carries the gRPC status the service answers with and the exit code the ``abluxx`` command exits
with (docs/cli.md: 1, the command ran and what it found is a failure or is not there; 2, the request itself is
wrong and nothing was done; 130, interrupted). Each kind is one subclass; the service maps them to a status in one
place (``service/server.py``'s handlers) and the CLI to an exit code in one place (``cli.main``). The message is
for the person who asked, so it names the problem and never holds a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

from grpc import StatusCode


class RefereeError(Exception):
    """Something the referee cannot do; the message says what and why. A kind names its status (and its exit
    code, 1 unless said) in its class line: ``class BadInput(RefereeError, status=..., exit_code=2)``."""

    status: StatusCode = StatusCode.INTERNAL
    exit_code: int = 1
    # True where the message may name the referee's own files, folders or bot addresses: fine for the CLI's user,
    # who owns them; the service logs it and tells a remote caller only the status (docs/service.md#errors)
    local: bool = False

    def __init_subclass__(cls, status: StatusCode | None = None, exit_code: int | None = None) -> None:
        super().__init_subclass__()
        if status is not None:
            cls.status = status
        if exit_code is not None:
            cls.exit_code = exit_code

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadInput(RefereeError, status=StatusCode.INVALID_ARGUMENT, exit_code=2):
    """The request itself is wrong (a flag, an argument, a file's content): nothing was done."""


class NotFound(RefereeError, status=StatusCode.NOT_FOUND):
    """What was asked for is not there."""


class AlreadyExists(RefereeError, status=StatusCode.ALREADY_EXISTS):
    """What a call would make is there already."""


class Unauthenticated(RefereeError, status=StatusCode.UNAUTHENTICATED):
    """No token, or one that is malformed or unknown."""


class Denied(RefereeError, status=StatusCode.PERMISSION_DENIED):
    """A caller with a valid token asked for what it may not do."""


class Precondition(RefereeError, status=StatusCode.FAILED_PRECONDITION):
    """The object's state forbids it (a finished tournament, an unreachable bot, a deal still in play)."""


class Busy(RefereeError, status=StatusCode.ABORTED):
    """The same thing is under way in another call; try again once it is done."""


class Exhausted(RefereeError, status=StatusCode.RESOURCE_EXHAUSTED):
    """A limit is reached (docs/security.md)."""


class Unavailable(RefereeError, status=StatusCode.UNAVAILABLE):
    """The service is shutting down, or cannot be reached."""


class DataLoss(RefereeError, status=StatusCode.DATA_LOSS, exit_code=2):
    """Stored data, or a file given, cannot be read: it is damaged, cut off or not what it claims."""


class GameLost(Unavailable):
    """A game stopped before its end by something not its bots' doing (its worker died): its deal is void, and its
    duplicate set is dealt again with a fresh deck (tournament/redeal.py)."""


class SeatsAbsent(Unavailable):
    """A game that did not start because some of its seats' bots could not be reached (no connection, no Hello):
    no seat was sent anything of its deal. A ladder seats the others again and counts the absent as down."""

    def __init__(self, absent: dict[str, str]) -> None:
        super().__init__("absent at the start: " + "; ".join(f"{n}: {why}" for n, why in absent.items()))
        self.absent = absent  # name -> why

    def __reduce__(self) -> tuple[type, tuple[dict[str, str]]]:  # crosses to the coordinator from a worker
        return (SeatsAbsent, (self.absent,))


class Interrupted(RefereeError, status=StatusCode.CANCELLED, exit_code=130):
    """Stopped by the user (Ctrl-C)."""


class NoTournament(NotFound):
    """No tournament by the id (or name) asked for; the same words wherever one is looked up."""

    def __init__(self, wanted: str, where: str, latest: Sequence[str] = ()) -> None:
        shown = f" (the latest: {', '.join(latest[-5:])})" if latest else ""
        super().__init__(f"no tournament {wanted!r} {where}{shown}")


# Every kind a client may be told, by its status (not Interrupted: a call the server cancelled was not stopped by
# the user, and not the base, INTERNAL).
_KINDS = (BadInput, NotFound, AlreadyExists, Unauthenticated, Denied, Precondition, Busy, Exhausted, Unavailable)
_BY_STATUS = {kind.status: kind for kind in (*_KINDS, DataLoss)}


def from_status(status: StatusCode, message: str) -> RefereeError:
    """The error a service call ended with, as the kind its status names (a client's view of ``status``)."""
    return _BY_STATUS.get(status, RefereeError)(message)
