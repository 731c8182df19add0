"""Reading the index's chunk rows by id: what a result shows of a chunk (`ChunkInfo`),
its text, its kind and status, a transcript turn's neighbours, a document's headings.

Plain SQL over the index connection, in batches of ids; `Index` (`vouch.index.api`)
guards each read (a damaged index is E002) and answers from memory where a warm process
holds the answer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from vouch.index import store
from vouch.index.filters import Filters
from vouch.index.turnmap import TurnLinks


class ChunkInfo(NamedTuple):  # a tuple: cheap to make (~35 a search) and to define
    """One chunk's metadata and text, as the index holds it."""

    chunk_id: int
    kind: str
    id: str  # the object (document) id
    title: str
    path: str  # repository-relative path of the object's file
    type: str
    status: str
    format: str  # note | markdown | text | code | pdf | binary
    section: str
    page: int | None
    chunk_index: int
    total_chunks: int
    start_line: int | None
    end_line: int | None
    tags: list[str]
    locator: str | None
    text: str
    turn: int | None = None  # a transcript's turn (issue 19)
    speaker: str | None = None
    time: str | None = None
    session: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self._asdict(), "tags": list(self.tags)}


def by_id(
    conn: sqlite3.Connection, sql: str, chunk_ids: Iterable[int], params: Iterable[Any] = ()
) -> Iterator[Any]:
    """The rows of `sql` (its `{marks}` the ids' placeholders, after `params`) for the
    ids, each asked once, in batches SQLite takes."""
    wanted = list(dict.fromkeys(int(c) for c in chunk_ids))
    for part, marks in store.in_batches(wanted):
        yield from conn.execute(sql.format(marks=marks), [*params, *part]).fetchall()


def chunks(conn: sqlite3.Connection, chunk_ids: Iterable[int]) -> dict[int, ChunkInfo]:
    """Chunk metadata by id; ids no longer in the index are left out."""
    rows = list(
        by_id(
            conn,
            "SELECT c.id, c.kind, c.object_id, c.title, c.path, c.type, c.status, "
            "c.format, c.section, c.page, c.chunk_index, c.total_chunks, c.start_line, "
            "c.end_line, c.doc_key, d.locator, c.text, c.turn, c.speaker, c.time, c.session "
            "FROM chunks c JOIN docs d ON d.doc_key = c.doc_key WHERE c.id IN ({marks})",
            chunk_ids,
        )
    )
    tags: dict[str, list[str]] = {}
    keys = list({r[14] for r in rows})
    for part, marks in store.in_batches(keys):
        for key, tag in conn.execute(
            f"SELECT doc_key, tag FROM doc_tags WHERE doc_key IN ({marks}) ORDER BY tag", part
        ):
            tags.setdefault(key, []).append(tag)
    return {
        int(r[0]): ChunkInfo(
            chunk_id=int(r[0]),
            kind=r[1],
            id=r[2],
            title=r[3],
            path=r[4],
            type=r[5],
            status=r[6],
            format=r[7],
            section=r[8],
            page=r[9],
            chunk_index=r[10],
            total_chunks=r[11],
            start_line=r[12],
            end_line=r[13],
            tags=tags.get(r[14], []),
            locator=r[15],
            text=r[16],
            turn=r[17],
            speaker=r[18],
            time=r[19],
            session=r[20],
        )
        for r in rows
    }


def texts(conn: sqlite3.Connection, chunk_ids: Iterable[int]) -> dict[int, str]:
    """Chunk text by id (what `chunks` gives, just the text)."""
    sql = "SELECT id, text FROM chunks WHERE id IN ({marks})"
    return {int(cid): str(text) for cid, text in by_id(conn, sql, chunk_ids)}


def kinds(conn: sqlite3.Connection, chunk_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
    """(kind, status) by chunk id: what the ranking prior needs of every candidate."""
    sql = "SELECT id, kind, status FROM chunks WHERE id IN ({marks})"
    return {int(cid): (str(k), str(s)) for cid, k, s in by_id(conn, sql, chunk_ids)}


def neighbour_pairs(
    conn: sqlite3.Connection, chunk_ids: Iterable[int], around: int
) -> list[tuple[int, int]]:
    """(turn chunk, a turn within `around` of it in the same transcript session), by the
    turn chunk's id, then turn order; other chunks have none."""
    sql = (
        "SELECT h.id, n.id FROM chunks h JOIN chunks n ON n.doc_key = h.doc_key "
        "AND n.session = h.session AND n.turn BETWEEN h.turn - ? AND h.turn + ? "
        "AND n.id != h.id WHERE h.id IN ({marks}) AND h.turn IS NOT NULL "
        "ORDER BY h.id, n.turn, n.id"
    )
    return [(int(h), int(n)) for h, n in by_id(conn, sql, chunk_ids, [around, around])]


def turn_links(
    conn: sqlite3.Connection, chunk_ids: Iterable[int], filters: Filters | None = None
) -> TurnLinks:
    """For the turn chunks among `chunk_ids`: the ids of the turns next to each in the
    same transcript session (±1) that pass `filters`, and the speaker of every turn
    named (one query; other chunks are left out)."""
    where, params = (filters or Filters()).sql("n")
    sql = (
        "SELECT h.id, h.speaker, n.id, n.speaker, h.doc_key, h.session "
        "FROM chunks h LEFT JOIN chunks n "
        "ON n.doc_key = h.doc_key AND n.session = h.session "
        "AND n.turn BETWEEN h.turn - 1 AND h.turn + 1 AND n.id != h.id "
        f"AND {where} WHERE h.id IN ({{marks}}) AND h.turn IS NOT NULL "
        "ORDER BY h.id, n.turn, n.id"
    )
    near: dict[int, list[int]] = {}
    speakers: dict[int, str] = {}
    sessions: dict[int, int] = {}
    codes: dict[object, int] = {}
    for hit, said, other, other_said, key, session in by_id(conn, sql, chunk_ids, params):
        links = near.setdefault(int(hit), [])
        speakers[int(hit)] = str(said or "")
        # a turn without a transcript session is one of its own (SQL's `=` never holds)
        place = (key, session) if key is not None and session is not None else int(hit)
        sessions[int(hit)] = codes.setdefault(place, len(codes))
        if other is not None:
            links.append(int(other))
            speakers[int(other)] = str(other_said or "")
            sessions[int(other)] = sessions[int(hit)]
    return TurnLinks.of(near, speakers, sessions)


def headings(conn: sqlite3.Connection, object_id: str) -> list[dict[str, Any]]:
    """Headings of a page or markdown source, in document order."""
    rows = conn.execute(
        "SELECT text, level, start_line, end_line, path FROM headings WHERE object_id = ? "
        "ORDER BY start_line",
        (object_id,),
    ).fetchall()
    return [
        {"text": t, "level": lv, "start_line": s, "end_line": e, "path": p}
        for t, lv, s, e, p in rows
    ]
