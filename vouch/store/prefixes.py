"""Unique prefixes of source ids, taken back as git takes abbreviated commits.

Human output prints a source id as its first 12 hex digits (`f2b6c6cd31ad`, sometimes
followed by `…`); every command and method that takes an id takes that back. A prefix of
at least 8 hex digits names the one source whose sha256 starts with it — found by
listing its one shard directory (`sources/<first two>/`), a few hundred names at 100k
sources — and an ambiguous prefix is refused listing the candidates. Other ids
(`<slug>-<hash8>`, proposals) are short enough to be printed whole, and are taken whole.
A `<prefix>:L10-L20` pointer resolves its source part.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from vouch.errors import InvalidId, NotFound

if TYPE_CHECKING:
    from vouch.store.kb import KB

MIN_PREFIX = 8
_ELLIPSIS = re.compile(r"(?:…|\.\.\.)$")
_PREFIX = re.compile(rf"[0-9a-fA-F]{{{MIN_PREFIX},64}}")
_SHOWN = 5  # candidates named in an ambiguity error


def _split(value: str) -> tuple[str, str]:
    """(id part, `:locator` or ""), the id part without a printed ellipsis."""
    head, colon, rest = value.partition(":")
    return _ELLIPSIS.sub("", head.strip()), colon + rest


def wants_resolving(value: object) -> bool:
    """Is `value` a short or decorated source id (cheap: no file is read)?"""
    if not isinstance(value, str):
        return False
    raw = value.partition(":")[0]
    head = _split(value)[0]
    if not _PREFIX.fullmatch(head):
        return False
    return len(head) < 64 or head != raw or head != head.lower()


def resolve(kb: KB, value: str) -> str:
    """The full source id (with its `:locator`) a prefix names; other values unchanged.

    NotFound when no source starts with the prefix; InvalidId, naming the candidates,
    when several do.
    """
    if not wants_resolving(value):
        return value
    head, locator = _split(value)
    prefix = head.lower()
    if len(prefix) == 64:
        return prefix + locator
    shard = os.path.join(kb.dir, "sources", prefix[:2])
    try:
        names = os.listdir(shard)
    except (FileNotFoundError, NotADirectoryError):
        names = []
    found = sorted(n for n in names if len(n) == 64 and n.startswith(prefix))
    if not found:
        raise NotFound(
            f"no source id starts with {prefix}",
            hint="`vouch list sources` shows every source id",
        )
    if len(found) > 1:
        more = f" (and {len(found) - _SHOWN} more)" if len(found) > _SHOWN else ""
        raise InvalidId(
            f"source id prefix {prefix} is ambiguous: it starts "
            + ", ".join(found[:_SHOWN])
            + more,
            hint="give more of the id",
        )
    return found[0] + locator
