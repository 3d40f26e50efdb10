"""A record served before its deal is revealed (withhold_deal): `abluxx verify` and the bot kit's
verify_commitment say "not yet", never "mismatch"; once revealed, both check the commitment."""

from __future__ import annotations

from pathlib import Path

import pytest
from abluxx_bot import DealNotRevealed as KitNotRevealed
from abluxx_bot import verify_commitment

from referee.cli import main
from referee.records import DealNotRevealed, record_bytes, record_selfplay, verify_record, withhold_deal


def test_a_withheld_record_keeps_the_commitment_and_result_and_nothing_of_the_deal() -> None:
    whole = record_selfplay(4, ["ann", "bob"], game_id="g")
    out = withhold_deal(whole)
    assert out.deal_withheld and out.complete
    assert out.header.commitment == whole.header.commitment and out.header.players == whole.header.players
    assert list(out.footer.scores) == list(whole.footer.scores) and list(out.footer.places) == list(whole.footer.places)
    assert not out.header.deck and not out.header.seed and not out.footer.salt and not out.footer.final_digest
    assert not out.decisions  # their events show the cards drawn from the pile
    assert whole.header.deck and whole.decisions  # the original is untouched
    with pytest.raises(DealNotRevealed, match="deal not yet revealed"):
        verify_record(out)


def test_abluxx_verify_says_not_yet_for_a_withheld_record_saved_to_a_file(tmp_path: Path, capsys) -> None:
    whole = record_selfplay(4, ["ann", "bob"], game_id="g")
    path = tmp_path / "g.abluxx"
    path.write_bytes(record_bytes(withhold_deal(whole)))  # the file format has no deal_withheld flag
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "deal not yet revealed" in out and "mismatch" not in out
    path.write_bytes(record_bytes(whole))
    assert main(["verify", str(path)]) == 0


def test_verify_commitment_checks_a_revealed_deal_and_says_not_yet_for_a_withheld_one() -> None:
    whole = record_selfplay(4, ["ann", "bob"], game_id="g")
    assert verify_commitment(whole) and verify_commitment(whole, whole.header.commitment)
    assert not verify_commitment(whole, bytes(32))  # not the commitment this bot was sent
    swapped = type(whole)()
    swapped.CopyFrom(whole)
    swapped.header.deck[0], swapped.header.deck[1] = whole.header.deck[1], whole.header.deck[0]
    assert swapped.header.deck != whole.header.deck and not verify_commitment(swapped)
    with pytest.raises(KitNotRevealed, match="not yet revealed"):
        verify_commitment(withhold_deal(whole))
