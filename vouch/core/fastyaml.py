"""vouch's one YAML reader: PyYAML's exact answer for plain files, or PyYAML itself.

Every knowledge file and config.yaml is read here (`load`, `load_page`). Parsing a small
file with libyaml costs ~0.2 ms, and importing PyYAML ~10 ms of a cold command, while
what vouch writes (ruamel, block style) and what a configuration file usually is form a
tiny subset of YAML: nested `key: scalar` / `key:` mappings, `key: []`, `key: {}`, and
`key:` followed by deeper `- scalar` lines, with full-line comments. `parse` reads exactly
that subset and returns None for anything else (flow collections, anchors, tags,
trailing comments, escapes, multi-line scalars, tabs, duplicate keys, ...), and `load`
then hands the text to PyYAML (`yamlio`).

A plain scalar is resolved with PyYAML's own YAML 1.1 rules (the regular expressions of
`yaml.resolver`, copied): text stays text; booleans and nulls are exact; the simplest
integers and decimals are converted as PyYAML converts them; any other number, a
timestamp or `<<` sends the whole file to PyYAML. tests/test_standins.py compares the
two on generated and real files.
"""

from __future__ import annotations

from typing import Any

from vouch.core import safeload, yamlio
from vouch.core.yamlscalars import FAIL, Lazy, readable, resolve

_KEY = Lazy(r"[A-Za-z_][A-Za-z0-9_-]*")
_UNSAFE_START = frozenset("&*!|>{}[]%@`#,")


def _scalar(s: str) -> Any:
    """The value of a one-line scalar (plain, single- or double-quoted), or FAIL."""
    first = s[0]
    if first == "'":
        inner = s[1:-1]
        if len(s) < 2 or s[-1] != "'" or "'" in inner.replace("''", ""):
            return FAIL
        return inner.replace("''", "'")
    if first == '"':
        inner = s[1:-1]
        if len(s) < 2 or s[-1] != '"' or "\\" in inner or '"' in inner:
            return FAIL
        return inner
    if first in _UNSAFE_START or (first in "-?:" and (len(s) == 1 or s[1] == " ")):
        return FAIL
    if " #" in s or ": " in s or s[-1] == ":":
        return FAIL
    return resolve(s)


_PLAIN_KEYS: set[str] = set()  # keys seen to be plain: the same few recur in every file


def _plain_key(key: str) -> bool:
    if not _KEY.fullmatch(key) or type(resolve(key)) is not str:
        return False  # not a plain key, or one YAML reads as a bool or null
    if len(_PLAIN_KEYS) < 4096:
        _PLAIN_KEYS.add(key)
    return True


def parse(text: str) -> dict[str, Any] | None:
    """The mapping PyYAML reads from `text`, or None when `text` is not in the subset."""
    if not readable(text, lines=True):
        return None
    root: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any]]] = [(0, root)]  # (indent of its keys, mapping)
    opened: tuple[int, dict[str, Any], str] | None = None  # `key:` with nothing after it
    items: tuple[int, list[Any]] | None = None  # the sequence being read, its indent
    for line in text.split("\n"):
        content = line.lstrip(" ")
        indent = len(line) - len(content)
        content = content.rstrip(" ")
        if not content or content[0] == "#":
            continue
        if content[0] == "-" and (len(content) == 1 or content[1] == " "):
            if items is None or indent != items[0]:
                if opened is None or indent <= opened[0]:
                    return None  # an indentless or misplaced sequence
                items = (indent, [])
                opened[1][opened[2]] = items[1]
                opened = None
            if len(content) < 3 or content[2] == " ":
                return None  # an empty item, or one YAML reads at another column
            item = _scalar(content[2:])
            if item is FAIL:
                return None
            items[1].append(item)
            continue
        items = None
        if opened is not None and indent > opened[0]:  # the section `opened` starts here
            if len(stack) >= safeload.MAX_DEPTH:
                return None  # too deep: PyYAML's path refuses it (`safeload`)
            child: dict[str, Any] = {}
            opened[1][opened[2]] = child
            stack.append((indent, child))
        opened = None
        while indent < stack[-1][0]:
            stack.pop()
        mapping = stack[-1][1]
        if indent != stack[-1][0]:
            return None
        key, sep, rest = content.partition(": ")
        if not sep:
            if content[-1] != ":":
                return None
            key, rest = content[:-1], ""
        if key in mapping or (key not in _PLAIN_KEYS and not _plain_key(key)):
            return None  # repeated, or not a key YAML reads as this string
        rest = rest.lstrip(" ")
        if not rest:
            mapping[key] = None  # null, unless deeper lines follow
            opened = (indent, mapping, key)
        elif rest == "[]":
            mapping[key] = []
        elif rest == "{}":
            mapping[key] = {}
        else:
            value = _scalar(rest)
            if value is FAIL:
                return None
            mapping[key] = value
    return root


def split_page(text: str) -> tuple[dict[str, Any], str] | None:
    """(frontmatter, body) as `yamlio.load_markdown` gives them, for a page that opens
    with a `---` line and whose frontmatter is in the subset; None for any other."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end < 0:
        if not text.endswith("\n---"):
            return None
        end = len(text) - 4
    rest = text[end + 4 :]
    # python-frontmatter's boundary `^-{3,}\s*$` also takes the whitespace after `---`
    # up to a line end: only newlines there keep the body exactly `rest.strip("\n")`
    if rest[: len(rest) - len(rest.lstrip())].strip("\n"):
        return None
    if end > safeload.MAX_YAML_CHARS:
        return None  # PyYAML's path refuses it (`safeload`)
    meta = parse(text[4 : end + 1])
    if meta is None:
        return None
    return meta, rest.strip("\n")


def load(text: str, *, where: str) -> dict[str, Any]:
    """The mapping in a YAML file; CorruptFile naming `where` when it is not one, or
    when `safeload` refuses it (too large, anchors, aliases, deep nesting)."""
    safeload.check_size(text, where)
    fast = parse(text)
    return fast if fast is not None else yamlio.load_yaml(text, where=where)


def load_page(text: str, *, where: str) -> tuple[dict[str, Any], str]:
    """(frontmatter, body) of a markdown file with YAML frontmatter; CorruptFile when
    it has none or it is not a mapping, or when `safeload` refuses it."""
    safeload.check_size(text, where, safeload.MAX_PAGE_CHARS, "a page")
    fast = split_page(text)
    return fast if fast is not None else yamlio.load_markdown(text, where=where)
