"""Text from files and bundles on one terminal line, as it is.

A file name, a bundle member's name or a message quoting one may hold a newline or
another unprintable character; printed raw, it would add lines of its own to what
people read (a fake "wrote …" or "ok" line). Such characters are written as their
escapes (`\\n`, `\\x1b`); printable text, non-ASCII included, is left alone. `--json`
output is exact and needs none of this.
"""

from __future__ import annotations


def escaped(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
