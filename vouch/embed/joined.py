"""Vectors of texts joined by newlines, made from each part's tokens.

A transcript turn's vector is made of the turn with its neighbours (`index.chunking`),
so every turn's text is in up to three vectors; embedding the joined texts tokenized
each turn three times, and the turns rebuilt slower than a document corpus of the same
size. model2vec's vector of a text is the mean of its tokens' rows, normalised; with a
BERT tokenizer a newline only separates words, so the tokens of `"a\\nb"` are those of
`a` then those of `b`, and with an int8 table the row sums are exact integers whatever
their order. So each distinct part is tokenized and summed once, and a joined text's
vector is its parts' sums over their token counts, cast and normalised as model2vec
does: the same float32 bits (tests/test_index_embed.py compares them with model2vec on
real and generated transcripts).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

_BATCH = 8192  # parts tokenized at once


def splits_cleanly(tokenizer: Any, table: np.ndarray) -> bool:
    """Whether texts joined by a newline tokenize as their parts do, and sums of this
    table's rows are exact: a BERT normalizer and pre-tokenizer, and int8 rows."""
    import numpy as np

    return (
        type(tokenizer.normalizer).__name__ == "BertNormalizer"
        and type(tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer"
        and type(tokenizer.model).__name__ == "WordPiece"
        and table.dtype == np.int8
    )


def encode(
    items: Sequence[tuple[str, ...]],
    tokenizer: Any,
    table: np.ndarray,
    unk_id: int | None,
    max_tokens: int,
    max_chars: int,
) -> tuple[np.ndarray, list[int]]:
    """The vector of `"\\n".join(parts)` for each item, and the positions of the items
    it left out (zero rows: a joined text model2vec would truncate)."""
    import numpy as np

    where: dict[str, int] = {}
    width = max(len(parts) for parts in items)
    slots = np.full((len(items), width), -1, dtype=np.int64)  # -1: the zero row below
    chars = np.zeros(len(items), dtype=np.int64)
    for row, parts in enumerate(items):
        slots[row, : len(parts)] = [where.setdefault(p, len(where)) for p in parts]
        chars[row] = sum(map(len, parts)) + len(parts) - 1
    sums, counts, raw = _part_sums(list(where), tokenizer, table, unk_id)
    total = sums[slots].sum(axis=1)
    kept = counts[slots].sum(axis=1)
    # model2vec keeps max_chars characters, then max_tokens tokens, of a text: a part at
    # the limit may have been cut, so the limit itself counts as over it
    over = (raw[slots].sum(axis=1) >= max_tokens) | (chars > max_chars)
    mean = np.zeros(total.shape, dtype=np.float64)
    np.divide(total, kept[:, None], out=mean, where=kept[:, None] > 0)
    out32 = mean.astype(np.float32)
    norm = np.linalg.norm(out32, axis=1, keepdims=True) + 1e-32
    vectors: np.ndarray = (out32 / norm).astype(np.float32)
    vectors[over] = 0.0
    return vectors, [int(i) for i in np.flatnonzero(over)]


def _part_sums(
    parts: list[str], tokenizer: Any, table: np.ndarray, unk_id: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per part, and a last zero row: the int64 sum of its known tokens' rows, their
    number, and its token count as tokenized (unknowns and truncation included)."""
    import numpy as np

    sums = np.zeros((len(parts) + 1, table.shape[1]), dtype=np.int64)
    counts = np.zeros(len(parts) + 1, dtype=np.int64)
    raw = np.zeros(len(parts) + 1, dtype=np.int64)
    for start in range(0, len(parts), _BATCH):
        encodings = tokenizer.encode_batch_fast(
            parts[start : start + _BATCH], add_special_tokens=False
        )
        ids = [e.ids for e in encodings]
        raw[start : start + len(ids)] = [len(i) for i in ids]
        if unk_id is not None:
            ids = [[t for t in i if t != unk_id] for i in ids]
        counts[start : start + len(ids)] = [len(i) for i in ids]
        by_length: dict[int, list[int]] = {}
        for n, i in enumerate(ids):
            if i:
                by_length.setdefault(len(i), []).append(n)
        for rows in by_length.values():  # as model2vec does: one gather per length
            matrix = np.array([ids[n] for n in rows], dtype=np.int64)
            sums[start + np.array(rows)] = table[matrix].sum(axis=1, dtype=np.int64)
    return sums, counts, raw
