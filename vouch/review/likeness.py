"""How alike a proposed text and an approved one are, as a figure a reviewer can read.

A search ranks whatever matches best, however little that is: the review screen's
look-alikes need an absolute measure instead. With vectors on, it is the cosine of the
two texts' vectors (the index's own model and weighting); a lexical-only knowledge base
(`embedding.enabled: false`) uses the Dice overlap of their content words.

The bars were set on a real knowledge base (the requests documentation, nine approved
claims): reworded duplicates ("Requests never times out by default; pass timeout=" vs
"If no timeout is specified explicitly, requests do not time out") score 0.64-0.89 by
cosine and 0.40-0.60 by words; unrelated claims of the same library (a proxy claim vs
an HTTP Basic Auth one) at most 0.30 and 0.31; related but distinct ones (method-level
parameters vs session cookies) 0.47 and 0.24.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from vouch.errors import EmbeddingDisabled
from vouch.store.kb import KB

COSINE_BAR = 0.5  # vectors: below it, two texts say different things
WORDS_BAR = 0.4  # content words, when there are no vectors
_WORD = re.compile(r"[^\W_]+")
# common words, negations included: a contradiction says the opposite in the same words
_COMMON = (
    "a an and are as at be by can could do does for from has have how if in into is it "
    "its may must no not of on or should so than that the their them then there these "
    "they this those to was we were what when which while who will with without would "
    "you your"
)
_STOP = frozenset(_COMMON.split())


def words(text: str) -> frozenset[str]:
    """The content words of `text`: lower-cased, common words dropped, a plural `s`
    trimmed (`requests` and `request` are one word)."""
    out = set()
    for word in _WORD.findall(text.casefold()):
        if word in _STOP:
            continue
        out.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return frozenset(out)


def words_alike(a: str, b: str) -> float:
    """The Dice overlap of two texts' content words (0: none shared, 1: the same)."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    return 2 * len(wa & wb) / (len(wa) + len(wb))


def likeness(
    kb: KB, text: str, others: Sequence[str], warm: dict[str, Any]
) -> tuple[list[float], str, float]:
    """(how alike `text` is to each of `others`, the measure — `cosine` or `words` —, and
    the bar a look-alike reaches)."""
    if not others:
        return [], "cosine", COSINE_BAR
    from vouch.search.access import open_index

    try:
        vectors = open_index(kb, warm).index.embed_texts([text, *others])
    except EmbeddingDisabled:
        return [round(words_alike(text, o), 3) for o in others], "words", WORDS_BAR
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1)
    out = []
    for vector, norm in zip(vectors[1:], norms[1:], strict=True):
        both = float(norm * norms[0])
        out.append(round(float(np.dot(vectors[0], vector)) / both, 3) if both > 0 else 0.0)
    return out, "cosine", COSINE_BAR
