"""Every transcript turn's neighbours and speaker, held in memory by a warm process.

The default ranking scores a turn with its exchange (`search.ranking.in_context`), so
each search asks, for its ~750 fused candidates, which turns sit beside each in the same
session and who spoke them. `Index.turn_links` answers with one SQL join (~6 ms at 100k
turns); a process that searches again reads every turn once per index revision (~0.5 s
at 100k) and answers from memory, in the same order (`tests/test_postings.py`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

AROUND = 1  # turns on each side


class TurnMap:
    """For each turn chunk: the chunks of the turns beside it (turn ±1, same transcript
    and session, by turn then id), and every turn chunk's speaker."""

    def __init__(self, conn: sqlite3.Connection):
        import numpy as np

        rows = conn.execute(
            "SELECT id, doc_key, session, turn, speaker FROM chunks WHERE turn IS NOT NULL "
            "ORDER BY doc_key, session, turn, id"
        ).fetchall()
        ids = [int(r[0]) for r in rows]
        self.speaker: dict[int, str] = {i: str(r[4] or "") for i, r in zip(ids, rows, strict=True)}
        # one number per (transcript, session), rising down the rows; a turn without
        # either gets one of its own (SQL's `=` never holds for NULL): no neighbours
        groups = np.empty(len(rows), dtype=np.int64)
        code, last = -1, None
        for n, (_, key, session, _, _) in enumerate(rows):
            here = (key, session) if key is not None and session is not None else None
            if here is None or here != last:
                code += 1
            groups[n], last = code, here
        turns = np.fromiter((int(r[3]) for r in rows), dtype=np.int64, count=len(rows))
        place = (groups << 32) + turns  # sorted: rows come by group, then turn
        lo = np.searchsorted(place, place - AROUND, side="left").tolist()
        hi = np.searchsorted(place, place + AROUND, side="right").tolist()
        self.near: dict[int, tuple[int, ...]] = {
            cid: tuple(ids[lo[n] : n] + ids[n + 1 : hi[n]]) for n, cid in enumerate(ids)
        }

    def links(
        self, chunk_ids: Iterable[int], passing: bytes | None
    ) -> tuple[dict[int, list[int]], dict[int, str]]:
        """`Index.turn_links` from memory: for the turn chunks among `chunk_ids`, by id,
        the neighbours that pass (`passing[id]` true; None: every chunk passes), and the
        speakers of all of them."""
        near_of, speaker_of = self.near, self.speaker
        near: dict[int, list[int]] = {}
        speakers: dict[int, str] = {}
        size = len(passing) if passing is not None else 0
        for cid in sorted(near_of.keys() & set(chunk_ids)):
            found = near_of[cid]
            kept = list(found) if passing is None else [n for n in found if n < size and passing[n]]
            near[cid] = kept
            speakers[cid] = speaker_of[cid]
            for other in kept:
                speakers[other] = speaker_of[other]
        return near, speakers

    def around(self, chunk_ids: Iterable[int]) -> list[tuple[int, int]]:
        """`Index.neighbours`' pairs from memory: (turn chunk, chunk beside it), by the
        turn chunk's id, then the neighbours' turn order; no filter."""
        hits = sorted({int(c) for c in chunk_ids} & self.near.keys())
        return [(hit, other) for hit in hits for other in self.near[hit]]
