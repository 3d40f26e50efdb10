"""Secret deals through the service (docs/security.md): keys stay in the store, an old tournament without one is
not started, public deals are the organiser's explicit choice, and validation games are dealt at random."""

from __future__ import annotations

import json
from pathlib import Path

import grpc

from referee.proto.abluxxen.v1 import referee_pb2 as ref_pb
from referee.service.settings import SettingsError
from referee.service.settings import parse as parse_settings
from referee.store import open_store
from referee.tournament.config import parse
from referee.tournament.runner import create_tournament

from .helpers import ORGANISER, auth, config, error_of, start_server, stub, write_settings

POLICIES = [{"name": n, "policy": p} for n, p in (("a", "random"), ("b", "greedy"), ("c", "counter"))]


def test_an_old_tournament_without_a_deal_key_is_not_started(tmp_path: Path) -> None:
    data = tmp_path / "data"
    cfg = parse({"name": "old", "entrants": POLICIES}, "<test>")
    with open_store(data) as store:
        create_tournament(store, cfg, "t")
        store.db.execute("DELETE FROM deal_keys")  # as a referee before deal keys left it
    srv = start_server(data, write_settings(tmp_path))
    try:
        s = stub(srv.address)
        e = error_of(s.StartTournament, ref_pb.StartTournamentRequest(tournament_id=cfg.tournament_id),
                     metadata=auth(ORGANISER))  # fmt: skip
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "no secret deal key" in e.details() and "public_deals = true" in e.details()

        # a new tournament gets a key that no reply shows; public deals are there only when the organiser asks
        secret = s.CreateTournament(ref_pb.CreateTournamentRequest(config=config("new", POLICIES)),
                                    metadata=auth(ORGANISER))  # fmt: skip
        public = s.CreateTournament(ref_pb.CreateTournamentRequest(config=config("pub", POLICIES, public_deals=True)),
                                    metadata=auth(ORGANISER))  # fmt: skip
        assert "public_deals" not in json.loads(secret.config_json)
        assert json.loads(public.config_json)["public_deals"] is True
    finally:
        srv.stop()
    with open_store(data) as store:
        assert store.deal_key(secret.tournament_id) is not None and store.deal_key(public.tournament_id) is None
        key = store.deal_key(secret.tournament_id)
    assert key.hex() not in srv.log.read_text() and key.hex() not in secret.SerializeToString().hex()


def test_a_fixed_validation_seed_is_refused_with_the_reason(tmp_path: Path) -> None:
    try:
        parse_settings({"service": {"validation_seed": 1}}, "server.toml", env={})
    except SettingsError as e:
        assert "service.validation_seed" in str(e) and "fresh random deck" in str(e)
    else:
        raise AssertionError("validation_seed was accepted")
