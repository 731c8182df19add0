"""The index's fit of token weights to its corpus (`vouch.embed.fitted`): kept, read, renewed.

A full build counts every token's document frequency over the texts it embeds and
stores it in `token_df`, with `fit_texts` (how many texts) and `fit_chunks` (how many
chunks the index then held) in `index_meta`; `fit_texts` 0 means not fitted for want of
texts, `UNFITTABLE` (-1) a model vouch cannot weigh (or none): model2vec's own vectors.
A refresh embeds what changed under the stored fit, so every vector of one index shares
its weights; the refresh that would take the corpus to twice (or half) the chunks of
the last full build — or an unfitted one to `fitted.MIN_TEXTS` — is a full build
instead, which fits anew. A query reads the counts of just its own tokens.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vouch.embed import fitted
from vouch.index import store

if TYPE_CHECKING:
    import numpy as np

    from vouch.embed.model import Weigh

GROWTH = 2.0  # a refit is due once the chunks number this many times those fitted (or 1/x)


UNFITTABLE = -1  # fit_texts of an index whose model cannot weigh tokens (or has none)


def meta_values(fit: fitted.Fit | None, chunks: int, fittable: bool) -> dict[str, object]:
    """`index_meta` of a full build: `fit`, or why there is none (UNFITTABLE, or 0: too
    few texts), and the chunks it was built with."""
    return {
        "fit_texts": fit.texts if fit else 0 if fittable else UNFITTABLE,
        "fit_vocab": len(fit.df) if fit else 0,
        "fit_chunks": chunks,
    }


def write(conn: sqlite3.Connection, fit: fitted.Fit | None) -> None:
    """Store `fit`'s counts (inside the caller's transaction; the table starts empty)."""
    if fit is None:
        return
    import numpy as np

    seen = np.flatnonzero(fit.df)
    conn.executemany(
        "INSERT INTO token_df(token, df) VALUES (?, ?)",
        zip(seen.tolist(), fit.df[seen].tolist(), strict=True),
    )


def describe(meta: store.Meta) -> dict[str, object]:
    """For `vouch index status`: whether the vectors are fitted, on how many texts, or
    why not."""
    n = texts(meta)
    why = None if n > 0 else "too few texts" if n == 0 else "the model cannot weigh tokens"
    return {"fitted": n > 0, "texts": max(n, 0), "chunks": int(meta["fit_chunks"]), "why_not": why}


def texts(meta: store.Meta) -> int:
    """How many texts the index's weights were fitted on (0 or UNFITTABLE: not fitted)."""
    try:
        return int(meta.values.get("fit_texts", "0"))
    except ValueError as exc:
        raise store.Corrupt(f"index_meta holds an unparsable fit_texts: {exc}") from exc


def load(conn: sqlite3.Connection, meta: store.Meta) -> fitted.Fit | None:
    """The stored fit, whole (a refresh embeds under it); None when not fitted."""
    n = texts(meta)
    if n <= 0:
        return None
    import numpy as np

    df = np.zeros(int(meta.values.get("fit_vocab", "0")), dtype=np.int64)
    for token, count in conn.execute("SELECT token, df FROM token_df"):
        if not (isinstance(count, int) and 0 <= token < len(df)):
            raise store.Corrupt(f"token_df holds {token!r}: {count!r}")
        df[token] = count
    return fitted.Fit(n, df)


def weigh(conn: sqlite3.Connection, meta: store.Meta) -> Weigh | None:
    """Token ids -> weights, reading only the asked tokens' counts; None when the index
    is not fitted."""
    n = texts(meta)
    if n <= 0:
        return None

    def weights(ids: Sequence[int]) -> np.ndarray:
        import numpy as np

        wanted = sorted(set(ids))
        found: dict[int, int] = {}
        for part, marks in store.in_batches(wanted):
            sql = f"SELECT token, df FROM token_df WHERE token IN ({marks})"
            found.update((t, c) for t, c in conn.execute(sql, part) if isinstance(c, int))
        return fitted.weights(np.array([found.get(i, 0) for i in ids], dtype=np.int64), n)

    return weights


def refit_due(meta: store.Meta, chunks: int) -> bool:
    """Whether a corpus of about `chunks` chunks has moved far enough from the fit that
    a full build (which fits anew) should replace the refresh that would reach it."""
    n = texts(meta)
    built_with = int(meta.values.get("fit_chunks", "0"))
    if n == UNFITTABLE:
        return False
    if n == 0:  # too few texts then: fit once there are enough, and the corpus grew
        return chunks >= max(fitted.MIN_TEXTS, GROWTH * built_with)
    return chunks >= GROWTH * built_with or chunks * GROWTH <= built_with
