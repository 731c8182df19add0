"""How much to trust the vector channel for one query.

Static embeddings rank worse than BM25 when the query's words are in the document
(measured on the golden set, bench/RESULTS.md), but they find documents that say the
same thing in other words, where BM25 only matches incidental words. So the vector
channel's RRF weight depends on how well the best lexical hits cover the query: when
they contain most of its content words the query is keyword-like and lexical ranking
stands; when they do not, the query is a paraphrase and vectors get a full vote.
Coverage is a share, so a long question whose best hit holds six of its ten words would
look as uncovered as a short paraphrase matching two incidental ones: the count of words
held (`held_words`) tells them apart.
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


# English function words dropped from the lexical query on top of STOPWORDS: with FTS5's
# idf, question words that sit in 5-30 % of short texts ("did", "her", "when") outweigh
# the content words (measured on conversation turns: research/search-calibration-locomo).
# Coverage keeps the shorter STOPWORDS list, on which the fusion gate was tuned.
_FUNCTION_WORDS = """
    am was were being have has had having did doing done would should could might must
    shall he him his himself she her hers herself they them theirs themselves
    itself its us ours ourselves yours yourself yourselves myself mine these those
    whom whose there's what's who's that's a's isn't aren't wasn't weren't hasn't haven't
    hadn't doesn't don't didn't won't wouldn't shouldn't couldn't can't cannot mustn't
    i'm i've i'd i'll you're you've you'd you'll he's she's it's we're we've we'd we'll
    they're they've they'd they'll let's
    each few other some such own same too nor both either neither every
    again further once during before after above below between through against among
    upon off down until while because though although unless since whether
    ever never always often sometimes already yet still even quite rather
    s t d ll m o re ve y
"""
QUERY_STOPWORDS = STOPWORDS | frozenset(_FUNCTION_WORDS.split())


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


def held_words(query: str, texts: Sequence[str]) -> tuple[int, int]:
    """(held, wanted): the most of the query's content stems that one of `texts` contains,
    and how many the query has."""
    wanted = content_stems(query)
    best = 0
    for text in texts:
        have = set(content_stems(text))
        best = max(best, sum(1 for s in wanted if s in have))
    return best, len(wanted)


def coverage(query: str, texts: Sequence[str]) -> float:
    """The largest share of the query's content stems that one of `texts` contains
    (1.0 for a query with no content words: nothing to paraphrase)."""
    held, wanted = held_words(query, texts)
    return held / wanted if wanted else 1.0
