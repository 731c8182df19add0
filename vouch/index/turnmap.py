"""Every transcript turn's neighbours and speaker, held in memory by a warm process.

The default ranking scores a turn with its exchange (`search.ranking.in_context`), so
each search asks, for its ~750 fused candidates, which turns sit beside each in the same
session and who spoke them. `Index.turn_links` answers with one SQL join (~6 ms at 100k
turns); a process that searches again reads every turn once per index revision (~0.2 s
at 100k) and answers from memory, in the same order (`tests/test_postings.py`).
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable

AROUND = 1  # turns on each side


class TurnMap:
    """For each turn chunk: the chunks of the turns beside it (turn ±1, same transcript
    and session, by turn then id), and every turn chunk's speaker."""

    def __init__(self, conn: sqlite3.Connection):
        self.near: dict[int, tuple[int, ...]] = {}
        self.speaker: dict[int, str] = {}
        rows = conn.execute(
            "SELECT id, doc_key, session, turn, speaker FROM chunks WHERE turn IS NOT NULL "
            "ORDER BY doc_key, session, turn, id"
        ).fetchall()
        for (key, session), group in itertools.groupby(rows, key=lambda r: (r[1], r[2])):
            turns = list(group)
            for n, (cid, _, _, turn, said) in enumerate(turns):
                self.speaker[int(cid)] = str(said or "")
                if key is None or session is None:  # SQL's `=` never holds for NULL
                    self.near[int(cid)] = ()
                    continue
                lo = n
                while lo > 0 and turns[lo - 1][3] >= turn - AROUND:
                    lo -= 1
                hi = n
                while hi + 1 < len(turns) and turns[hi + 1][3] <= turn + AROUND:
                    hi += 1
                self.near[int(cid)] = tuple(int(turns[m][0]) for m in range(lo, hi + 1) if m != n)

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
