"""The only owner of ruamel.yaml, PyYAML and python-frontmatter settings.

Writes go through ruamel's round-trip mode so that output is canonical and
diff-friendly, a file vouch wrote re-dumps to the same bytes, and comments a person added
survive an edit; `fastdump` writes ruamel's exact bytes for plain objects without it.
Bulk reads (listing, indexing) use libyaml through PyYAML, about fifteen times faster
than ruamel, because they never write back; `safeload` first refuses what no parser
should see (anchors, aliases, deep nesting, oversize documents), scanning PyYAML's
events only when a byte check says a text could hold one.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from datetime import date, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from vouch.core import fastdump, safeload
from vouch.errors import CorruptFile

if TYPE_CHECKING:
    from ruamel.yaml import YAML


# PyYAML and frontmatter are imported on the first parse (~11 ms): a cold `vouch search`
# reads only config.yaml, which `vouch.config` parses without them.
@cache
def _pyyaml() -> Any:
    import yaml

    return yaml


@cache
def _fast_loader() -> Any:
    yaml = _pyyaml()
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _frontmatter() -> Any:
    import frontmatter

    return frontmatter.YAMLHandler()


WIDTH = 4096  # ruamel folds longer lines at a space


@cache
def _round_trip(width: int = WIDTH) -> YAML:
    # imported on first write: ruamel costs ~9 ms of every cold start, and reads
    # (status, list, search) never need it
    from ruamel.yaml import YAML

    rt = YAML(typ="rt")
    rt.default_flow_style = False
    rt.width = width
    rt.indent(mapping=2, sequence=4, offset=2)
    rt.allow_unicode = True
    rt.preserve_quotes = True
    return rt


def _plain(value: Any) -> Any:
    """Turn ruamel/PyYAML containers and timestamps into JSON-friendly values."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        return str(value)
    return value


def _to_ruamel(value: Any) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, Mapping) and not isinstance(value, CommentedMap):
        out = CommentedMap()
        for k, v in value.items():
            out[k] = _to_ruamel(v)
        return out
    if isinstance(value, list) and not isinstance(value, CommentedSeq):
        seq = CommentedSeq(_to_ruamel(v) for v in value)
        return seq
    if type(value) is str and "\x85" in value:
        # YAML reads NEL as a line break: in a plain or single-quoted scalar it would come
        # back as a space; double quotes write it escaped (`\N`)
        from ruamel.yaml.scalarstring import DoubleQuotedScalarString

        return DoubleQuotedScalarString(value)
    if type(value) is str and _reads_back_as_other_type(value):
        from ruamel.yaml.scalarstring import SingleQuotedScalarString

        return SingleQuotedScalarString(value)
    return value


_STR_TAG = "tag:yaml.org,2002:str"


@cache
def _resolver() -> Any:
    return _pyyaml().resolver.Resolver()


def _reads_back_as_other_type(text: str) -> bool:
    """Would the fast (YAML 1.1) reader turn this plain scalar into a non-string?

    ruamel writes YAML 1.2, where `yes`, `off` or `0o17` are plain strings; libyaml reads
    YAML 1.1, where they are booleans and numbers. Quoting them keeps the round trip exact.
    """
    return bool(_resolver().resolve(_pyyaml().ScalarNode, text, (True, False)) != _STR_TAG)


def is_storable_text(text: str) -> bool:
    """False for text holding lone surrogates (bytes that were not UTF-8, decoded with
    surrogateescape): a YAML file holding them would not load again."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def dump_yaml(data: Mapping[str, Any]) -> str:
    """Canonical YAML for a mapping, in the mapping's own key order: ruamel's output,
    written by `fastdump` when the mapping is in its plain subset."""
    fast = fastdump.dump(data)
    return fast if fast is not None else ruamel_dump(data)


def ruamel_dump(data: Mapping[str, Any]) -> str:
    """`dump_yaml` through ruamel itself, the reference `fastdump` must equal."""
    return _emit(_to_ruamel(data))


def _emit(doc: Any) -> str:
    """ruamel's output for a round-trip document. ruamel folds a line past its width at a
    space, and a fold just after a run of spaces (or inside some double-quoted text)
    reads back as a single space: a document whose folded form does not read back as its
    unfolded form is written unfolded, so text is kept exactly."""
    buf = io.StringIO()
    _round_trip().dump(doc, buf)
    text = buf.getvalue()
    # any fold leaves a line of at least half the width beside it
    if max(len(line) for line in text.split("\n")) < WIDTH // 2:
        return text
    buf = io.StringIO()
    _round_trip(2**30).dump(doc, buf)
    whole = buf.getvalue()
    if whole == text:
        return text
    try:
        return text if load_yaml(text) == load_yaml(whole) else whole
    except CorruptFile:
        return whole


def load_yaml(text: str, *, where: str = "YAML") -> dict[str, Any]:
    """Fast, read-only parse into plain JSON-friendly values; CorruptFile for what
    `safeload` refuses (anchors, aliases, deep nesting, a document too large)."""
    safeload.check_yaml(text, where)
    yaml = _pyyaml()
    try:
        data = yaml.load(text, Loader=_fast_loader())
    except yaml.YAMLError as exc:
        raise CorruptFile(f"cannot parse {where}: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CorruptFile(f"{where} must hold a mapping, found {type(data).__name__}")
    plain: dict[str, Any] = _plain(data)
    return plain


def disguise(text: str) -> str | None:
    """Why `text` reads as other data than it shows a person, or None: a key given twice
    (the last one wins), an anchor or alias (a value shown elsewhere), an explicit tag
    (`!!binary`), a merge key (`<<`) or a key that is not a plain scalar. vouch never
    writes any of them; a file from elsewhere holding one is not what vouch wrote."""
    yaml = _pyyaml()
    # per open collection: its keys when it is a mapping (None: a sequence), nodes read
    open_: list[tuple[set[str] | None, list[int]]] = []
    try:
        for event in yaml.parse(text, Loader=_fast_loader()):
            kind = type(event).__name__
            if kind == "AliasEvent":
                return f"an alias (*{event.anchor})"
            if getattr(event, "anchor", None) is not None:
                return f"an anchor (&{event.anchor})"
            tag, implicit = getattr(event, "tag", None), getattr(event, "implicit", True)
            if tag is not None and not (any(implicit) if isinstance(implicit, tuple) else implicit):
                return f"an explicit tag ({tag})"
            keys = open_[-1][0] if open_ else None
            is_key = keys is not None and open_[-1][1][0] % 2 == 0
            if kind in ("MappingStartEvent", "SequenceStartEvent"):
                if is_key:
                    return "a key that is not plain text"
                open_.append((set() if kind == "MappingStartEvent" else None, [0]))
                continue
            if kind == "ScalarEvent" and is_key and keys is not None:
                if event.value == "<<" and not event.style:
                    return "a merge key (<<)"
                if event.value in keys:
                    return f"the key {event.value!r} twice"
                keys.add(event.value)
            if kind in ("MappingEndEvent", "SequenceEndEvent"):
                open_.pop()
            if kind in ("ScalarEvent", "MappingEndEvent", "SequenceEndEvent") and open_:
                open_[-1][1][0] += 1
    except yaml.YAMLError as exc:
        return f"not YAML ({str(exc)[:120]})"
    return None


def edit_yaml(text: str, changes: Mapping[str, Any], *, where: str = "YAML") -> str:
    """Apply `changes` (key -> value, None deletes) keeping comments and key order."""
    from ruamel.yaml.comments import CommentedMap

    try:
        doc = _round_trip().load(text)
    except Exception as exc:  # ruamel raises many unrelated types for bad input
        raise CorruptFile(f"cannot parse {where}: {exc}") from exc
    if doc is None:
        doc = CommentedMap()
    if not isinstance(doc, CommentedMap):
        raise CorruptFile(f"{where} must hold a mapping")
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        elif key in doc and doc[key] == value:
            continue
        else:
            doc[key] = _to_ruamel(value)
    return _emit(doc)


def markdown_body(body: str) -> str:
    """A page's body as vouch writes it and python-frontmatter reads it back: without
    the newlines around it and without leading lines of only whitespace (any Unicode
    space), which the reader's closing boundary takes with the `---`; kept, they would
    vanish on reading and the page would no longer be what vouch wrote."""
    lead = re.match(r"\s*", body)
    if lead is None or lead.end() == len(body):
        return ""  # only whitespace: the boundary takes all of it
    cut = lead.group().rfind("\n")
    return body[cut + 1 :].strip("\n")


def dump_markdown(meta: Mapping[str, Any], body: str) -> str:
    """A markdown file with YAML frontmatter; the body (`markdown_body`) always ends
    with one newline."""
    body = markdown_body(body)
    return f"---\n{dump_yaml(meta)}---\n\n{body}\n" if body else f"---\n{dump_yaml(meta)}---\n"


def load_markdown(text: str, *, where: str = "page") -> tuple[dict[str, Any], str]:
    safeload.check_size(text, where, safeload.MAX_PAGE_CHARS, "a page")
    if not _frontmatter().detect(text):
        raise CorruptFile(f"{where} has no YAML frontmatter")
    try:
        fm, body = _frontmatter().split(text)
    except ValueError as exc:
        raise CorruptFile(f"cannot split frontmatter of {where}: {exc}") from exc
    return load_yaml(fm, where=where), body.strip("\n")


def edit_markdown(text: str, changes: Mapping[str, Any], *, where: str = "page") -> str:
    """Edit a page's frontmatter keys, keeping its comments and body exactly."""
    if not _frontmatter().detect(text):
        raise CorruptFile(f"{where} has no YAML frontmatter")
    fm, _ = _frontmatter().split(text)
    start = text.index(fm)
    new_fm = edit_yaml(fm, changes, where=where)
    return text[:start] + "\n" + new_fm + text[start + len(fm) :].lstrip("\n")


def reads_as_itself(value: str) -> bool:
    """Whether `value`, written unquoted after `key: `, reads back as this very string
    (no number, date, boolean or null, no indicator): what a line-by-line reader of
    vouch's own flat records may take without the parser."""
    if not value or value != value.strip() or value[0] in "-?:,[]{}#&*!|>'\"%@`":
        return False
    if any(c in value for c in "#:\"'\\") or not value.isprintable():
        return False
    yaml = _pyyaml()
    tag = yaml.resolver.Resolver().resolve(yaml.ScalarNode, value, (True, False))
    return bool(tag == "tag:yaml.org,2002:str")
