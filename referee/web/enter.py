"""How to enter (docs/web.md): the referee's gRPC address as entrants dial it (``[http] grpc_address``), the rules
as a page, the ``.proto`` files and the starter kits (Python, Node, C++) to download, and the guide to writing a bot.
What is downloaded is read from the referee's own source tree (``proto/``, ``clients/``) beside the package; where
it is not installed, the page says where to find it instead."""

from __future__ import annotations

import io
import tarfile
from functools import cache
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .app import Site
from .markdown import ROOT, how_to_enter, rules

PROTO = ROOT / "proto"
PROTOS = tuple(f"abluxxen/v1/{name}.proto" for name in ("bot", "game", "gateway", "record", "referee"))
# Each kit's archive: its folder under clients/, and whether it needs the .proto files beside it (../../proto).
KITS = {
    "python": ("the Python kit (abluxx_bot); it runs with the referee package installed", "clients/python"),
    "node": ("a complete bot in JavaScript (Node.js, @grpc/grpc-js)", "clients/node"),
    "cpp": ("a complete bot in C++ (Debian's gRPC), with its Makefile", "clients/cpp"),
}
SKIPPED = ("__pycache__", "node_modules", ".pyc")


def _kept(path: Path) -> bool:
    return not any(part in SKIPPED or part.endswith(".pyc") for part in path.parts)


@cache
def kit_archive(kit: str) -> bytes | None:
    """The kit as a .tar.gz: ``abluxxen-KIT/clients/KIT/...`` and ``abluxxen-KIT/proto/...``, so its paths to the
    .proto files (``../../proto``) hold as in the repository. The same bytes every time (no times, no owners)."""
    folder = ROOT / KITS[kit][1]
    if not folder.is_dir() or not PROTO.is_dir():
        return None
    files = [p for p in sorted(folder.rglob("*")) if p.is_file() and _kept(p.relative_to(ROOT))]
    files += [PROTO / p for p in PROTOS]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in files:
            data = path.read_bytes()
            info = tarfile.TarInfo(f"abluxxen-{kit}/{path.relative_to(ROOT)}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


class Enter:
    def __init__(self, site: Site) -> None:
        self.site = site

    def routes(self) -> list[Route]:
        return [
            Route("/how-to-enter", self.page),
            Route("/rules", self.rules),
            Route("/download/proto/abluxxen/v1/{name}", self.proto),
            Route("/download/{name}", self.kit),
        ]

    def context(self) -> dict[str, Any]:
        """What the page shows besides the upload form's outcome (upload.py renders it too)."""
        return {
            "body": how_to_enter(), "grpc_address": self.site.http.grpc_address,
            "protos": [p for p in PROTOS if (PROTO / p).is_file()],
            "kits": {k: words for k, (words, folder) in KITS.items() if (ROOT / folder).is_dir()},
        }  # fmt: skip

    async def page(self, request: Request) -> Response:
        return self.site.render(request, "enter.html", **self.context())

    async def rules(self, request: Request) -> Response:
        return self.site.render(request, "rules.html", body=rules())

    async def proto(self, request: Request) -> Response:
        name = f"abluxxen/v1/{request.path_params['name']}"
        if name not in PROTOS or not (PROTO / name).is_file():
            raise HTTPException(404, "no such .proto file here")
        attachment = {"content-disposition": f'attachment; filename="{request.path_params["name"]}"'}
        return Response((PROTO / name).read_bytes(), media_type="text/plain; charset=utf-8", headers=attachment)

    async def kit(self, request: Request) -> Response:
        name = request.path_params["name"]
        kit = name.removeprefix("abluxxen-").removesuffix(".tar.gz")
        archive = kit_archive(kit) if name == f"abluxxen-{kit}.tar.gz" and kit in KITS else None
        if archive is None:
            raise HTTPException(404, "no such download here")
        return Response(archive, media_type="application/gzip",
                        headers={"content-disposition": f'attachment; filename="{name}"'})  # fmt: skip
