"""Caps that hold under concurrent calls (issue 20 item 5): 25 concurrent SubmitBot calls once admitted 41 bots
of one author past the 20-bot cap, and two authors submitting one new address at once were both accepted. 100
concurrent calls over real gRPC to a real server, with a real bot behind the address."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

from .helpers import ALICE, BOB, start_bots, start_server, stub, submit, write_settings

CALLS = 100


def _outcome(s, name: str, address: str, token: str) -> str:
    try:
        r = submit(s, name, address, token, timeout=600)
    except grpc.RpcError as e:
        return e.code().name
    return f"accepted:{r.entrant.owner}" if r.HasField("entrant") else f"refused:{r.refusal.reason}"


def test_100_concurrent_submissions_respect_the_bots_per_author_cap_and_one_author_per_address(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", write_settings(tmp_path))
    bots = start_bots(["greedy", "random"])
    try:
        s = stub(srv.address)
        with ThreadPoolExecutor(CALLS) as pool:
            # one author, 100 new names at once: the default cap is 20
            got = list(pool.map(lambda i: _outcome(s, f"alice-{i}", bots[0].address, ALICE), range(CALLS)))
        accepted = [g for g in got if g.startswith("accepted")]
        assert len(accepted) == 20, sorted(set(got))
        assert all(g in ("accepted:alice", "RESOURCE_EXHAUSTED") for g in got), sorted(set(got))
        with ThreadPoolExecutor(CALLS) as pool:
            # two authors, one new address, at once: it belongs to one of them
            calls = [(f"x-{i}", ALICE if i % 2 else BOB) for i in range(CALLS)]
            got = list(pool.map(lambda c: _outcome(s, c[0], bots[1].address, c[1]), calls))
        owners = {g.split(":")[1] for g in got if g.startswith("accepted")}
        assert len(owners) == 1, sorted(set(got))
        assert {g for g in got if not g.startswith("accepted")} <= {"ALREADY_EXISTS", "RESOURCE_EXHAUSTED"}
    finally:
        for b in bots:
            b.stop()
        srv.stop()
