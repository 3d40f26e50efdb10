"""The service's calls on bots (referee/service/entrants.py: submit, list, get, output, retire), called in this
process on a real store with test_organiser_caps.py's stand-in for the gRPC call's context, so that mutation testing
sees them (scripts/mutation.py); test_submit.py, test_caps.py and test_auth.py check the same through a spawned
server. The bots are real processes. What an author sees: each bad request refused naming its field, who may submit
and retire what, the per-author cap and one author to an address (checked again after the validation game, with the
validations in flight counted as the test's gates order them), an unchanged resubmission refused, an upload refused
before it is unpacked, a dial-in bot gone before its check, an accepted bot joining each open ladder, and the pages
of entrants with each version's private details for its owner alone."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from structlog.testing import capture_logs

from referee.errors import BadInput
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records.paths import VALIDATION, record_in
from referee.service import entrants
from referee.service.auth import Principal
from referee.service.entrants import MAX_COMMAND_CHARS, _command
from referee.service.hosted import output_path
from referee.service.server import RefereeService
from referee.service.settings import parse
from referee.store import ladder as ladder_store
from referee.store import open_store
from tests.sandbox.conftest import needs_sandbox

from .helpers import config, start_bot
from .test_organiser_caps import FIRST, HOUSE, Context, Refused
from .test_tournament_calls import serving

pytestmark = pytest.mark.usefixtures("every_log_level")  # tests/conftest.py: capture_logs sees info events

ALICE, BOB = "alice-token-1", "bob-token-11"
BAD, EXISTS, DENIED = (
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.PERMISSION_DENIED,
)
FULL, BUSY, MISSING = grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.ABORTED, grpc.StatusCode.NOT_FOUND
ACTIVE, RETIRED = ref_pb.ENTRANT_STATE_ACTIVE, ref_pb.ENTRANT_STATE_RETIRED


@pytest.fixture(scope="module")
def bot():
    proc = start_bot("greedy")
    yield proc.address
    proc.stop()


def _service(data: Path, per_author: int) -> RefereeService:
    settings = parse({"auth": {"organiser_tokens": [FIRST], "authors": {"alice": ALICE, "bob": BOB}},
                      "service": {"max_bots_per_author": per_author, "spectator_delay_ms": 0},
                      "time_control": {"decision_ms": 700, "bank_ms": 3000, "grace_ms": 100}},
                     "<test>", env={})  # fmt: skip
    return RefereeService(open_store(data), settings)


def _run(tmp_path: Path, body: Callable[[RefereeService], Awaitable[None]], per_author: int = 3) -> None:
    serving(lambda: _service(tmp_path / "data", per_author), body)


def _submit(svc: RefereeService, name: str, address: str, token: str = FIRST, **fields):
    return svc.SubmitBot(ref_pb.SubmitBotRequest(name=name, address=address, **fields), Context(token))


async def _refused(call: Awaitable[object]) -> Refused:
    with pytest.raises(Refused) as refused:
        await call
    return refused.value


async def _entered(svc: RefereeService, name: str, address: str, token: str = FIRST, **fields) -> ref_pb.Entrant:
    out = await _submit(svc, name, address, token, **fields)
    assert out.HasField("entrant"), out
    return out.entrant


def test_a_command_is_split_as_a_shell_would_and_a_bad_one_is_refused() -> None:
    assert _command("python3 'my bot.py' --x") == ("python3", "my bot.py", "--x")
    assert _command("x" * MAX_COMMAND_CHARS) == ("x" * MAX_COMMAND_CHARS,)
    for empty in ("", "   ", "x" * (MAX_COMMAND_CHARS + 1)):
        with pytest.raises(BadInput) as refused:
            _command(empty)
        assert refused.value.message == (
            'command: an upload needs the command that starts the bot (1 to 1000 characters), e.g. "python3 bot.py"'
        )
    with pytest.raises(Exception, match=r"^command: cannot read 'python3 \"bot': No closing quotation$"):
        _command('python3 "bot')


@pytest.mark.parametrize(
    ("fields", "words"),
    [({"name": ""}, "name: must not be empty"), ({"name": "  "}, "name: must not be empty"),
     ({"name": "no spaces"}, "name: 'no spaces' must be 1-40 letters, digits or _.+-"),
     ({"upload": b"x"}, "address: give an address or an upload, not both"),
     ({"address": "localhost"}, "address: "), ({"address": "127.0.0.1:99999"}, "address: "),
     ({"owner": "b b"}, "owner: 'b b' must be 1-40 letters, digits or _.+-"),
     ({"games_at_once": 65}, "games_at_once: 65 is more than 64"),
     ({"address": "dialin:somebot"},
      "address: 'dialin:somebot': a bot dials in through BotGateway.Connect, not SubmitBot"),
     ({"address": "unix:/tmp/x.sock"}, "address: 'unix:/tmp/x.sock': ")],
)  # fmt: skip
def test_a_bad_submission_is_invalid_argument_naming_the_field(tmp_path: Path, fields: dict, words: str) -> None:
    async def body(svc: RefereeService) -> None:
        request = {"name": "ok", "address": "127.0.0.1:5000", **fields}
        r = await _refused(_submit(svc, request.pop("name"), request.pop("address"), **request))
        assert r.code == BAD and r.details.startswith(words), r
        assert svc.registry.bot("ok") is None

    _run(tmp_path, body)


def test_a_bot_is_entered_as_its_authors_and_a_new_version_needs_a_change_or_force(tmp_path: Path, bot: str) -> None:
    async def body(svc: RefereeService) -> None:
        with capture_logs() as logs:
            e = await _entered(svc, "  mine ", f" {bot} ", ALICE, games_at_once=64)
        said = {"event": "validating bot", "bot": "mine", "address": bot, "owner": "alice", "log_level": "info"}
        told = [e for e in logs if e.get("event") == "validating bot"]
        assert [{k: e[k] for k in said if k in e} for e in told] == [said] and told[0]["dial"]
        assert (e.name, e.version, e.entrant_id, e.owner, e.state) == ("mine", 1, "mine.v1", "alice", ACTIVE)
        assert e.address == bot and e.validation_game_id.startswith("validate-mine-") and e.bot_version
        assert svc.registry.bot("mine").games_at_once == 64
        assert record_in(svc.store.data / VALIDATION, e.validation_game_id).is_file()
        r = await _refused(_submit(svc, "mine", bot, ALICE))
        assert r.code == EXISTS and r.details == (
            f"bot 'mine' is unchanged since mine.v1 (same address, Hello version {e.bot_version!r}); submit with "
            "force (abluxx submit --force) for a new version anyway")  # fmt: skip
        again = await _entered(svc, "mine", bot, ALICE, force=True)
        assert (again.version, again.entrant_id) == (2, "mine.v2")

    _run(tmp_path, body)


def test_an_organisers_bot_is_the_organisers_unless_it_names_an_owner(tmp_path: Path, bot: str) -> None:
    async def body(svc: RefereeService) -> None:
        assert (await _entered(svc, "bobs", bot, FIRST, owner="bob")).owner == "bob"
        await svc.RetireEntrant(ref_pb.RetireEntrantRequest(name="bobs"), Context(FIRST))
        assert (await _entered(svc, "house", bot)).owner == "organiser"

    _run(tmp_path, body)


def test_who_may_submit_what(tmp_path: Path, bot: str) -> None:
    async def body(svc: RefereeService) -> None:
        r = await _refused(_submit(svc, "x", bot, ALICE, owner="bob"))
        assert (r.code, r.details) == (DENIED, "your token belongs to 'alice'; it cannot submit a bot owned by 'bob'")
        assert (await _entered(svc, "x", bot, ALICE, owner="alice")).owner == "alice"
        r = await _refused(_submit(svc, "x", bot, BOB))
        assert (r.code, r.details) == (DENIED, "the bot 'x' belongs to 'alice'; choose another name")
        assert svc.registry.bot("x").version == 1

    _run(tmp_path, body)


def test_a_new_address_a_retired_bot_or_a_new_hello_version_is_a_new_version(tmp_path: Path, bot: str) -> None:
    other = start_bot("greedy")  # the same bot's code at another address: its Hello is the same

    async def body(svc: RefereeService) -> None:
        await _entered(svc, "mine", bot, ALICE)
        assert (await _entered(svc, "mine", other.address, ALICE)).version == 2  # moved
        await svc.RetireEntrant(ref_pb.RetireEntrantRequest(name="mine"), Context(ALICE))
        assert (await _entered(svc, "mine", other.address, ALICE)).version == 3  # retired: submitted again
        svc.registry.add_bot("older", bot, "alice", "0.9", "tests", "validate-older-1")
        assert (await _entered(svc, "older", bot, ALICE)).version == 2  # its Hello says another version

    try:
        _run(tmp_path, body)
    finally:
        other.stop()


def test_an_unchanged_bot_that_is_down_is_up_again_when_submitted_again(tmp_path: Path, bot: str) -> None:
    async def body(svc: RefereeService) -> None:
        e = await _entered(svc, "mine", bot, ALICE)
        svc.health.absent(e.entrant_id, "test: unreachable")
        assert svc.health.status(e.entrant_id) != "up"
        with capture_logs() as logs:
            back = await _entered(svc, "mine", bot, ALICE)
        assert (back.entrant_id, back.version, back.address, back.health.status) == ("mine.v1", 1, bot, "up")
        assert {"event": "bot submitted again unchanged: up again", "bot": "mine.v1", "log_level": "info"} in [
            {k: e[k] for k in ("event", "bot", "log_level") if k in e} for e in logs]  # fmt: skip
        assert svc.health.status(e.entrant_id) == "up"

    _run(tmp_path, body)


def test_a_host_that_does_not_resolve_is_refused_at_hello_as_unreachable(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        with capture_logs() as logs:
            out = await _submit(svc, "far", "no-such-host.invalid:5000", ALICE)
        assert out.refusal.check == ref_pb.COMPLIANCE_CHECK_HELLO and out.refusal.reason == "unreachable"
        said = {"event": "bot refused", "bot": "far", "address": "no-such-host.invalid:5000",
                "reason": "the host name does not resolve", "log_level": "info"}  # fmt: skip
        assert said in [{k: e[k] for k in said if k in e} for e in logs]
        assert svc.registry.bot("far") is None

    _run(tmp_path, body)


def test_a_refused_bot_is_not_stored(tmp_path: Path) -> None:
    bad = start_bot("bad:illegal")
    try:

        async def body(svc: RefereeService) -> None:
            with capture_logs() as logs:
                out = await _submit(svc, "bad", bad.address, ALICE)
            assert (
                out.refusal.check == ref_pb.COMPLIANCE_CHECK_VALIDATION_GAME and "fault invalid" in out.refusal.reason
            )
            said = {"event": "bot refused", "bot": "bad", "reason": out.refusal.reason}
            assert said in [{k: e[k] for k in said if k in e} for e in logs]
            assert svc.registry.bot("bad") is None and not svc.submitting

        _run(tmp_path, body)
    finally:
        bad.stop()


def test_a_name_being_validated_is_busy(tmp_path: Path, bot: str) -> None:
    async def body(svc: RefereeService) -> None:
        svc.submitting["mine"] = ("alice", "127.0.0.1:1")
        r = await _refused(_submit(svc, "mine", bot, ALICE))
        assert (r.code, r.details) == (BUSY, "bot 'mine' is being validated already; wait for that to finish")

    _run(tmp_path, body)


def test_the_per_author_cap_counts_active_bots_and_those_being_validated(tmp_path: Path, bot: str) -> None:
    words = ("owner: 'alice' has 2 active bots (or bots being validated), the limit per author; retire one, or "
             "submit a new version of one")  # fmt: skip

    async def body(svc: RefereeService) -> None:
        await _entered(svc, "one", bot, ALICE)
        svc.submitting["two"] = ("alice", "127.0.0.1:1")  # being validated: counts as if accepted
        r = await _refused(_submit(svc, "three", bot, ALICE))
        assert (r.code, r.details) == (FULL, words)
        del svc.submitting["two"]
        svc.submitting["bobs"] = ("bob", "127.0.0.1:1")  # bob's does not count for alice
        await _entered(svc, "two", bot, ALICE)
        del svc.submitting["bobs"]
        r = await _refused(_submit(svc, "three", bot, ALICE))
        assert (r.code, r.details) == (FULL, words)
        assert (await _entered(svc, "one", bot, ALICE, force=True)).version == 2  # a new version of one is room
        await svc.RetireEntrant(ref_pb.RetireEntrantRequest(name="two"), Context(ALICE))
        assert (await _entered(svc, "three", bot, ALICE)).version == 1  # a retired bot leaves room

    _run(tmp_path, body, per_author=2)


def test_an_address_belongs_to_one_author(tmp_path: Path, bot: str) -> None:
    async def body(svc: RefereeService) -> None:
        await _entered(svc, "one", bot, ALICE)
        r = await _refused(_submit(svc, "other", bot, BOB))
        assert (r.code, r.details) == (EXISTS, f"address: {bot!r} is where another author's bot is submitted")
        svc.submitting["pending"] = ("bob", "127.0.0.1:4444")  # being validated there counts too
        r = await _refused(_submit(svc, "two", "127.0.0.1:4444", ALICE))
        assert (r.code, r.details) == (EXISTS, "address: '127.0.0.1:4444' is where another author's bot is submitted")
        del svc.submitting["pending"]
        await svc.RetireEntrant(ref_pb.RetireEntrantRequest(name="one"), Context(ALICE))
        assert (await _entered(svc, "other", bot, BOB)).owner == "bob"  # a retired bot's address is free

    _run(tmp_path, body)


def _add(svc: RefereeService, name: str, owner: str, n: int = 1) -> None:
    for i in range(n):
        svc.registry.add_bot(name, f"10.0.0.{len(name)}:{7000 + i}", owner, f"{i + 1}", "A", f"validate-{name}-{i}")


def _rated(svc: RefereeService, ratings: dict) -> None:
    """The server-wide ratings as given (a stand-in for the fit over stored games, which registry's tests check)."""

    async def given() -> dict:
        return ratings

    svc._ratings = given  # type: ignore[method-assign]


def test_entrants_are_listed_in_pages_with_each_versions_details_for_its_owner(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        _add(svc, "a", "alice", 2)
        _add(svc, "bb", "bob")
        _add(svc, "ccc", "alice")
        _rated(svc, {("a", 2): (31.0, 2.0, 7)})
        svc.health.absent("bb.v1", "test: unreachable")
        listed = await svc.ListEntrants(ref_pb.ListEntrantsRequest(page_size=2), Context(ALICE))
        assert [e.entrant_id for e in listed.entrants] == ["ccc.v1", "bb.v1"] and listed.next_page_token
        assert [bool(e.address) for e in listed.entrants] == [True, False]
        assert [bool(e.validation_game_id) for e in listed.entrants] == [True, False]
        rest = await svc.ListEntrants(ref_pb.ListEntrantsRequest(page_size=2, page_token=listed.next_page_token),
                                      Context(ALICE))  # fmt: skip
        assert [e.entrant_id for e in rest.entrants] == ["a.v2"] and rest.next_page_token == ""
        every = await svc.ListEntrants(ref_pb.ListEntrantsRequest(all_versions=True), Context(BOB))
        assert [e.entrant_id for e in every.entrants] == ["ccc.v1", "bb.v1", "a.v2", "a.v1"]
        assert [e.address for e in every.entrants] == ["", "10.0.0.2:7000", "", ""]
        assert [(e.mu, e.sigma, e.games) for e in every.entrants] == [
            (25.0, 25 / 3, 0), (25.0, 25 / 3, 0), (31.0, 2.0, 7), (25.0, 25 / 3, 0)]  # fmt: skip
        assert [e.health.status for e in every.entrants] == ["up", "down", "up", "up"]
        await svc.RetireEntrant(ref_pb.RetireEntrantRequest(name="bb"), Context(BOB))
        active = await svc.ListEntrants(ref_pb.ListEntrantsRequest(active_only=True), Context(FIRST))
        assert [e.entrant_id for e in active.entrants] == ["ccc.v1", "a.v2"]
        assert all(e.address for e in active.entrants)

    _run(tmp_path, body)


def test_get_entrant_names_what_is_missing(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        _add(svc, "a", "alice", 2)
        got = await svc.GetEntrant(ref_pb.GetEntrantRequest(name="a"), Context(BOB))
        assert (got.entrant_id, got.address) == ("a.v2", "")
        got = await svc.GetEntrant(ref_pb.GetEntrantRequest(name="a", version=1), Context(ALICE))
        assert (got.entrant_id, got.address) == ("a.v1", "10.0.0.1:7000")
        r = await _refused(svc.GetEntrant(ref_pb.GetEntrantRequest(name=""), Context(ALICE)))
        assert (r.code, r.details) == (BAD, "name: must not be empty")
        r = await _refused(svc.GetEntrant(ref_pb.GetEntrantRequest(name="nope"), Context(ALICE)))
        assert (r.code, r.details) == (MISSING, "no bot 'nope' on this server")
        r = await _refused(svc.GetEntrant(ref_pb.GetEntrantRequest(name="a", version=3), Context(ALICE)))
        assert (r.code, r.details) == (MISSING, "no bot 'a' version 3 on this server")

    _run(tmp_path, body)


def test_only_the_owner_or_an_organiser_may_retire_a_bot_and_twice_is_once(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        _add(svc, "a", "alice", 2)
        r = await _refused(svc.RetireEntrant(ref_pb.RetireEntrantRequest(name="a"), Context(BOB)))
        assert (r.code, r.details) == (
            DENIED,
            "the bot 'a' belongs to 'alice'; only they or an organiser may retire it",
        )
        _rated(svc, {("a", 2): (28.0, 3.0, 4), ("a", 1): (20.0, 1.0, 9)})
        svc.health.absent("a.v2", "test: unreachable")
        gone = await svc.RetireEntrant(ref_pb.RetireEntrantRequest(name="a"), Context(ALICE))
        assert (gone.entrant_id, gone.state, gone.address) == ("a.v2", RETIRED, "10.0.0.1:7001")
        assert (gone.mu, gone.sigma, gone.games, gone.health.status) == (28.0, 3.0, 4, "down")
        again = await svc.RetireEntrant(ref_pb.RetireEntrantRequest(name="a"), Context(FIRST))
        assert (again.entrant_id, again.state) == ("a.v2", RETIRED)
        _add(svc, "b", "bob")
        assert (await svc.RetireEntrant(ref_pb.RetireEntrantRequest(name="b"), Context(FIRST))).state == RETIRED
        nobody = Context(FIRST)
        nobody.metadata = []
        r = await _refused(svc.RetireEntrant(ref_pb.RetireEntrantRequest(name="b"), nobody))
        assert r.code == grpc.StatusCode.UNAUTHENTICATED

    _run(tmp_path, body)


def test_a_bots_output_is_its_authors_and_the_organisers(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        _add(svc, "a", "alice")
        svc.registry.add_bot("a", "10.0.0.9:7000", "bob", "2", "B", "validate-a-b")  # an organiser's v2 for bob
        svc.registry.add_bot("x.vy", "10.0.0.8:7000", "alice", "1", "A", "validate-x")
        for entrant in ("a.v", "a.v0", "a.vX", "x.vy.v1"):  # files where no entrant's output is
            path = output_path(svc.store.data, "g7", entrant)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("not a bot's")
        folder = svc.store.data / VALIDATION
        folder.mkdir(parents=True, exist_ok=True)
        record_in(folder, "validate-a-1").with_suffix(".owner").write_text("alice\n")
        record_in(folder, "validate-a-1").with_suffix(".out").write_text(
            "hello \udcff from a", errors="surrogateescape"
        )
        path = output_path(svc.store.data, "g7", "a.v1")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("in game 7")

        async def read(game: str, entrant: str, token: str) -> str:
            request = ref_pb.GetBotOutputRequest(game_id=game, entrant=entrant)
            return (await svc.GetBotOutput(request, Context(token))).output

        assert await read(" validate-a-1 ", "", ALICE) == "hello \ufffd from a"
        assert await read("validate-a-1", "", FIRST) == "hello \ufffd from a"
        assert await read("g7", " a.v1 ", ALICE) == "in game 7"
        assert await read("g7", "a.v1", FIRST) == "in game 7"
        assert await read("g7", "x.vy.v1", ALICE) == "not a bot's"  # a name holding ".v"
        for game, entrant, token in [("validate-a-1", "", BOB), ("g7", "a.v1", BOB), ("validate-a-2", "", ALICE),
                                     ("g7", "a.v2", ALICE), ("g7", "a.v", ALICE), ("g7", "a.v0", ALICE),
                                     ("g7", "a.vX", ALICE), ("g7", "a.v1", BOB), ("g7", ".v1", BOB),
                                     ("g7", "a.v0", BOB), ("g7", "a.v", BOB), ("g7", "a.vX", BOB),
                                     ("g7", "a.v\u00b2", ALICE),
                                     ("g8", "a.v1", ALICE), ("g7", ".v1", ALICE)]:  # fmt: skip
            r = await _refused(read(game, entrant, token))
            assert r.code == MISSING and r.details == (
                f"no output of {entrant or 'the bot'} in game {game!r} that you may read (only its author and "
                "organisers may)"), (game, entrant, r)  # fmt: skip

    _run(tmp_path, body)


def _full(owner: str, cap: int) -> str:
    return (f"owner: {owner!r} has {cap} active bots (or bots being validated), the limit per author; retire one, or "
            "submit a new version of one")  # fmt: skip


def test_a_retired_bot_submitted_again_takes_a_place_under_the_cap(tmp_path: Path, bot: str) -> None:
    async def body(svc: RefereeService) -> None:
        _add(svc, "one", "alice")
        svc.registry.retire_bot("one", 1)
        _add(svc, "two", "alice")
        r = await _refused(_submit(svc, "one", bot, ALICE))
        assert (r.code, r.details) == (FULL, _full("alice", 1))
        assert svc.registry.bot("one").version == 1

    _run(tmp_path, body, per_author=1)


def test_an_accepted_bot_joins_each_open_ladder_and_its_validation_game_is_its_authors(
    tmp_path: Path, bot: str
) -> None:
    async def body(svc: RefereeService) -> None:
        ladder = config("lad", HOUSE, table_size=2, ladder=ref_pb.LadderConfig(open=True))
        tid = (await svc.CreateTournament(ref_pb.CreateTournamentRequest(config=ladder), Context(FIRST))).tournament_id
        with capture_logs() as logs:
            e = await _entered(svc, "mine", bot, ALICE)
        said = {"event": "bot accepted", "bot": "mine.v1", "owner": "alice", "ladders": [tid], "log_level": "info"}
        assert said in [{k: x[k] for k in said if k in x} for x in logs]
        joined = [(x.owner, x.bot, x.version, x.address) for x in ladder_store.entrants(svc.store, tid)
                  if x.name == "mine.v1"]  # fmt: skip
        assert joined == [("alice", "mine", 1, bot)]
        assert svc.output_of(e.validation_game_id, "")[1] == "alice"  # who may read its output there

    _run(tmp_path, body)


def test_a_dialin_bot_gone_before_its_check_is_refused_at_hello(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        out = await svc.submit(ref_pb.SubmitBotRequest(name="far", address="dialin:far"), Principal("alice", False))
        assert (out.refusal.check, out.refusal.reason) == (ref_pb.COMPLIANCE_CHECK_HELLO, "unreachable")
        assert svc.registry.bot("far") is None and not svc.submitting

    _run(tmp_path, body)


def test_an_upload_without_a_command_it_can_read_is_refused_naming_it(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        for command in ("", "python3 'bot"):
            r = await _refused(_submit(svc, "up", "", ALICE, upload=b"PK", command=command))
            assert r.code == BAD and r.details.startswith(("command: an upload needs", "command: cannot read")), r

    _run(tmp_path, body)


@needs_sandbox()
def test_an_upload_is_refused_before_it_is_unpacked_when_its_name_is_busy_or_its_author_full(tmp_path: Path) -> None:
    async def body(svc: RefereeService) -> None:
        svc.submitting["up"] = ("alice", "127.0.0.1:1")
        r = await _refused(_submit(svc, "up", "", ALICE, upload=b"not a zip", command="python3 bot.py"))
        assert (r.code, r.details) == (BUSY, "bot 'up' is being validated already; wait for that to finish")
        del svc.submitting["up"]
        _add(svc, "one", "alice")
        r = await _refused(_submit(svc, "two", "", ALICE, upload=b"not a zip", command="python3 bot.py"))
        assert (r.code, r.details) == (FULL, _full("alice", 1))

    _run(tmp_path, body, per_author=1)


def _gated(monkeypatch: pytest.MonkeyPatch) -> dict[str, asyncio.Event]:
    """Each submission's checks wait for its name's gate, then run for real: the test decides which validation
    ends first."""
    gates: dict[str, asyncio.Event] = {}
    real = entrants.check_bot

    async def check(name: str, *args):
        await gates.setdefault(name, asyncio.Event()).wait()
        return await real(name, *args)

    monkeypatch.setattr(entrants, "check_bot", check)
    return gates


async def _validating(svc: RefereeService, name: str, call: asyncio.Task) -> None:
    """Once ``call`` (submitting ``name``) waits at its gate; its refusal raised if it ends first."""

    async def wait() -> None:
        while name not in svc.submitting and not call.done():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), 60)
    if call.done():
        call.result()
        raise AssertionError(f"{name}: its call ended without waiting for its gate")


def test_a_new_version_being_validated_takes_no_new_place_under_the_cap(
    tmp_path: Path, bot: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gates = _gated(monkeypatch)

    async def body(svc: RefereeService) -> None:
        svc.registry.add_bot("a", bot, "alice", "1", "A", "validate-a-0")
        a = asyncio.create_task(_entered(svc, "a", bot, ALICE, force=True))  # a new version of her first bot
        await _validating(svc, "a", a)
        b = asyncio.create_task(_entered(svc, "b", bot, ALICE))  # her second place of 2
        await _validating(svc, "b", b)
        r = await _refused(_submit(svc, "c", bot, ALICE))  # b being validated counts as if accepted
        assert (r.code, r.details) == (FULL, _full("alice", 2))
        r = await _refused(_submit(svc, "d", bot, BOB))  # and both are at her address
        assert (r.code, r.details) == (EXISTS, f"address: {bot!r} is where another author's bot is submitted")
        gates["b"].set()
        assert (await b).entrant_id == "b.v1"
        gates["a"].set()
        assert (await a).entrant_id == "a.v2"

    _run(tmp_path, body, per_author=2)


def test_the_cap_and_the_address_are_checked_again_after_the_validation_game(
    tmp_path: Path, bot: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against what is stored when it ends: here bots stored meanwhile by the test, not by a call (every call's
    validation is counted by the first check)."""
    gates = _gated(monkeypatch)

    async def body(svc: RefereeService) -> None:
        d = asyncio.create_task(_submit(svc, "d", bot, BOB))
        await _validating(svc, "d", d)
        svc.registry.add_bot("theirs", bot, "alice", "1", "A", "validate-theirs-0")
        gates["d"].set()
        r = await _refused(d)
        assert (r.code, r.details) == (EXISTS, f"address: {bot!r} is where another author's bot is submitted")
        assert svc.registry.bot("d") is None and not svc.submitting
        e = asyncio.create_task(_entered(svc, "e", bot, ALICE))
        await _validating(svc, "e", e)
        f = asyncio.create_task(_submit(svc, "f", bot, ALICE))  # alice: 1 active and 2 being validated, of 3
        await _validating(svc, "f", f)
        _add(svc, "g", "alice")
        gates["e"].set()
        assert (await e).entrant_id == "e.v1"  # her third place: after its game, only stored bots count
        gates["f"].set()
        r = await _refused(f)
        assert (r.code, r.details) == (FULL, _full("alice", 3))
        assert svc.registry.bot("f") is None

    _run(tmp_path, body, per_author=3)
