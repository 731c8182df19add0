"""vouch's YAML writer for plain objects: ruamel's exact bytes, or None.

Every knowledge file is written by `yamlio.dump_yaml` through ruamel's round-trip
dumper, and the review gate re-dumps what it reads to check a file is exactly what
vouch writes. ruamel costs ~3 ms a document, and importing it with PyYAML's resolver
~55 ms of a cold command (`vouch show PROPOSAL` pays both), while what vouch writes is
a tiny subset: a mapping of plain keys whose values are one-line strings, numbers,
booleans, null, lists of those, or such mappings again. `dump` writes exactly that
subset, as ruamel does with vouch's settings (block style, mapping indent 2, sequence
items at `  - `, width 4096, strings YAML 1.1 would read as another type single-quoted),
and returns None for anything else (multi-line text, text holding both quotes or a
backslash, number-like strings, floats in exponent form, very long lines, nested
sequences), which
`yamlio.dump_yaml` then hands to ruamel. tests/test_standins.py compares the two on
generated and real documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vouch.core.yamlscalars import Lazy, readable, resolve

_KEY = Lazy(r"[A-Za-z_][A-Za-z0-9_-]{0,99}")
_LEADING = frozenset("#,[]{}&*!|>'\"%@`")  # indicators that may not start plain text
# every character of a YAML 1.1 or 1.2 number, infinity, NaN or timestamp: a string
# that starts like a number and holds only these is left to ruamel
_NUMBER_LIKE = frozenset("0123456789_+-.:eEoOxXbBaAcCdDfFiInNtTzZ ")
_HEX = frozenset("0123456789abcdef")
_RESOLVES_AS_HEX = Lazy(r"[0-9]+|0b[01]*|[0-9]+e[0-9]+")  # int, binary int, 1.2 float
_TIMESTAMP_Z = Lazy(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_PROPOSAL_ID = Lazy(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{8}")  # plain: no number or date reads it
_FLOAT = Lazy(r"-?[0-9]+\.[0-9]+")
_LINE = 4000  # ruamel folds plain text at spaces past column 4096


def dump(data: Mapping[str, Any]) -> str | None:
    """ruamel's round-trip output for `data` with vouch's settings, or None."""
    if not data:
        return None
    lines: list[str] = []
    return "\n".join(lines) + "\n" if _mapping(data, "", lines) else None


def _mapping(data: Mapping[str, Any], indent: str, lines: list[str]) -> bool:
    for key, value in data.items():
        if type(key) is not str or not _KEY.fullmatch(key) or resolve(key) is not key:
            return False
        head = f"{indent}{key}:"
        if isinstance(value, Mapping):
            if not value:
                lines.append(head + " {}")
                continue
            lines.append(head)
            if not _mapping(value, indent + "  ", lines):
                return False
        elif type(value) is list:
            if not value:
                lines.append(head + " []")
                continue
            lines.append(head)
            for item in value:
                text = _scalar(item, len(indent) + 4)
                if not text:
                    return False
                lines.append(f"{indent}  - {text}")
        elif value is None:
            lines.append(head)
        else:
            text = _scalar(value, len(head) + 1)
            if not text:
                return False
            lines.append(f"{head} {text}")
    return True


def _scalar(value: Any, column: int) -> str | None:
    """A scalar as ruamel writes it starting at `column`, or None (also for null)."""
    kind = type(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        text = repr(value)
        return text if _FLOAT.fullmatch(text) else None
    if kind is not str or column + len(value) > _LINE:
        return None
    return _string(value)


def _string(s: str) -> str | None:
    if not s or not readable(s):  # empty, or a line break or a character escaped
        return None
    if s[0] in "-+.0123456789" and _NUMBER_LIKE.issuperset(s):
        if _TIMESTAMP_Z.fullmatch(s):
            return f"'{s}'"
        if _PROPOSAL_ID.fullmatch(s):
            return s
        if not _HEX.issuperset(s) or _RESOLVES_AS_HEX.fullmatch(s):
            return None
    elif resolve(s) is not s:  # YAML 1.1 reads it as a boolean, null or a merge key
        return f"'{s}'" if s.isalpha() or s in ("~", "<<", "=") else None
    if _plain(s):
        return s
    if "'" not in s:
        return f"'{s}'"
    if '"' not in s and "\\" not in s:
        return f'"{s}"'
    return None


def _plain(s: str) -> bool:
    """ruamel's block-plain test (`Emitter.analyze_scalar`) for one line of printable
    text: no leading or trailing space, no document marker, no indicator."""
    first, rest = s[0], s[1:2]
    if first == " " or s[-1] == " " or s.startswith(("---", "...")):
        return False
    if first in _LEADING or (first in "?:-" and rest in ("", " ")):
        return False
    return ": " not in s and " #" not in s and s[-1] != ":"
