"""A reader for the plain YAML that vouch itself writes, for bulk indexing only.

Parsing a claim file with libyaml costs ~0.2 ms — most of a 100k-object rebuild — while
the index needs a handful of string fields. vouch's own files (ruamel, block style) are
a tiny subset of YAML: `key: scalar`, `key: []`, `key: {}`, and `key:` followed by
`  - item` lines, with plain, single-quoted or simple double-quoted scalars. This reader accepts
exactly that subset and returns None for anything else (comments, flow collections,
escapes, multi-line or unusual scalars, hand-edited layouts), so the caller falls back
to the real parser. Plain scalars YAML would read as null, booleans or numbers come
back as NOT_STRING (never as text), so a string field is only accepted when YAML would
give the same string.
"""

from __future__ import annotations

import re
from typing import Any

NOT_STRING: Any = object()
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NON_STRING_PLAIN = re.compile(
    r"^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON"
    r"|off|Off|OFF|[-+]?[0-9][0-9_,.:eE+-]*|[-+]?\.[0-9].*|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN)|0b[01_]+|0x[0-9a-fA-F_]+|0o?[0-7_]+|=|<<"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*)$")
_UNSAFE_START = frozenset("&*!|>{}[]%@`#,")
# Characters YAML reads as themselves: no controls, no BOM, no NEL/LS/PS line breaks.
_PLAIN_TEXT = re.compile(
    "^[\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
    "\U00010000-\U0010ffff]*$")
_FAIL: Any = object()


def _scalar(s: str) -> Any:
    if not s:
        return _FAIL
    first = s[0]
    if first == "'":
        inner = s[1:-1]
        if len(s) < 2 or s[-1] != "'" or "'" in inner.replace("''", ""):
            return _FAIL
        return inner.replace("''", "'")
    if first == '"':
        inner = s[1:-1]
        if len(s) < 2 or s[-1] != '"' or "\\" in inner or '"' in inner:
            return _FAIL
        return inner
    if first in _UNSAFE_START or (first in "-?:" and (len(s) == 1 or s[1] == " ")):
        return _FAIL
    if s != s.strip() or " #" in s or ": " in s or s.endswith(":") or "\t" in s or "\r" in s:
        return _FAIL
    if _NON_STRING_PLAIN.match(s):
        return NOT_STRING
    return s


def parse(text: str) -> dict[str, Any] | None:
    """The mapping in `text`, or None when it is not in vouch's plain subset."""
    if not _PLAIN_TEXT.match(text):
        return None
    out: dict[str, Any] = {}
    open_list: str | None = None
    for line in text.split("\n"):
        if not line:
            continue
        if line.startswith("  - "):
            if open_list is None:
                return None
            item = _scalar(line[4:])
            if item is _FAIL:
                return None
            out[open_list].append(item)
            continue
        if line[0] in " #-\t%":
            return None
        key, sep, rest = line.partition(": ")
        if not sep:
            if not line.endswith(":"):
                return None
            key, rest = line[:-1], ""
        if not _KEY.match(key) or key in out:
            return None
        if open_list is not None and not out[open_list]:
            out[open_list] = None  # `key:` with nothing under it is null
        open_list = None
        if rest == "":
            out[key] = []
            open_list = key
        elif rest == "[]":
            out[key] = []
        elif rest == "{}":
            out[key] = {}
        else:
            value = _scalar(rest)
            if value is _FAIL:
                return None
            out[key] = None if value is NOT_STRING and rest in ("~", "null", "Null",
                                                                 "NULL") else value
    if open_list is not None and not out[open_list]:
        out[open_list] = None
    return out


def split_page(text: str) -> tuple[dict[str, Any], str] | None:
    """(frontmatter, body) of a page file in vouch's own layout (`---`, YAML, `---`, a
    blank line, the body), or None for any other layout."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end < 0:
        end = text.find("\n---", 3)
        if end < 0 or text[end + 4:].strip():
            return None
    meta = parse(text[4:end + 1])
    if meta is None:
        return None
    return meta, text[end + 5:].strip("\n")
