"""Every transcript turn's neighbours and speaker, held in memory by a warm process.

The default ranking scores a turn with its exchange (`search.ranking.in_context`), so
each search asks, for its ~750 fused candidates, which turns sit beside each in the same
session and who spoke them (`TurnLinks`). `Index.turn_links` answers with one SQL join
(~6 ms at 100k turns); a process that searches again reads every turn once per index
revision (~0.5 s at 100k) and answers from arrays, in the same order
(`tests/test_postings.py`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # numpy loads when a turn is ranked: a cold lexical search never needs it
    import numpy as np
    from numpy.typing import NDArray

AROUND = 1  # turns on each side
_WORD = re.compile(r"\w+")


class Speakers:
    """Speaker names by number, and which of them a query names."""

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self._words = [frozenset(_WORD.findall(name.casefold())) for name in self.names]
        self._by_word: dict[str, list[int]] = {}
        for code, words in enumerate(self._words):
            for word in words:
                self._by_word.setdefault(word, []).append(code)
        # a name of no word at all ("?") is named by every query, as "every word" says
        self._wordless = [c for c, name in enumerate(self.names) if name and not self._words[c]]

    def named(self, query: str) -> list[int]:
        """The speakers (numbers) whose name's every word (case-folded) the query holds."""
        words = set(_WORD.findall(query.casefold()))
        found = set(self._wordless)
        for word in words:
            found.update(c for c in self._by_word.get(word, ()) if self._words[c] <= words)
        return sorted(found)


class TurnLinks(NamedTuple):
    """The turns among some chunks, with their neighbours: `source[i]` (a turn chunk,
    by id) sits beside `target[i]` (a turn of the same session that passes the search's
    filter), by source then the neighbours' turn order. `turns` are the turn chunks
    asked about (sorted); `table` gives a chunk's speaker as a number into `speakers` (-1:
    none) and `sessions` its session (a number the same for the turns of one session of
    one transcript, -1: none), both known at least for the turns and their neighbours
    here."""

    source: NDArray[np.int64]
    target: NDArray[np.int64]
    turns: NDArray[np.int64]
    table: NDArray[np.int64]
    speakers: Speakers
    sessions: NDArray[np.int64]

    def __bool__(self) -> bool:
        return bool(len(self.turns))

    @classmethod
    def of(
        cls,
        near: Mapping[int, Sequence[int]],
        speakers: Mapping[int, str],
        sessions: Mapping[int, int] | None = None,
    ) -> TurnLinks:
        """From the neighbours of each turn, the speakers by chunk and the sessions by
        chunk (SQL's answer; without sessions, each turn is a session of its own)."""
        import numpy as np

        codes: dict[str, int] = {}
        table = np.full(max(speakers, default=0) + 1, -1, np.int64)
        for chunk, name in speakers.items():
            table[chunk] = codes.setdefault(name, len(codes))
        groups = np.full(len(table), -1, np.int64)
        for chunk, group in (sessions if sessions is not None else {c: c for c in near}).items():
            groups[chunk] = group
        return cls(
            source=np.array([c for c, near_c in near.items() for _ in near_c], np.int64),
            target=np.array([n for near_c in near.values() for n in near_c], np.int64),
            turns=np.array(sorted(near), np.int64),
            table=table,
            speakers=Speakers(list(codes)),
            sessions=groups,
        )

    def speaker_of(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        """The speaker (a number into `speakers`) of each of `keys`, which are turns asked
        about or their neighbours here, or other chunks (-1)."""
        import numpy as np

        inside = (keys >= 0) & (keys < len(self.table))
        return np.where(inside, self.table[np.where(inside, keys, 0)], -1)

    def session_of(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        """The session (a number) of each of `keys`, as `speaker_of`; -1 for none."""
        import numpy as np

        inside = (keys >= 0) & (keys < len(self.sessions))
        return np.where(inside, self.sessions[np.where(inside, keys, 0)], -1)

    def speaking(self, code: int) -> bool:
        """Whether speaker `code` said one of the turns or their neighbours here."""
        table = self.table
        return bool((table[self.turns] == code).any() or (table[self.target] == code).any())


def _spans(starts: NDArray[np.int64], counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """`starts[i], starts[i] + 1, …` `counts[i]` numbers for each i, end to end."""
    import numpy as np

    total = int(counts.sum())
    offsets = np.cumsum(counts) - counts  # where each span begins in the output
    return np.repeat(starts - offsets, counts) + np.arange(total, dtype=np.int64)


class TurnMap:
    """For each turn chunk: the chunks of the turns beside it (turn ±1, same transcript
    and session, by turn then id), and every turn chunk's speaker; arrays by chunk id."""

    def __init__(self, conn: sqlite3.Connection):
        import numpy as np

        rows = conn.execute(
            "SELECT id, doc_key, session, turn, speaker FROM chunks WHERE turn IS NOT NULL "
            "ORDER BY doc_key, session, turn, id"
        ).fetchall()
        ids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
        # one number per (transcript, session), rising down the rows; a turn without
        # either gets one of its own (SQL's `=` never holds for NULL): no neighbours
        groups = np.empty(len(rows), dtype=np.int64)
        code, last = -1, None
        names: dict[str, int] = {}
        said = np.empty(len(rows), dtype=np.int64)
        for n, (_, key, session, _, speaker) in enumerate(rows):
            here = (key, session) if key is not None and session is not None else None
            if here is None or here != last:
                code += 1
            groups[n], last = code, here
            said[n] = names.setdefault(str(speaker or ""), len(names))
        turns = np.fromiter((int(r[3]) for r in rows), dtype=np.int64, count=len(rows))
        place = (groups << 32) + turns  # sorted: rows come by group, then turn
        lo = np.searchsorted(place, place - AROUND, side="left")
        hi = np.searchsorted(place, place + AROUND, side="right")
        beside = _spans(lo, hi - lo)  # each row's window, itself included
        own = np.repeat(np.arange(len(rows)), hi - lo)
        size = int(ids.max()) + 1 if len(ids) else 1
        self.speakers = Speakers(list(names))
        self._flat = ids[beside[beside != own]]  # neighbours, row after row
        self._count = np.zeros(size, np.int64)
        self._count[ids] = hi - lo - 1
        self._start = np.zeros(size, np.int64)
        self._start[ids] = np.cumsum(hi - lo - 1) - (hi - lo - 1)
        self._speaker = np.full(size, -1, np.int64)
        self._speaker[ids] = said
        self._session = np.full(size, -1, np.int64)
        self._session[ids] = groups

    def _turns(self, chunk_ids: Iterable[int]) -> NDArray[np.int64]:
        """The turn chunks among `chunk_ids`, sorted, once each."""
        import numpy as np

        given = chunk_ids if isinstance(chunk_ids, np.ndarray) else list(chunk_ids)
        keys = np.asarray(given, dtype=np.int64)
        keys = keys[(keys > 0) & (keys < len(self._speaker))]
        return np.unique(keys[self._speaker[keys] >= 0])

    def links(self, chunk_ids: Iterable[int], passing: NDArray[np.bool_] | None) -> TurnLinks:
        """`Index.turn_links` from memory: the turn chunks among `chunk_ids`, by id, with
        the neighbours that pass (`passing[id]`; None: every chunk passes)."""
        import numpy as np

        turns, source, target = self._pairs(chunk_ids)
        if passing is not None:
            inside = target < len(passing)
            ok = np.zeros(len(target), np.bool_)
            ok[inside] = passing[target[inside]]
            source, target = source[ok], target[ok]
        return TurnLinks(source, target, turns, self._speaker, self.speakers, self._session)

    def around(self, chunk_ids: Iterable[int]) -> list[tuple[int, int]]:
        """`Index.neighbours`' pairs from memory: (turn chunk, chunk beside it), by the
        turn chunk's id, then the neighbours' turn order; no filter."""
        _, source, target = self._pairs(chunk_ids)
        return list(zip(source.tolist(), target.tolist(), strict=True))

    def _pairs(
        self, chunk_ids: Iterable[int]
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """The turn chunks among `chunk_ids` (sorted), and each one's neighbours as
        (source, target) pairs: by source, then the neighbours' turn order."""
        import numpy as np

        turns = self._turns(chunk_ids)
        counts = self._count[turns]
        target = self._flat[_spans(self._start[turns], counts)]
        return turns, np.repeat(turns, counts), target
