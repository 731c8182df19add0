"""Text from files and branches made printable, for every layer that renders it.

A file name, a comment or a claim may hold a newline or another unprintable character;
printed raw, it would add lines of its own to what people read (a fake row in a
listing) or drive the terminal. `escaped` makes one line of a value; `screen` keeps
lines and tabs. Both write every other unprintable character as its escape (`\\n`,
`\\x1b`); printable text, non-ASCII included, is left alone. `vouch.cli.oneline` gives
them to the CLI; the search results' human format (`vouch.search.human`) uses them here.
"""

from __future__ import annotations

import re


def escaped(text: str) -> str:
    """`text` on one line: every unprintable character written as its escape."""
    return _shown(text, "")


def screen(text: str) -> str:
    """`text` for a terminal: lines and tabs kept, every other unprintable character
    written as its escape."""
    return _shown(text, "\n\t")


def _shown(text: str, kept: str) -> str:
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in kept else repr(ch)[1:-1] for ch in text)


_MD_PUNCT = re.compile(r"([\\`*_\[\]()!#|~{}+\-.:@])")


def md_text(text: object) -> str:
    """`text` on one line as inert markdown prose: every character markdown (or a host's
    extensions: mentions, autolinks) could act on is escaped, HTML written as entities —
    so a claim's `[a](javascript:…)`, `![](tracker)` or `<img>` reads as what it is."""
    line = " ".join(str(text).split())
    line = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_PUNCT.sub(r"\\\1", line)


def md_code(text: object) -> str:
    """`text` on one line as a markdown code span: nothing in it is rendered (HTML,
    comments, mentions, links, emphasis), whatever backticks it holds."""
    line = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", line)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if line.startswith("`") or line.endswith("`") or not line else ""
    return f"{fence}{pad}{line}{pad}{fence}"
