"""A tournament's row and its counts (``SqliteStore.tournament``) are read again whenever the database changed:
by another connection's commit (another thread, or ``abluxx tournament run`` in another process) or by this
connection's own writes; between changes the row read before is given again."""

from __future__ import annotations

from pathlib import Path

from referee.store import open_store
from referee.tournament.config import parse
from referee.tournament.runner import create_tournament

CONFIG = {"name": "rows", "seed": 1, "table_size": 2, "deals": 2,
          "entrants": [{"name": "a", "policy": "random"}, {"name": "b", "policy": "random"}]}  # fmt: skip


def test_a_tournaments_counts_follow_every_commit_and_its_row_is_kept_between(tmp_path: Path) -> None:
    with open_store(tmp_path) as store, open_store(tmp_path) as other:
        config = parse(CONFIG, "<test>")
        slots = create_tournament(store, config, "<test>")
        tid = config.tournament_id
        first = store.tournament(tid)
        assert first is not None and (first.games, first.done) == (len(slots), 0)
        assert store.tournament(tid) is first  # nothing changed: no count again
        other.db.execute("UPDATE schedule SET done = 1 WHERE tournament_id = ? AND slot = 0", (tid,))
        assert store.tournament(tid).done == 1  # another connection's commit
        store.db.execute("UPDATE schedule SET done = 1 WHERE tournament_id = ? AND slot = 1", (tid,))
        assert store.tournament(tid).done == 2  # this connection's own write
        assert store.tournament("nope") is None and store.tournament("nope") is None
        other.db.execute("DELETE FROM schedule WHERE tournament_id = ? AND slot = 1", (tid,))
        assert (store.tournament(tid).games, store.tournament(tid).done) == (len(slots) - 1, 1)
