"""Who is calling (referee/service/auth.py), called in this process so that mutation testing sees it
(scripts/mutation.py); test_auth.py checks the same over real gRPC through a spawned server. A token names its
principal (organisers numbered when there are several), a malformed header or an unknown token is refused with words
that say what to send, unknown tokens are throttled, a token dropped from the settings is revoked at once, and each
kind of call asks for what it needs."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from referee.errors import Denied, Unauthenticated
from referee.service.auth import Auth, Principal
from referee.service.settings import Settings
from referee.service.throttle import Throttled, token_key

pytestmark = pytest.mark.usefixtures("every_log_level")  # tests/conftest.py: capture_logs sees info events

ORG, ORG2, ALICE_T, BOB_T = "organiser-token-1", "organiser-token-2", "alice-token-1", "bob-token-11"


def _auth(organisers=(ORG,), authors=None, **fields) -> Auth:
    authors = {"alice": ALICE_T, "bob": BOB_T} if authors is None else authors
    return Auth(Settings(organiser_tokens=tuple(organisers), author_tokens=authors, **fields))


class Context:
    """What Auth reads of a gRPC call's context: its metadata and peer."""

    def __init__(self, metadata=(), peer: str = "ipv4:10.1.2.3:5555") -> None:
        self.metadata, self._peer = list(metadata), peer

    def invocation_metadata(self):
        return self.metadata

    def peer(self) -> str:
        return self._peer


def bearer(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def test_each_token_names_its_principal() -> None:
    auth = _auth()
    assert auth.who(bearer(ORG)) == Principal("organiser", True)
    assert auth.who(bearer(ALICE_T)) == Principal("alice", False)
    assert auth.who(bearer(BOB_T)) == Principal("bob", False)
    several = _auth(organisers=(ORG, ORG2))
    assert several.who(bearer(ORG)) == Principal("organiser1", True)
    assert several.who(bearer(ORG2)) == Principal("organiser2", True)
    assert auth.known() == {token_key(t) for t in (ORG, ALICE_T, BOB_T)}


def test_the_header_is_read_in_any_case_as_text_or_bytes_first_one_first() -> None:
    auth = _auth()
    assert auth.who([("x-other", "Bearer nothing"), ("Authorization", f"BEARER {ALICE_T}")]).name == "alice"
    assert auth.who([("authorization", f"Bearer {BOB_T}".encode("latin-1"))]).name == "bob"
    assert auth.who([("authorization", f"bearer   {BOB_T}  ")]).name == "bob"
    assert auth.who([("authorization", f"Bearer {ALICE_T}"), ("authorization", f"Bearer {BOB_T}")]).name == "alice"
    assert auth.who([]) is None and auth.who(None) is None and auth.who([("x-other", "v")]) is None


@pytest.mark.parametrize("value", [f"Basic {ALICE_T}", "Bearer ", "Bearer    ", ALICE_T, f"Token {ALICE_T}"])
def test_a_malformed_header_says_what_to_send(value: str) -> None:
    with pytest.raises(Unauthenticated) as refused:
        _auth().who([("authorization", value)])
    assert refused.value.message == "the authorization metadata must be 'Bearer <token>'"


def test_an_unknown_token_is_refused_and_counted_until_the_address_is_throttled() -> None:
    auth = _auth(max_failed_signins=2, signin_window_s=60)
    for _ in range(2):
        with pytest.raises(Unauthenticated) as refused:
            auth.who(bearer("not-a-token-at-all"), "10.9.9.9")
        assert refused.value.message == "unknown token"
    assert auth.who(bearer(ALICE_T), "10.8.8.8").name == "alice"  # another address: its own count
    with pytest.raises(Throttled, match="from this address"):
        auth.who(bearer(ALICE_T), "10.9.9.9")  # the right token too, from the throttled address
    assert auth.who(bearer(BOB_T), "10.8.8.8").name == "bob"  # a known token is no failure


def test_a_token_that_is_a_prefix_or_an_extension_of_a_known_one_is_unknown() -> None:
    auth = _auth()
    for token in (ALICE_T[:-1], ALICE_T + "x", ALICE_T.upper(), "é-not-ascii-token", "\udcff-surrogate-token"):
        with pytest.raises(Unauthenticated, match="unknown token"):
            auth.token(token, "10.0.0.1")


def test_replace_revokes_a_token_gone_from_the_settings_and_takes_open_reads() -> None:
    auth = _auth()
    auth.replace(Settings(organiser_tokens=(ORG2,), author_tokens={"bob": BOB_T}, open_reads=False))
    for gone in (ORG, ALICE_T):
        with pytest.raises(Unauthenticated, match="unknown token"):
            auth.who(bearer(gone))
    assert auth.who(bearer(ORG2)) == Principal("organiser", True)
    assert auth.known() == {token_key(ORG2), token_key(BOB_T)}
    assert auth.open_reads is False


def test_a_call_without_a_token_is_refused_with_how_to_send_one() -> None:
    with pytest.raises(Unauthenticated) as refused:
        _auth().caller(Context())
    assert refused.value.message == "this call needs a token: send 'authorization: Bearer <token>' metadata"
    assert _auth().caller(Context(bearer(ALICE_T))) == Principal("alice", False)


def test_a_refused_token_is_logged_with_the_callers_address_never_the_token() -> None:
    auth = _auth(max_failed_signins=1)
    with capture_logs() as logs, pytest.raises(Unauthenticated):
        auth.caller(Context(bearer("wrong-token-here"), peer="ipv4:10.1.2.3:5555"))
    (entry,) = [e for e in logs if e["event"] == "token refused"]
    assert entry["peer"] == "ipv4:10.1.2.3:5555" and entry["reason"] == "unknown token"
    assert entry["log_level"] == "warning" and entry["service"] == "referee" and "wrong-token-here" not in repr(logs)
    with pytest.raises(Throttled, match="from this address"):  # the peer's address, without its port, was counted
        auth.caller(Context(bearer(ALICE_T), peer="ipv4:10.1.2.3:6666"))
    assert auth.caller(Context(bearer(ALICE_T), peer="ipv4:10.4.4.4:5555")).name == "alice"  # another address


def test_only_an_organiser_may_do_what_organisers_do() -> None:
    auth = _auth()
    assert auth.organiser(Context(bearer(ORG)), "create tournaments") == Principal("organiser", True)
    with pytest.raises(Denied) as denied:
        auth.organiser(Context(bearer(ALICE_T)), "create tournaments")
    assert denied.value.message == "only an organiser may create tournaments"
    with pytest.raises(Unauthenticated, match="needs a token"):
        auth.organiser(Context(), "create tournaments")


def test_reads_are_open_to_anyone_unless_closed_and_a_given_token_is_still_checked() -> None:
    open_ = _auth()
    assert open_.reader(Context()) is None
    assert open_.reader(Context(bearer(BOB_T))) == Principal("bob", False)
    with pytest.raises(Unauthenticated, match="unknown token"):
        open_.reader(Context(bearer("wrong-token-here")))
    closed = _auth(open_reads=False)
    with pytest.raises(Unauthenticated, match="needs a token"):
        closed.reader(Context())
    assert closed.reader(Context(bearer(BOB_T))) == Principal("bob", False)
