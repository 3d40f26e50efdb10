"""The how-to-enter page's upload form (docs/sandbox.md): a signed-in author sends a bot's files and its command;
the service checks and validates it as SubmitBot does, and the page shows the outcome and the bot's own output.

The form is multipart (Starlette's parser, python-multipart): its declared length must be under the server's
upload cap, and its CSRF token is checked as every form's is."""

from __future__ import annotations

import asyncio

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from referee.errors import RefereeError
from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.service.visibility import private_to

from .app import Site
from .enter import Enter
from .query import digits
from .thread import run_on, site_thread

FORM_SLACK = 64 * 1024  # the form's other fields and its multipart framing, beside the archive


class Upload:
    """``POST /how-to-enter/upload``: on the site's thread, which alone can read a request's body (thread.py); the
    submission itself runs on the service's ``loop``, as SubmitBot's does."""

    def __init__(self, site: Site, loop: asyncio.AbstractEventLoop) -> None:
        self.site, self.loop = site, loop

    @site_thread
    async def post(self, request: Request) -> Response:
        return await upload(self.site, request, self.loop)


async def upload(site: Site, request: Request, loop: asyncio.AbstractEventLoop) -> Response:
    who = site.who(request)
    if who is None or who.organiser:
        raise HTTPException(403, "sign in as an author to upload a bot")
    cap = site.service.settings.uploads.max_mb * 1024 * 1024
    length = request.headers.get("content-length", "")
    if not digits(length):
        raise HTTPException(411, "the upload must say its length")
    if int(length) > cap + FORM_SLACK:
        raise HTTPException(413, f"the upload is over the {site.service.settings.uploads.max_mb} MiB an upload may be")
    async with request.form(max_files=1, max_fields=4, max_part_size=FORM_SLACK) as form:
        if not site.sessions.csrf_ok(request, str(form.get("csrf", ""))):
            raise HTTPException(403, "the form is out of date or came from another site; load the page and try again")
        archive = form.get("archive")
        data = await archive.read() if archive is not None and not isinstance(archive, str) else b""
        fields = {k: str(form.get(k, "")).strip() for k in ("name", "command")}
    if not data:
        raise HTTPException(400, "choose the bot's archive (tar or zip) to upload")
    submitted = ref_pb.SubmitBotRequest(name=fields["name"], command=fields["command"], upload=data)
    outcome = await run_on(loop, _submit(site, who, submitted))
    return site.render(request, "enter.html", **Enter(site).context(), outcome=outcome, form=fields)


async def _submit(site: Site, who, request: ref_pb.SubmitBotRequest) -> dict[str, str]:
    """What the page says: accepted (the entrant), refused (the reason) or an error, and the bot's output."""
    try:
        reply = await site.service.submit(request, who)
    except RefereeError as e:
        return {"error": str(e)}
    if reply.HasField("refusal"):
        return {"refused": reply.refusal.reason, "output": reply.output}
    return {"accepted": reply.entrant.entrant_id, "output": reply.output}


async def output(site: Site, request: Request) -> Response:
    """``/g/GAME/output/ENTRANT``: an uploaded bot's own output in a game (ENTRANT ``-`` for a validation game), as
    plain text, for its author and organisers; 404 for anyone else, as for a game that does not exist."""
    entrant = request.path_params["entrant"]
    path, owner = site.service.output_of(request.path_params["game_id"], "" if entrant == "-" else entrant)
    if path is None or owner is None or not private_to(site.who(request), owner) or not path.is_file():
        raise HTTPException(404, "no such output")
    return PlainTextResponse(path.read_text(encoding="utf-8", errors="replace"))
