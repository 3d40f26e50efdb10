"""The Node dial-in example of docs/writing-a-bot.md ("Host it, or dial in"), run as printed: a real Node process
that listens on nothing connects to a real `abluxx serve`, enters an open ladder and plays its games there.

Only the lines the page leaves to the reader are added (loading the .proto files, HELLO, TOKEN, reply), and the
page's TLS address is swapped for the test server's plaintext one."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.service.helpers import ALICE, start_server, write_settings
from tests.service.test_dialin import games_of, open_ladder, seat

from .test_node_bot import NODE_DIR, node  # noqa: F401  (node: the fixture)

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "writing-a-bot.md"

PRELUDE = """
const grpc = require(%(modules)s + '/@grpc/grpc-js');
const protoLoader = require(%(modules)s + '/@grpc/proto-loader');
const { choose } = require(%(strategy)s);
const definition = protoLoader.loadSync(['abluxxen/v1/bot.proto', 'abluxxen/v1/gateway.proto'], {
  includeDirs: [%(proto)s], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
const { BotGateway } = grpc.loadPackageDefinition(definition).abluxxen.v1;
const HELLO = { name: 'docs-node', version: '1', author: 'the guide', protocol_version: 'PROTOCOL_VERSION_1',
  transports: ['TRANSPORT_STREAM'] };
const TOKEN = process.env.ABLUXX_TOKEN;
const reply = (req) => ({ game_id: req.game_id, seq: req.seq, index: choose(req) });
"""


def _example() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## Host it, or dial in", 1)[1].split("\n## ", 1)[0]
    code = section.split("```js\n", 1)[1].split("```", 1)[0]
    assert "'referee.example.org:50050', grpc.credentials.createSsl()" in code
    return code.replace("'referee.example.org:50050', grpc.credentials.createSsl()",
                        "process.argv[2], grpc.credentials.createInsecure()")  # fmt: skip


def test_the_guides_node_dial_in_example_enters_a_ladder_and_plays(tmp_path: Path, node: str) -> None:  # noqa: F811
    script = tmp_path / "example.js"
    paths = {"modules": NODE_DIR / "node_modules", "strategy": NODE_DIR / "strategy.js", "proto": ROOT / "proto"}
    script.write_text(PRELUDE % {k: json.dumps(str(v)) for k, v in paths.items()} + _example())
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    proc = subprocess.Popen([node, str(script), srv.address], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env={**os.environ, "ABLUXX_TOKEN": ALICE})  # fmt: skip
    try:
        tid = open_ladder(srv)
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the validation game comes first: as long as it takes
        assert line.strip() == "dialled in as mybot.v1", line
        deadline = time.monotonic() + 300
        while len(played := games_of(srv, tid, "mybot.v1")) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len(played) >= 2
        assert all(not seat(g, "mybot.v1").faults for g in played)  # every decision answered, legally and in time
    finally:
        proc.kill()
        proc.wait()
        srv.stop()
