"""Text from files and bundles on a terminal, as it is.

A file name, a bundle member's name or a message quoting one may hold a newline or
another unprintable character; printed raw, it would add lines of its own to what
people read (a fake "wrote …" or "ok" line). Such characters are written as their
escapes (`\\n`, `\\x1b`); printable text, non-ASCII included, is left alone. `--json`
output is exact and needs none of this.

`escaped` makes one line of a value; `screen` is the last step of every human view
(search, list, show, the review screen, errors): line breaks stay, and any other
control character — an escape sequence in a claim or a source, which would recolour,
erase or rewrite what the reviewer reads, or set their clipboard — shows as its escape.
"""

from __future__ import annotations


def escaped(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def screen(text: str) -> str:
    """`text` for a terminal: lines and tabs kept, every other unprintable character
    written as its escape."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in "\n\t" else repr(ch)[1:-1] for ch in text)
