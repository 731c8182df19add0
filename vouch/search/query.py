"""Query text handling: what counts as empty, and what is cut or dropped before a search.

Any text is a valid query: `vouch.index.lexical.fts5_query` quotes every token, so
operators (`AND`, `NEAR`, `*`, `-`, `:`, parentheses) are searched for as words.
"""

from __future__ import annotations

from vouch.errors import EmptyQuery

# RFC-0004: only ASCII whitespace separates tokens.
_ASCII_WS = " \t\n\r\f\v"
MAX_QUERY_CHARS = 4000  # longer input is cut: nobody types more, and FTS cost grows with it


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
