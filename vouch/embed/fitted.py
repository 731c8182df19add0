"""Token weights fitted to a knowledge base's own text.

A static model's vector of a text is the mean of its tokens' rows. The bundled model
already weighs each token by how common it is in general English (SIF over Zipf ranks,
folded into its rows); a knowledge base has its own common words ("package", "file",
a product's name) that say little about which of its texts a query means. So when the
index is built, each token's document frequency over the texts it embeds is counted,
and every vector — documents, turn windows, queries — is the weighted mean

    v(text) = normalise(sum_t w(t) row(t) / n),  w(t) = sqrt(idf(t)),
    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

(the smoothed idf of BM25: never zero, so no text's vector vanishes). Chosen on the
tuning half of the 7,600-document evaluation set among idf powers 0.35-1, plain and
smoothed idf, and SIF over corpus frequencies (a plateau around the square root);
bench/RESULTS.md reports every set's held-out half.

A knowledge base of fewer than `MIN_TEXTS` texts is not fitted (its counts say nothing):
its vectors are model2vec's own. A window of several texts (a transcript turn with its
neighbours) is the weighted mean of its parts' tokens, each part tokenized (and cut at
the model's limit) once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np

    from vouch.core.progress import Progress

MIN_TEXTS = 64  # below this many distinct texts the index is not fitted
_BATCH = 8192  # texts tokenized at once


class Fit(NamedTuple):
    """Document frequencies of every token over `texts` distinct texts. (NamedTuples,
    not dataclasses: this module is imported by every cold search, and a dataclass
    costs ~1 ms to define.)"""

    texts: int
    df: np.ndarray  # int64, one per vocabulary row

    def weights(self) -> np.ndarray:
        return weights(self.df, self.texts)


def weights(df: np.ndarray, texts: int) -> np.ndarray:
    """w(t) for document frequencies `df` over `texts` texts (float64); counts outside
    0..texts (a damaged index) are taken as their nearest bound, never NaN."""
    import numpy as np

    df = np.clip(np.asarray(df, dtype=np.float64), 0, max(texts, 0))
    out: np.ndarray = np.sqrt(np.log1p((texts - df + 0.5) / (df + 0.5)))
    return out


class Tokenized(NamedTuple):
    """Distinct texts as token ids, flat: text i is `ids[starts[i]:starts[i + 1]]`
    (unknown tokens dropped)."""

    ids: np.ndarray  # int64
    starts: np.ndarray  # int64, len(texts) + 1


def tokenize(
    texts: Sequence[str],
    encode_batch: Callable[[list[str]], list[list[int]]],
    progress: Progress | None,
) -> Tokenized:
    """`encode_batch(texts)` -> one list of known token ids per text, in batches
    (progress is reported between them)."""
    import numpy as np

    lengths = np.zeros(len(texts) + 1, dtype=np.int64)
    flat: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    for start in range(0, len(texts), _BATCH):
        batch = encode_batch(list(texts[start : start + _BATCH]))
        sizes = [len(ids) for ids in batch]
        lengths[start + 1 : start + 1 + len(batch)] = sizes
        flat.append(np.fromiter(chain.from_iterable(batch), dtype=np.int64, count=sum(sizes)))
        if progress:
            progress("indexing: embedding", min(start + _BATCH, len(texts)), len(texts))
    return Tokenized(np.concatenate(flat), np.cumsum(lengths))


def count(tokens: Tokenized, vocab: int) -> Fit:
    """Each token's number of texts (a text counts a token once)."""
    import numpy as np

    texts = len(tokens.starts) - 1
    owner = np.repeat(np.arange(texts, dtype=np.int64), np.diff(tokens.starts))
    pairs = np.sort(owner * vocab + tokens.ids)  # np.unique: ~80x slower on 3M pairs
    first = np.ones(len(pairs), dtype=bool)
    np.not_equal(pairs[1:], pairs[:-1], out=first[1:])
    return Fit(texts, np.bincount(pairs[first] % vocab, minlength=vocab).astype(np.int64))


def sums(tokens: Tokenized, table: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per text, and a last zero row: sum of w(t) row(t) over its tokens (float64).

    One small product per text (its weights times its rows): ~10 µs a text, where one
    gather of every token's rows and a segmented sum read gigabytes at 100k texts and
    took ten times longer. A text's sum is the same whatever texts surround it."""
    import numpy as np

    texts = len(tokens.starts) - 1
    out = np.zeros((texts + 1, table.shape[1]), dtype=np.float64)
    starts, ids = tokens.starts.tolist(), tokens.ids
    for i in range(texts):
        if starts[i + 1] > starts[i]:
            span = ids[starts[i] : starts[i + 1]]
            out[i] = w[span] @ table[span]
    return out


def encode(
    items: Sequence[tuple[str, ...]], tokens: Tokenized, where: dict[str, int], summed: np.ndarray
) -> np.ndarray:
    """The weighted vector of each item (its parts' tokens together): `where` maps a
    part to its text in `tokens`, whose weighted row sums are `summed`."""
    import numpy as np

    width = max((len(parts) for parts in items), default=1)
    zero = len(tokens.starts) - 1  # the zero row of `summed`
    slots = np.full((len(items), width), zero, dtype=np.int64)
    for row, parts in enumerate(items):
        slots[row, : len(parts)] = [where[p] for p in parts]
    counts = np.append(np.diff(tokens.starts), 0)
    total = summed[slots].sum(axis=1)
    kept = counts[slots].sum(axis=1)
    return normalised(total, kept)


def normalised(total: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """Means of `total` rows over `kept` tokens, as float32 unit vectors (zero for a
    text without known tokens)."""
    import numpy as np

    mean = np.zeros(total.shape, dtype=np.float64)
    np.divide(total, kept[:, None], out=mean, where=kept[:, None] > 0)
    out32 = mean.astype(np.float32)
    norm = np.linalg.norm(out32, axis=1, keepdims=True) + 1e-32
    out: np.ndarray = (out32 / norm).astype(np.float32)
    return out
