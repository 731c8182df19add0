"""Every chunk's kind and status, held in memory by a warm process.

A hybrid search asks two things of each of its ~400 candidates: its (kind, status) for
the ranking prior, and whether it passes the search's filters (the vector channel
over-fetches, then filters). One SQL look-up per search answers both in a cold process;
a server answering search after search reads the whole column once per index revision
(~15 ms at 10k chunks) and answers from an array: a few microseconds instead of ~5 ms.
The same arrays give the warm lexical ranking, turn links and vector channel their filter
(`mask`): any filter, the ones by speaker, time, tag or type read once per revision.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING

from vouch.index.filters import Filters

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class Labels:
    """(kind, status) by chunk id, as the index held them when read; and which chunks
    pass a filter, as `Filters.sql` decides: by kind and status from the labels, any
    other filter (speaker, time, tags, type) by one SQL scan, kept per filter."""

    KEPT = 64  # filters whose masks are kept (100k chunks: 100 kB each)

    def __init__(self, conn: sqlite3.Connection):
        import numpy as np

        self._conn = conn
        pairs: dict[tuple[str, str], int] = {}
        ids: list[int] = []
        codes: list[int] = []
        for cid, kind, status in conn.execute("SELECT id, kind, status FROM chunks"):
            ids.append(int(cid))
            codes.append(pairs.setdefault((str(kind), str(status)), len(pairs)))
        self.pairs = list(pairs)  # code -> (kind, status)
        table = np.full(max(ids, default=0) + 1, -1, dtype=np.int32)
        table[ids] = codes
        self._table = table
        self._masks: dict[Filters, NDArray[np.bool_]] = {}
        self._all: dict[Filters, bool] = {}
        self._flags: dict[Filters, bytes] = {}
        # a list, not the array: a search looks up a few hundred ids one at a time, and
        # indexing a list is ~10x cheaper than reading a numpy scalar
        self.codes: list[int] = table.tolist()

    def codes_of(self, chunk_ids: NDArray[np.int64]) -> NDArray[np.int64]:
        """Each chunk's number into `pairs`, -1 for an id not in the index."""
        import numpy as np

        inside = (chunk_ids >= 0) & (chunk_ids < len(self._table))
        codes = np.full(len(chunk_ids), -1, dtype=np.int64)
        codes[inside] = self._table[chunk_ids[inside]]
        return codes

    def knows(self, cid: int) -> bool:
        return 0 <= cid < len(self.codes) and self.codes[cid] >= 0

    @staticmethod
    def answers(f: Filters) -> bool:
        """Whether the labels alone decide `f` (by kind and status): no SQL."""
        return not (f.types or f.formats or f.tags or f.speakers or f.since or f.until)

    def passing(self, chunk_ids: Iterable[int], f: Filters) -> set[int]:
        """Which of `chunk_ids` pass `f`; an id not in the index does not."""
        flags = self.flags(f)
        codes, size = self.codes, len(self.codes)
        if flags is None:
            return {cid for cid in chunk_ids if 0 <= cid < size and codes[cid] >= 0}
        return {cid for cid in chunk_ids if 0 <= cid < size and flags[cid]}

    def mask(self, f: Filters) -> NDArray[np.bool_]:
        """Whether each chunk passes `f`: an array by chunk id, kept per filter."""
        import numpy as np

        found = self._masks.get(f)
        if found is None:
            if self.answers(f):
                ok = np.array([*self._ok(f), False], dtype=np.bool_)  # code -1: no chunk
                found = ok[self._table]
            else:
                where, params = f.sql("c")
                rows = self._conn.execute(f"SELECT c.id FROM chunks c WHERE {where}", params)
                ids = np.fromiter((r[0] for r in rows), dtype=np.int64)
                found = np.zeros(len(self._table), dtype=np.bool_)
                found[ids[ids < len(found)]] = True
            if len(self._masks) >= self.KEPT:
                self._masks.clear()
                self._flags.clear()
            self._masks[f] = found
        return found

    def flags(self, f: Filters) -> bytes | None:
        """`mask` as bytes (indexing bytes is ~3x cheaper than a numpy array, one id at a
        time), None when every chunk passes."""
        if self.everything(f):
            return None
        found = self._flags.get(f)
        if found is None:
            found = self._flags[f] = self.mask(f).tobytes()
        return found

    def everything(self, f: Filters) -> bool:
        """Whether every chunk passes `f`: then `f` narrows nothing, and a search may go
        as an unfiltered one."""
        found = self._all.get(f)
        if found is None:
            found = self._all[f] = bool(self.mask(f)[self._table >= 0].all())
        return found

    def _ok(self, f: Filters) -> list[bool]:
        return [
            (not f.kinds or kind in f.kinds)
            and (not f.statuses or status in f.statuses)
            and status not in f.exclude_statuses
            for kind, status in self.pairs
        ]
