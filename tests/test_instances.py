"""FTS5's instances kept beside it (vouch/index/lexical/instances.py) are FTS5's own:
compared with `fts5vocab` itself after a full build and after refreshes that add,
delete and rewrite objects (chunk ids reused, terms merged)."""

from __future__ import annotations

import random
import sqlite3

import numpy as np
import pytest
from index_support import claim, commit

from vouch.errors import IndexUnusable
from vouch.index.filters import Filters
from vouch.index.lexical import instances
from vouch.search import access
from vouch.search.request import SEARCH_KINDS
from vouch.store import supplied
from vouch.store.kb import KB

WORDS = [
    "deploy",
    "deploying",
    "rollback",
    "canary",
    "us-east-1",
    "pool_size",
    "billing",
    "invoice",
    "café",
    "Ärger",
    "postgres",
    "migration",
    "schema",
    "owner",
    "alert",
    "pager",
    "incident",
    "review",
    "token",
    "rotate",
    "cache",
]


def _fts5s_own(conn: sqlite3.Connection) -> dict[str, list[int]]:
    """Every term's instances as FTS5 hands them over, one row at a time."""
    columns = {str(r[1]): n for n, r in enumerate(conn.execute("PRAGMA table_info(chunks_fts)"))}
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.oracle "
        "USING fts5vocab('main', 'chunks_fts', 'instance')"
    )
    out: dict[str, list[int]] = {}
    for term, doc, col, offset in conn.execute("SELECT term, doc, col, offset FROM temp.oracle"):
        out.setdefault(term, []).append((doc << 32) | (columns[col] << 28) | offset)
    return {term: sorted(found) for term, found in out.items()}


def _kept(conn: sqlite3.Connection) -> dict[str, list[int]]:
    size = int(conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM chunks").fetchone()[0])
    deleted = instances.gone(conn, size)
    terms = [t for (t,) in conn.execute("SELECT DISTINCT term FROM term_instances")]
    kept = {t: instances.read(conn, t, deleted).tolist() for t in terms}
    return {t: found for t, found in kept.items() if found}


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))


@pytest.mark.parametrize("compact_at", [instances.COMPACT_AT, 12])
def test_kept_instances_are_fts5s_own_after_every_write(
    kb: KB, monkeypatch: pytest.MonkeyPatch, compact_at: int
) -> None:
    """...and after compactions, when a few deleted ids are already too many."""
    monkeypatch.setattr(instances, "COMPACT_AT", compact_at)
    compacted = False
    rng = random.Random(3)
    files = []
    for _ in range(30):
        obj = claim(kb, _text(rng))
        files.append(next(kb.dir.rglob(f"*{obj['id']}*")))
    commit(kb)
    searcher = access.open_index(kb, {})
    conn = searcher.index.conn
    assert _kept(conn) == _fts5s_own(conn)
    assert conn.execute("SELECT DISTINCT part FROM term_instances").fetchall() == [(0,)]
    first = {int(i) for (i,) in conn.execute("SELECT id FROM chunks")}
    reused = False
    for round_ in range(12):
        # the newest claim holds the highest ids: deleted, its ids go to the next chunks
        for path in [files[-1], *rng.sample(files[:-1], 2)]:
            files.remove(path)
            path.unlink()
        for _ in range(rng.randint(1, 4)):
            obj = claim(kb, _text(rng) + f" round{round_}")
            files.append(next(kb.dir.rglob(f"*{obj['id']}*")))
        if round_ % 4 == 1:
            turns = "\n".join(f"Ann: {_text(rng)}" for _ in range(6))
            supplied.register_source(kb, f"t{round_}", turns + "\n", "chat.txt", type="transcript")
        commit(kb)
        searcher = access.open_index(kb, {})
        conn = searcher.index.conn
        part = int(searcher.index.meta[instances.PART_META])
        now = {int(i) for (i,) in conn.execute("SELECT id FROM chunks")}
        gone = conn.execute("SELECT id FROM instances_gone WHERE part = ?", (part,)).fetchall()
        reused = reused or any(int(i) in now for (i,) in gone)
        assert _kept(conn) == _fts5s_own(conn), round_
        kept = conn.execute("SELECT COUNT(*) FROM instances_gone").fetchone()[0]
        assert kept <= compact_at
        compacted = compacted or (kept == 0 and round_ > 0)
    if compact_at < instances.COMPACT_AT:
        assert compacted
        return
    assert reused  # an id deleted and given to a new chunk: its old instances are dead
    parts = conn.execute("SELECT term, COUNT(*) FROM term_instances GROUP BY term").fetchall()
    assert max(n for _, n in parts) <= instances.MAX_PARTS
    # merged: a refresh's part holds rows the full build wrote (and no refresh deleted)
    gone = {int(i) for (i,) in conn.execute("SELECT id FROM instances_gone")}
    merged = {
        term
        for term, part, blob in conn.execute("SELECT * FROM term_instances WHERE part > 0")
        if set((np.frombuffer(blob, dtype=np.int64) >> 32).tolist()) & (first - gone)
    }
    assert merged


def test_a_row_no_index_had_is_damage_not_a_hit(kb: KB) -> None:
    """A term_instances blob naming a row past every row the index had is refused as a
    damaged index (E002, rebuilt on the next open), never ranked."""
    for n in range(5):
        claim(kb, f"deploy rollback canary {n}")
    commit(kb)
    searcher = access.open_index(kb, {})
    conn = searcher.index.conn
    bogus = np.array([(10_000 << 32) | (2 << 28)], dtype=np.int64).tobytes()
    conn.execute("INSERT INTO term_instances VALUES ('zebra', 99, ?)", (bogus,))
    conn.execute("INSERT INTO term_instances VALUES ('quokka', 99, ?)", (b"\x01\x02\x03",))
    searcher.steady = (searcher.revision, 2)  # a warm process: ranks from the instances
    for word in ("zebra", "quokka"):
        with pytest.raises(IndexUnusable):
            searcher.lexical(word, 10, Filters.of(kinds=SEARCH_KINDS))


def test_parts_read_together_are_one_sorted_array() -> None:
    """A term's parts come back as one array in (row, column, offset) order whatever the
    parts' order, without the rows deleted after a part was written."""
    from vouch.index import store

    conn = sqlite3.connect(":memory:")
    store.create_schema(conn, "porter unicode61")

    def blob(*rows: int) -> bytes:
        return np.array([(r << 32) | (2 << 28) for r in rows], dtype=np.int64).tobytes()

    conn.execute("INSERT INTO term_instances VALUES ('t', 0, ?)", (blob(5, 9),))
    conn.execute("INSERT INTO term_instances VALUES ('t', 2, ?)", (blob(3, 7),))
    conn.execute("INSERT INTO instances_gone VALUES (9, 1), (7, 3)")
    rows = instances.read(conn, "t", instances.gone(conn, 8)) >> 32
    assert rows.tolist() == [3, 5]
