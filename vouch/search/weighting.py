"""How much to trust the vector channel for one query.

Static embeddings rank worse than BM25 when the query's words are in the document
(measured on the golden set, bench/RESULTS.md), but they find documents that say the
same thing in other words, where BM25 only matches incidental words. So the vector
channel's RRF weight depends on how well the best lexical hits cover the query: when
they contain most of its content words the query is keyword-like and lexical ranking
stands; when they do not, the query is a paraphrase and vectors get a full vote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

COVERAGE_HITS = 3  # how many of the best lexical hits are inspected
_WORD = re.compile(r"\w+", re.UNICODE)
# Words that carry no topic: a query made of them says nothing about coverage.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "from",
        "as",
        "at",
        "is",
        "are",
        "be",
        "been",
        "this",
        "that",
        "it",
        "its",
        "into",
        "via",
        "using",
        "use",
        "can",
        "your",
        "you",
        "my",
        "i",
        "me",
        "we",
        "our",
        "their",
        "how",
        "what",
        "which",
        "who",
        "when",
        "where",
        "why",
        "do",
        "does",
        "not",
        "no",
        "all",
        "any",
        "more",
        "most",
        "than",
        "then",
        "so",
        "if",
        "but",
        "about",
        "over",
        "under",
        "up",
        "out",
        "very",
        "just",
        "only",
        "also",
        "get",
        "make",
        "set",
        "way",
        "new",
        "like",
        "well",
        "much",
        "many",
        "there",
        "here",
        "want",
        "need",
    ]
)


def content_stems(text: str) -> list[str]:
    """Distinct lowercase 5-letter stems of the non-stopwords (a cheap porter stand-in)."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if len(word) < 2 or word in STOPWORDS:
            continue
        stem = word[:5]
        if stem not in out:
            out.append(stem)
    return out


def coverage(query: str, texts: Sequence[str]) -> float:
    """The largest share of the query's content stems that one of `texts` contains
    (1.0 for a query with no content words: nothing to paraphrase)."""
    wanted = content_stems(query)
    if not wanted:
        return 1.0
    best = 0.0
    for text in texts:
        have = set(content_stems(text))
        best = max(best, sum(1 for s in wanted if s in have) / len(wanted))
    return best
