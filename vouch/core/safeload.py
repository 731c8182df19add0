"""Bounds on every YAML and JSON text vouch reads from a repository, a branch, a bundle
or a transcript (DESIGN §4.1): no anchors or aliases, bounded depth and size.

vouch writes no anchor, alias or deep nesting, so a file holding one was written
elsewhere, and it is the cheapest way to make a parser do unbounded work: nine nested
aliases in 700 bytes expand to a billion values, `&x [*x]` is a value that holds itself,
and libyaml's composer recurses in C, so ten thousand `[` crash the process. Each is
refused here before any parser builds a value: `CorruptFile` naming the file and line.

Reading stays cheap. A YAML text is scanned token by token (`_scan`, libyaml's event
parser, which does not recurse) only when a byte check says it could hold what is
refused: `&` or `*` where an anchor or alias can start (`R&D` cannot), more than a few
brackets, or a line whose indentation and compact indicators reach past `_BLOCK_COLUMNS`
(each level of block nesting needs a column of its own, at most two levels a column).
JSON needs no scan: the standard parser stops at Python's recursion limit, which is
reported as the same error, and a value with many brackets is measured after parsing.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vouch.errors import CorruptFile

MAX_DEPTH = 64  # nesting levels: vouch writes at most four
MAX_YAML_CHARS = 1 << 20  # a YAML document (a file, a page's frontmatter): 1 MiB
MAX_PAGE_CHARS = 16 << 20  # a page (frontmatter and markdown body): 16 MiB

_FLOW_BRACKETS = 24  # fewer `[` and `{` than this bound the flow depth below it
_BLOCK_COLUMNS = 16  # no line indented this far: block depth below 2 * (16 + 1)
# `&`/`*` where libyaml can start an anchor or alias: the start of the text, after a
# blank or line break (YAML 1.1 also breaks lines at NEL, LS and PS), a byte-order mark,
# or a flow indicator (`?` and `:` are indicators right before a value in flow context)
_MAYBE_ALIAS = re.compile(r"(?:^|[\s\ufeff\[\]{},:?])[&*]")
# a line whose leading spaces and compact indicators (`- `, `? `, `: `; libyaml skips a
# byte-order mark in column 0) reach that column: at the start, after a newline (a
# literal first, so the search is fast), or after any other line break the text holds
_RUN = re.compile(r"[ \t?:\-\ufeff]{%d}" % _BLOCK_COLUMNS)  # noqa: UP031
_DEEP_LINE = re.compile(r"\n" + _RUN.pattern)
_DEEP_ANY = re.compile(r"[\n\r\x85\u2028\u2029]" + _RUN.pattern)
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
_FIX = "vouch writes none: restore the file vouch wrote, or write each value out in full"

assert 2 * (_BLOCK_COLUMNS + 1) + _FLOW_BRACKETS < MAX_DEPTH


class Unreadable(CorruptFile):
    """A text refused here: `where` and `detail` (what is wrong, without the name)."""

    def __init__(self, where: str, detail: str, *, hint: str | None = _FIX):
        super().__init__(f"{where}: {detail}", hint=hint)
        self.where = where
        self.detail = detail


def too_large(where: str, size: int, limit: int, what: str = "a YAML document") -> Unreadable:
    return Unreadable(
        where,
        f"{size} characters, more than vouch reads in {what} ({limit >> 20} MiB)",
        hint="a knowledge file is small; restore the file vouch wrote (`git log -p -- FILE`)",
    )


def check_size(
    text: str, where: str, limit: int = MAX_YAML_CHARS, what: str = "a YAML document"
) -> None:
    if len(text) > limit:
        raise too_large(where, len(text), limit, what)


def check_yaml(text: str, where: str) -> None:
    """CorruptFile unless `text` is a YAML document vouch may parse: at most
    MAX_YAML_CHARS, no anchor or alias, nested at most MAX_DEPTH deep."""
    check_size(text, where)
    if needs_scan(text):
        _scan(text, where)


def needs_scan(text: str) -> bool:
    """False when `text` cannot hold an anchor, an alias or nesting past MAX_DEPTH:
    a few substring tests, ~2 us for a knowledge file (a scan costs ~60 us)."""
    if ("&" in text or "*" in text) and _MAYBE_ALIAS.search(text) is not None:
        return True
    if text.count("[") + text.count("{") >= _FLOW_BRACKETS:
        return True
    if _RUN.match(text) is not None:
        return True
    deep = _DEEP_ANY if any(b in text for b in _OTHER_BREAKS) else _DEEP_LINE
    return deep.search(text) is not None


def _scan(text: str, where: str) -> None:
    """Walk libyaml's events (a loop, no recursion, no values built), refusing the first
    anchor, alias or level past MAX_DEPTH."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    depth = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            anchor = getattr(event, "anchor", None)
            line = event.start_mark.line + 1 if event.start_mark is not None else 0
            if isinstance(event, yaml.AliasEvent):
                raise _refused(where, line, f"a YAML alias (*{anchor})")
            if anchor is not None:
                raise _refused(where, line, f"a YAML anchor (&{anchor})")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _refused(where, line, f"values nested more than {MAX_DEPTH} deep")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):
            # PyYAML 6.0.4 and later stop libyaml's scanner at their own depth limit,
            # which it may reach ahead of the events this loop counts
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else 0
            raise _refused(where, line, f"values nested more than {MAX_DEPTH} deep") from None
        raise CorruptFile(f"cannot parse {where}: {exc}") from None


def _refused(where: str, line: int, what: str) -> Unreadable:
    return Unreadable(f"{where} line {line}", f"{what}, which vouch does not read")


def check_depth(value: Any, where: str) -> None:
    """CorruptFile when a parsed value nests lists and mappings more than MAX_DEPTH deep
    (a loop, so any depth is measured without recursing)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, dict | list):
                if depth >= MAX_DEPTH:
                    raise Unreadable(where, f"values nested more than {MAX_DEPTH} deep")
                stack.append((child, depth + 1))


def json_value(text: str | bytes, where: str) -> Any:
    """The value of one JSON text; CorruptFile (never RecursionError) when it is not
    JSON or nests more than MAX_DEPTH deep."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise Unreadable(where, f"values nested more than {MAX_DEPTH} deep") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, huge integers
        raise Unreadable(where, f"not JSON ({str(exc)[:120]})", hint=None) from None
    if isinstance(value, dict | list) and _brackets(text) > MAX_DEPTH:
        check_depth(value, where)
    return value


def _brackets(text: str | bytes) -> int:
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")
