"""Query text handling: what counts as empty, and the safe FTS5 match expressions.

Any text is a valid query. Each whitespace-separated token becomes a quoted FTS5 string
(internal quotes doubled), so operators (`AND`, `NEAR`, `*`, `-`, `:`, parentheses)
are searched for as words and can never be an FTS5 syntax error.
"""

from __future__ import annotations

from vouch.errors import EmptyQuery

# RFC-0004: only ASCII whitespace separates tokens.
_ASCII_WS = " \t\n\r\f\v"
MAX_QUERY_CHARS = 4000  # longer input is cut: nobody types more, and FTS cost grows with it
MAX_TERMS = 64


# Control characters are not text: SQLite ends an FTS5 string at NUL ("unterminated
# string"), and none of them can occur in an indexed word.
_CONTROLS = {c: " " for c in (*range(0x00, 0x20), 0x7F) if chr(c) not in _ASCII_WS}


def normalize(query: object) -> str:
    """The query to run; empty, whitespace- or control-character-only → E004."""
    # only ASCII whitespace is whitespace here (RFC-0004): a lone U+00A0 is a token
    text = query.translate(_CONTROLS).strip(_ASCII_WS) if isinstance(query, str) else ""
    if not text:
        raise EmptyQuery("empty query", hint="pass some words to search for")
    return text[:MAX_QUERY_CHARS]


def terms(query: str) -> list[str]:
    """Distinct non-empty tokens, in order, split on ASCII whitespace only."""
    out: list[str] = []
    for token in query.translate({ord(c): " " for c in _ASCII_WS}).split(" "):
        if token and token not in out:
            out.append(token)
        if len(out) >= MAX_TERMS:
            break
    return out


def quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def match_any(query: str) -> str:
    """An FTS5 expression matching chunks with any of the terms (BM25 ranks the rest)."""
    return " OR ".join(quote(t) for t in terms(query))


def match_all(query: str) -> str:
    """An FTS5 expression matching chunks with every term (RFC-0004's bag of words)."""
    return " ".join(quote(t) for t in terms(query))
