"""Snippets for hits the lexical channel did not supply (vector-only hits).

FTS5's `snippet()` marks the terms it matched; a vector hit has no matched terms, so we
mark the query's words where they occur (case-insensitive, word prefix, so `install`
marks `installation` as porter stemming would) around the first occurrence, in the same
`[MATCH]…[/MATCH]` form and the same window of about 32 tokens.
"""

from __future__ import annotations

import re

WINDOW_TOKENS = 32
ELLIPSIS = "..."
_WORD = re.compile(r"\w+", re.UNICODE)


def _stems(query: str) -> list[str]:
    out = []
    for word in _WORD.findall(query.lower()):
        stem = word[:5] if len(word) > 5 else word
        if len(stem) >= 2 and stem not in out:
            out.append(stem)
    return out


def make_snippet(text: str, query: str, window: int = WINDOW_TOKENS) -> str:
    tokens = text.split()
    if not tokens:
        return ""
    stems = _stems(query)

    def hit(token: str) -> bool:
        words = _WORD.findall(token.lower())
        return any(w.startswith(s) for w in words for s in stems)

    first = next((i for i, t in enumerate(tokens) if hit(t)), None)
    start = 0 if first is None else max(0, first - window // 4)
    piece = tokens[start : start + window]
    marked = [f"[MATCH]{t}[/MATCH]" if hit(t) else t for t in piece]
    out = " ".join(marked)
    if start > 0:
        out = ELLIPSIS + out
    if start + window < len(tokens):
        out += ELLIPSIS
    return out
