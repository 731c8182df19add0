"""Every term's FTS5 instances, kept beside FTS5 as arrays: a warm search's first read
of a word (issue 19).

The warm ranking (`postings.Postings`) needs all of a query word's instances once per
word and index revision. FTS5 hands them over one row at a time through `fts5vocab`
(~0.5 µs an instance: ~1.5 ms for a word in 3,000 of 100k turns, ~50 ms for the
commonest), which was a third of a warm search's first time. So every write of the index
keeps them as well, in `term_instances`: one blob per term and write ("part"), the
instances as sorted int64 `row << 32 | column << 28 | offset`, read back with one
`frombuffer` (~20 µs).

- A full build reads them in one pass over the index's own `fts5vocab` (~2 s at 100k
  turns, against ~7 s a word at a time).
- A refresh reads the rows it inserts from a scratch FTS5 table with the index's
  tokenizer and columns (`fts5.scratch`), as the next part; the ids it deletes go into
  `instances_gone` with that part. Chunk ids are reused (`MAX(id) + 1`), so an instance
  is alive when its part is not older than its row's last deletion.
- A term written in more than MAX_PARTS parts is merged into one; past COMPACT_AT
  deleted ids every term is, and the deletions are forgotten.

Both tables are written in the transaction that changes `chunks`, so they cannot drift
from FTS5 (tests/test_instances.py compares them with `fts5vocab` after random writes).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from vouch.index.lexical.fts5 import COLUMNS, shown
from vouch.index.store import Corrupt, in_batches

if TYPE_CHECKING:
    from numpy.typing import NDArray

ROW, COLUMN = 32, 28  # an instance as one int64: row << 32 | column << 28 | offset
PART_META = "instances_part"  # index_meta: the last part written
MAX_PARTS = 8
# Deleted ids kept before every term is rewritten without its dead instances and the
# list starts afresh (a warm process reads the list once per index revision).
COMPACT_AT = 20_000
_CASE = " ".join(f"WHEN '{name}' THEN {n}" for n, name in enumerate(COLUMNS))
_ALL = "vouch_all_instances"  # a temp fts5vocab table while a full build reads


def write_all(conn: sqlite3.Connection) -> None:
    """A full build's instances, as part 0, from the index's own FTS5 table."""
    conn.execute(
        f"CREATE VIRTUAL TABLE temp.{_ALL} USING fts5vocab('main', 'chunks_fts', 'instance')"
    )
    try:
        conn.executemany(
            "INSERT INTO term_instances(term, part, instances) VALUES (?, 0, ?)",
            _grouped(conn, f"temp.{_ALL}"),
        )
    finally:
        conn.execute(f"DROP TABLE temp.{_ALL}")


def write_changes(
    conn: sqlite3.Connection, part: int, removed: Sequence[int], added: Sequence[int]
) -> None:
    """A refresh's part: rows `removed` are gone as of it, rows `added` (in `chunks`
    already) have their instances in it."""
    conn.executemany(
        "INSERT OR REPLACE INTO instances_gone(id, part) VALUES (?, ?)",
        [(int(r), part) for r in removed],
    )
    if added:
        _add(conn, part, added)
    gone_rows = int(conn.execute("SELECT COUNT(*) FROM instances_gone").fetchone()[0])
    if gone_rows > COMPACT_AT:
        _compact(conn, part)


def _add(conn: sqlite3.Connection, part: int, added: Sequence[int]) -> None:
    with shown(conn, added) as table:
        found = list(_grouped(table, "shown_instances"))
    conn.executemany(
        "INSERT INTO term_instances(term, part, instances) VALUES (?, ?, ?)",
        [(term, part, blob) for term, blob in found],
    )
    _merge(conn, [term for term, _ in found], part)


class Deleted(NamedTuple):
    """The part each row id was last deleted in (0: never), and the latest such part."""

    parts: NDArray[np.int64]
    latest: int


def gone(conn: sqlite3.Connection, size: int) -> Deleted:
    """`Deleted` for ids below `size` and every id deleted."""
    pairs = conn.execute("SELECT id, part FROM instances_gone").fetchall()
    ids = np.array([p[0] for p in pairs], dtype=np.int64)
    parts = np.array([p[1] for p in pairs], dtype=np.int64)
    out = np.zeros(max(size, int(ids.max(initial=-1)) + 1), dtype=np.int64)
    out[ids] = parts
    return Deleted(out, int(parts.max(initial=0)))


def read(conn: sqlite3.Connection, term: str, deleted: Deleted) -> NDArray[np.int64]:
    """Every live instance of `term`, sorted (row, column, offset); `deleted` from
    `gone`. Raises Corrupt when an instance's row is past every row the index had."""
    found = conn.execute(
        "SELECT part, instances FROM term_instances WHERE term = ? ORDER BY part", (term,)
    ).fetchall()
    return _alive(((int(p), bytes(b)) for p, b in found), deleted)


def _alive(parts: Iterable[tuple[int, bytes]], deleted: Deleted) -> NDArray[np.int64]:
    arrays = []
    for part, blob in parts:
        if len(blob) % 8:
            raise Corrupt(f"term_instances holds a blob of {len(blob)} bytes (not int64s)")
        instances = np.frombuffer(blob, dtype=np.int64)
        if len(instances) and int(instances[-1] >> ROW) >= len(deleted.parts):
            row = int(instances[-1] >> ROW)
            raise Corrupt(f"term_instances names row {row}, which the index never had")
        if part < deleted.latest:  # a part written after every deletion holds no dead row
            keep = deleted.parts[instances >> ROW] <= part
            instances = instances if keep.all() else instances[keep]
        arrays.append(instances)
    if not arrays:
        return np.zeros(0, dtype=np.int64)
    if len(arrays) == 1:
        return arrays[0]
    joined = np.concatenate(arrays)
    # a refresh gives its rows ids above every live one (`MAX(id) + 1`): parts in part
    # order are usually sorted already
    ends = [(int(a[0]), int(a[-1])) for a in arrays if len(a)]
    if all(prev[1] < nxt[0] for prev, nxt in pairwise(ends)):
        return joined
    return np.sort(joined)


def _grouped(conn: sqlite3.Connection, vocab: str) -> Iterator[tuple[str, bytes]]:
    """(term, its instances as sorted int64 bytes) from an `fts5vocab` instance table:
    one string a term, parsed by numpy (~3x cheaper than a row an instance)."""
    sql = (
        f"SELECT term, group_concat((doc << {ROW}) | ((CASE col {_CASE} END) << {COLUMN}) "
        f"| offset) FROM {vocab} GROUP BY term"
    )
    for term, joined in conn.execute(sql):
        yield str(term), np.sort(np.fromstring(joined, dtype=np.int64, sep=",")).tobytes()


def _merge(conn: sqlite3.Connection, terms: Sequence[str], part: int) -> None:
    """Each of `terms` held in more than MAX_PARTS parts becomes one part: `part`."""
    crowded: list[tuple[str]] = []
    for batch, marks in in_batches(terms):
        crowded += conn.execute(
            f"SELECT term FROM term_instances WHERE term IN ({marks}) "
            f"GROUP BY term HAVING COUNT(*) > {MAX_PARTS}",
            batch,
        ).fetchall()
    if crowded:
        _rewrite(conn, [str(term) for (term,) in crowded], part)


def _compact(conn: sqlite3.Connection, part: int) -> None:
    """Every term as one part, `part`, without its dead instances; no deletions kept."""
    terms = [str(t) for (t,) in conn.execute("SELECT DISTINCT term FROM term_instances")]
    _rewrite(conn, terms, part)
    conn.execute("DELETE FROM instances_gone")


def _rewrite(conn: sqlite3.Connection, terms: Sequence[str], part: int) -> None:
    """Each of `terms` as one part, `part`, holding its live instances only."""
    size = int(conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM chunks").fetchone()[0])
    deleted = gone(conn, size)
    for term in terms:
        alive = read(conn, term, deleted)
        conn.execute("DELETE FROM term_instances WHERE term = ?", (term,))
        if len(alive):
            conn.execute(
                "INSERT INTO term_instances(term, part, instances) VALUES (?, ?, ?)",
                (term, part, alive.tobytes()),
            )
