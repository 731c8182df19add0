"""HTML that is escaped unless marked: every value put into a page is text until a
function of this module says it is markup. Object text, file names and comments are
hostile input; escaping is the default, never a step to remember."""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Iterable


class Html(str):
    """A string that is markup already (made by `tag`, `fill` or `join`)."""

    __slots__ = ()


def escape(value: object) -> Html:
    """`value` as HTML: markup as is, anything else as text (quotes escaped too), with
    invisible format characters (bidirectional overrides, zero-width marks) written out
    as `\\u202e`: a right-to-left override would otherwise draw `$1000000` from the text
    `0000001$`, and a reviewer would approve what they did not read."""
    if isinstance(value, Html):
        return value
    text = "" if value is None else str(value)
    if not text.isascii():
        text = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c for c in text)
    return Html(html.escape(text, quote=True))


def fill(template: str, *values: object) -> Html:
    """`template` (a literal of this package, `{}` for each value) with each value
    escaped; the template itself is trusted markup."""
    return Html(template.format(*(escape(v) for v in values)))


def join(parts: Iterable[object], sep: str = "") -> Html:
    return Html(sep.join(escape(p) for p in parts))
