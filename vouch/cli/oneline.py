"""Text from files and bundles on a terminal, as it is.

A file name, a bundle member's name or a message quoting one may hold a newline or
another unprintable character; printed raw, it would add lines of its own to what
people read (a fake "wrote …" or "ok" line). Such characters are written as their
escapes (`\\n`, `\\x1b`); printable text, non-ASCII included, is left alone.

`escaped` makes one line of a value (every path and locator a human view prints);
`screen` is the last step of every human view (search, list, show, the review screen,
errors): line breaks stay, and any other control character — an escape sequence in a
claim or a source, which would recolour, erase or rewrite what the reviewer reads, or
set their clipboard — shows as its escape. Both live in `vouch.core.printable`.
`json_screen` does the same for `--json` output in JSON's own terms: the JSON reads back
to the exact text.
"""

from __future__ import annotations

import json
import re

from vouch.core.printable import escaped, screen

__all__ = ["escaped", "json_screen", "screen"]

_NOT_ASCII = re.compile(r"[^\x00-\x7e]")  # and DEL, which JSON leaves raw


def json_screen(text: str) -> str:
    """JSON text (`ensure_ascii=False`) for a terminal: JSON escapes C0 controls itself
    but writes DEL, C1 controls (U+009B reads as ESC [ on many terminals) and other
    unprintable characters (bidirectional overrides) raw; those become `\\u` escapes,
    so the JSON decodes to the same values."""

    def unseen(found: re.Match[str]) -> str:
        ch = found.group()
        return ch if ch.isprintable() else json.dumps(ch)[1:-1]

    return _NOT_ASCII.sub(unseen, text)
