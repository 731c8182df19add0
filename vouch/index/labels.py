"""Every chunk's kind and status, held in memory by a warm process.

A hybrid search asks two things of each of its ~400 candidates: its (kind, status) for
the ranking prior, and whether it passes the search's filters (the vector channel
over-fetches, then filters). One SQL look-up per search answers both in a cold process;
a server answering search after search reads the whole column once per index revision
(~15 ms at 10k chunks) and answers from an array: a few microseconds instead of ~5 ms.
The same array gives the warm lexical ranking and turn links their filter (`mask`).
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
    """(kind, status) by chunk id, as the index held them when read."""

    def __init__(self, conn: sqlite3.Connection):
        import numpy as np

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

    def _code(self, cid: int) -> int:
        return self.codes[cid] if 0 <= cid < len(self.codes) else -1

    def pair(self, cid: int) -> tuple[str, str] | None:
        """(kind, status) of one chunk; None for an id not in the index."""
        code = self.codes[cid] if 0 <= cid < len(self.codes) else -1
        return self.pairs[code] if code >= 0 else None

    def knows(self, cid: int) -> bool:
        return self._code(cid) >= 0

    @staticmethod
    def answers(f: Filters) -> bool:
        """Whether `passing` can decide `f`: it narrows by kind and status only."""
        return not (f.types or f.formats or f.tags or f.speakers or f.since or f.until)

    def passing(self, chunk_ids: Iterable[int], f: Filters) -> set[int]:
        """Which of `chunk_ids` pass `f` (`answers(f)` must hold), as `Filters.sql`
        decides."""
        ok = self._ok(f)
        return {cid for cid in chunk_ids if (code := self._code(cid)) >= 0 and ok[code]}

    def mask(self, f: Filters) -> NDArray[np.bool_]:
        """`passing` for every chunk at once: an array by chunk id (`answers(f)` must
        hold), kept per filter."""
        import numpy as np

        found = self._masks.get(f)
        if found is None:
            ok = np.array([*self._ok(f), False], dtype=np.bool_)  # code -1: no chunk
            found = self._masks[f] = ok[self._table]
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
        """Whether every chunk passes `f` (`answers(f)` must hold): then `f` narrows
        nothing, and a search may go as an unfiltered one."""
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
