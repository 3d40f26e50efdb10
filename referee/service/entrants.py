"""The service's calls on bots: submit, list, get and retire."""

from __future__ import annotations

import json
import secrets
import shlex
import shutil
from pathlib import Path

from referee.errors import AlreadyExists, BadInput, Busy, Denied, Exhausted, NotFound, Unavailable
from referee.fleet import EntrantError
from referee.fleet.sandbox import problem as sandbox_problem
from referee.match.dialin import is_dialin
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.records.paths import VALIDATION, record_in
from referee.records.private import write_private
from referee.store import health as health_store
from referee.tournament.config import ConfigError, check_address

from . import ladders
from .addresses import UNIX_SCHEMES, NotAllowed, Unresolved, resolve, same_place
from .auth import Principal
from .base import ServiceBase, handle
from .convert import entrant_pb
from .hosted import files_of, output_path, tail
from .paging import page
from .registry import ACTIVE, RETIRED, BotVersion
from .settings import NAME
from .submit import UNREACHABLE, VALIDATION_PREFIX, Passed, check_bot, check_hello, owner_of
from .uploads import unpack
from .visibility import private_to, version_private

DID_NOT_START = (
    "the bot did not start serving in its sandbox: it exited, or printed no 'listening on ...' line "
    "within the start time (its output is in this reply)"
)
MAX_COMMAND_CHARS = 1000


def _command(text: str) -> tuple[str, ...]:
    """An uploaded bot's command line, split as a shell would; BadInput when empty or unreadable."""
    if not text.strip() or len(text) > MAX_COMMAND_CHARS:
        raise BadInput(f"command: an upload needs the command that starts the bot (1 to {MAX_COMMAND_CHARS} "
                       "characters), e.g. \"python3 bot.py\"")  # fmt: skip
    try:
        return tuple(shlex.split(text))
    except ValueError as e:
        raise BadInput(f"command: cannot read {text!r}: {e}") from None


MAX_GAMES_AT_ONCE = 64  # a submission asks at most this many games at once (each ladder also caps it)


class EntrantCalls(ServiceBase):
    @handle
    async def SubmitBot(self, request: ref_pb.SubmitBotRequest, context) -> ref_pb.SubmitBotResponse:
        if is_dialin(address := request.address.strip()):
            raise BadInput(f"address: {address!r}: a bot dials in through BotGateway.Connect, not SubmitBot")
        return await self.submit(request, self.auth.caller(context))

    async def submit(self, request: ref_pb.SubmitBotRequest, who: Principal) -> ref_pb.SubmitBotResponse:
        """SubmitBot's checks and entry for ``who`` (the API's caller, the site's signed-in author, or a bot
        dialled in as ``dialin:NAME``: gateway.py)."""
        self._writable()
        name, address, owner = request.name.strip(), request.address.strip(), request.owner.strip()
        if not name:
            raise BadInput("name: must not be empty")
        if not NAME.fullmatch(name):
            raise BadInput(f"name: {name!r} must be 1-40 letters, digits or _.+-")
        if request.upload and address:
            raise BadInput("address: give an address or an upload, not both")
        if not request.upload and not address.startswith(UNIX_SCHEMES) and not is_dialin(address):
            try:
                check_address("address", "address", address)
            except ConfigError as e:
                raise BadInput(f"address: {e.reason}") from None
        if owner and not NAME.fullmatch(owner):
            raise BadInput(f"owner: {owner!r} must be 1-40 letters, digits or _.+-")
        if request.games_at_once > MAX_GAMES_AT_ONCE:
            raise BadInput(f"games_at_once: {request.games_at_once} is more than {MAX_GAMES_AT_ONCE}")
        if not who.organiser:
            if owner and owner != who.name:
                raise Denied(f"your token belongs to {who.name!r}; it cannot submit a bot owned by {owner!r}")
            owner = who.name
        elif not owner:
            owner = who.name
        latest = self.registry.bot(name)
        if latest is not None and not who.organiser and latest.owner != who.name:
            raise Denied(f"the bot {name!r} belongs to {latest.owner!r}; choose another name")
        if request.upload:
            return await self._upload(request, name, owner, latest)
        try:
            dial = address if is_dialin(address) else await resolve(address, self.settings.addresses, self.own_ports)
        except NotAllowed as e:
            raise BadInput(f"address: {address!r}: {e}") from None
        except Unresolved:
            self.log.info("bot refused", bot=name, address=address, reason="the host name does not resolve")
            return ref_pb.SubmitBotResponse(
                refusal=ref_pb.Refusal(check=ref_pb.COMPLIANCE_CHECK_HELLO, reason=UNREACHABLE)
            )
        if name in self.submitting:
            raise Busy(f"bot {name!r} is being validated already; wait for that to finish")
        if not request.force and (same := await self._unchanged(latest, owner, dial)) is not None:
            return same
        self._room_for(name, owner, address, dial, pending=True)  # before the validation game's cost
        self.submitting[name] = (owner, dial)  # no await since the check: the next call counts this one
        try:
            self.log.info("validating bot", bot=name, address=address, dial=dial, owner=owner)
            outcome = await check_bot(name, dial, self.settings, self.store.data / VALIDATION, owner)
        finally:
            self.submitting.pop(name, None)
        if not isinstance(outcome, Passed):
            self.log.info("bot refused", bot=name, reason=outcome.reason)
            return ref_pb.SubmitBotResponse(refusal=outcome)
        self._writable()
        # again, with no await between the check and the insert: the calls validated meanwhile may have taken the
        # author's last place or this address (the loop runs one coroutine at a time; the registry is its own)
        self._room_for(name, owner, address, dial)
        bot = self.registry.add_bot(name, dial, owner, outcome.hello.version, outcome.hello.author, outcome.game_id,
                                    request.games_at_once)  # fmt: skip
        joined = ladders.enter(self.store, self.registry, bot)
        self.log.info("bot accepted", bot=bot.entrant_id, owner=owner, ladders=joined)
        return ref_pb.SubmitBotResponse(entrant=entrant_pb(bot, None, True))

    async def _upload(self, request: ref_pb.SubmitBotRequest, name: str, owner: str,
                      latest: BotVersion | None) -> ref_pb.SubmitBotResponse:  # fmt: skip
        """An uploaded bot: its files checked and unpacked, its checks run in its sandbox; accepted, it runs there
        (hosted.py) from then on, at its own address."""
        command = _command(request.command)
        if (why := sandbox_problem()) is not None:
            raise Unavailable(f"this server cannot run uploaded bots: {why}")
        if name in self.submitting:
            raise Busy(f"bot {name!r} is being validated already; wait for that to finish")
        version = (latest.version if latest else 0) + 1
        dial = self.hosted.address(f"{name}.v{version}")
        self._room_for(name, owner, dial, dial, pending=True)
        pending = files_of(self.store.data, name, f"pending-{secrets.token_hex(4)}")
        unpack(request.upload, pending, self.settings.uploads)
        self.submitting[name] = (owner, dial)
        try:
            outcome, output = await self._check_upload(name, command, pending, owner)
        finally:
            self.submitting.pop(name, None)
        if not isinstance(outcome, Passed):
            shutil.rmtree(pending, ignore_errors=True)
            self.log.info("bot refused", bot=name, reason=outcome.reason)
            return ref_pb.SubmitBotResponse(refusal=outcome, output=output)
        self._writable()
        self._room_for(name, owner, dial, dial)
        version = (b.version if (b := self.registry.bot(name)) else 0) + 1  # no await since: add_bot's own number
        dial = self.hosted.address(f"{name}.v{version}")
        pending.rename(files_of(self.store.data, name, version))
        bot = self.registry.add_bot(name, dial, owner, outcome.hello.version, outcome.hello.author, outcome.game_id,
                                    request.games_at_once, json.dumps(command))  # fmt: skip
        if latest is not None:
            await self.hosted.stop(latest.entrant_id)
        await self.hosted.start(bot)
        joined = ladders.enter(self.store, self.registry, bot)
        self.log.info("bot accepted", bot=bot.entrant_id, owner=owner, ladders=joined, uploaded=True)
        return ref_pb.SubmitBotResponse(entrant=entrant_pb(bot, None, True), output=output)

    async def _check_upload(self, name: str, command: tuple[str, ...], files, owner: str):
        """Hello and the validation game with the bot in its sandbox; the refusal or pass, and its output."""
        key = f"{name}-{secrets.token_hex(4)}"
        try:
            async with self.hosted.trial(key, command, files) as address:
                outcome = await check_bot(name, address, self.settings, self.store.data / VALIDATION, owner)
        except EntrantError:
            outcome = ref_pb.Refusal(check=ref_pb.COMPLIANCE_CHECK_HELLO, reason=DID_NOT_START)
        output = tail(self.store.data / "logs" / f"upload-{key}.log", self.settings.uploads.output_kb * 1024)
        if outcome.game_id:  # its validation game was played: the output is kept beside its record
            write_private(record_in(self.store.data / VALIDATION, outcome.game_id).with_suffix(".out"), output)
        return outcome, output

    async def _unchanged(self, latest: BotVersion | None, owner: str, dial: str) -> ref_pb.SubmitBotResponse | None:
        """A resubmission of ``owner``'s active bot ``latest`` at the same address whose Hello gives the same
        version and author: ALREADY_EXISTS naming the current version, or, when that version is down or suspended
        (docs/bot-health.md), that version up again (its author submitted it again). None: not
        unchanged, a new version follows."""
        if latest is None or latest.state != ACTIVE or latest.owner != owner or not same_place(latest.address, dial):
            return None
        said = await check_hello(dial)
        if isinstance(said, ref_pb.Refusal) or (said.version, said.author) != (latest.bot_version, latest.bot_author):
            return None
        if self.health.status(latest.entrant_id) != "up":
            self.health.cleared(latest.entrant_id)
            self.log.info("bot submitted again unchanged: up again", bot=latest.entrant_id)
            return ref_pb.SubmitBotResponse(entrant=self._entrant(latest, await self._ratings(), True))
        raise AlreadyExists(
            f"bot {latest.name!r} is unchanged since {latest.entrant_id} (same address, Hello version "
            f"{latest.bot_version!r}); submit with force (abluxx submit --force) for a new version anyway"
        )

    def _room_for(self, name: str, owner: str, address: str, dial: str, pending: bool = False) -> None:
        """Exhausted when ``owner`` has max_bots_per_author active bots and ``name`` is not one of them;
        AlreadyExists when another author's active bot is at ``dial`` (an address belongs to one author). With
        ``pending``, the bots under validation count too, as if accepted (a new version of an active bot takes no
        place)."""
        validating = {n: v for n, v in self.submitting.items() if n != name} if pending else {}
        if self._new_place(name, owner) and (
            self.registry.active_bots_of(owner)
            + sum(o == owner and self._new_place(n, o) for n, (o, _) in validating.items())
            >= self.settings.max_bots_per_author
        ):
            raise Exhausted(
                f"owner: {owner!r} has {self.settings.max_bots_per_author} active bots (or bots being validated), the "
                "limit per author; "
                "retire one, or submit a new version of one",
            )
        elsewhere = [(b.owner, b.address) for b in self.registry.bots(active_only=True)] + list(validating.values())
        if any(o != owner and same_place(a, dial) for o, a in elsewhere):
            raise AlreadyExists(f"address: {address!r} is where another author's bot is submitted")

    def _new_place(self, name: str, owner: str) -> bool:
        """Whether bot ``name`` accepted for ``owner`` takes a place under their cap: it is not a new version of
        their active bot."""
        latest = self.registry.bot(name)
        return latest is None or latest.owner != owner or latest.state != ACTIVE

    @handle
    async def ListEntrants(self, request: ref_pb.ListEntrantsRequest, context) -> ref_pb.ListEntrantsResponse:
        who = self.auth.reader(context)
        after, size = page(request)
        rows = self.registry.bots_page(request.active_only, after or None, size + 1, request.all_versions)
        return ref_pb.ListEntrantsResponse(
            entrants=await self.entrants_as(who, [b for _, b in rows[:size]]),
            next_page_token=str(rows[size - 1][0]) if len(rows) > size else "",  # the row the next page is older than
        )

    async def entrants_as(self, who: Principal | None, bots: list[BotVersion]) -> list[ref_pb.Entrant]:
        """Bot versions as ``who`` may see them, each version's private details decided on its own
        (``visibility.version_private``): ListEntrants' and GetEntrant's answer, and the site's JSON API's."""
        ratings = await self._ratings()
        health = health_store.get(self.store, [b.entrant_id for b in bots])
        return [
            entrant_pb(b, ratings.get((b.name, b.version)), version_private(who, b), health.get(b.entrant_id))
            for b in bots
        ]

    def _bot(self, name: str, version: int = 0):
        if not name:
            raise BadInput("name: must not be empty")
        bot = self.registry.bot(name, version)
        if bot is None:
            raise NotFound(f"no bot {name!r}" + (f" version {version}" if version else "") + " on this server")
        return bot

    @handle
    async def GetEntrant(self, request: ref_pb.GetEntrantRequest, context) -> ref_pb.Entrant:
        who = self.auth.reader(context)
        return (await self.entrants_as(who, [self._bot(request.name, request.version)]))[0]

    def _entrant(self, bot: BotVersion, ratings: dict, private: bool) -> ref_pb.Entrant:
        health = health_store.get(self.store, [bot.entrant_id]).get(bot.entrant_id)
        return entrant_pb(bot, ratings.get((bot.name, bot.version)), private, health)

    @handle
    async def GetBotOutput(self, request: ref_pb.GetBotOutputRequest, context) -> ref_pb.BotOutput:
        who = self.auth.reader(context)
        path, owner = self.output_of(request.game_id.strip(), request.entrant.strip())
        if path is None or owner is None or not private_to(who, owner) or not path.is_file():
            raise NotFound(f"no output of {request.entrant or 'the bot'} in game {request.game_id!r} that you may "
                           "read (only its author and organisers may)")  # fmt: skip
        return ref_pb.BotOutput(output=path.read_text(encoding="utf-8", errors="replace"))

    def output_of(self, game_id: str, entrant: str) -> tuple[Path | None, str | None]:
        """Where a bot's output in ``game_id`` is kept, and its author (None: no such bot or game)."""
        if game_id.startswith(VALIDATION_PREFIX):
            folder = self.store.data / VALIDATION
            owner = owner_of(folder, game_id)
            return (record_in(folder, game_id).with_suffix(".out") if owner else None), owner
        name, _, version = entrant.rpartition(".v")
        number = int(version) if version.isascii() and version.isdigit() else 0
        bot = self.registry.bot(name, number) if name and number > 0 else None
        return output_path(self.store.data, game_id, entrant), bot.owner if bot else None

    @handle
    async def RetireEntrant(self, request: ref_pb.RetireEntrantRequest, context) -> ref_pb.Entrant:
        who = self.auth.caller(context)
        self._writable()
        bot = self._bot(request.name)
        if not who.organiser and bot.owner != who.name:
            raise Denied(f"the bot {bot.name!r} belongs to {bot.owner!r}; only they or an organiser may retire it")
        if bot.state != RETIRED:
            self.registry.retire_bot(bot.name, bot.version)
            await self.hosted.stop(bot.entrant_id)
            left = ladders.withdraw(self.store, self.registry, bot)
            self.log.info("bot retired", bot=bot.entrant_id, by=who.name, ladders=left)
        return self._entrant(self._bot(bot.name, bot.version), await self._ratings(), True)
