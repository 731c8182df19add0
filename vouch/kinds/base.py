"""The shared machinery of object kinds: field schemas, validation, paths, files.

A kind is a value: its fields, its directory, its file format, and how its identity is
derived. Each kind module builds one `Kind` and exposes the same small surface
(`SCHEMA`, `path_for`, `load`, `dump`, `chunks`, `new`). Kinds know nothing of git or
the index: they are files and schemas.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cached_property
from typing import Any, NamedTuple

from vouch.core import fastyaml, ids, yamlio
from vouch.errors import CorruptFile, ValidationFailed

REDACTED = "redacted"  # the status of an object whose words a decision removed
REDACTED_HASH = "redacted_hash"  # the identity digest its id was made from

Obj = dict[str, Any]

SCOPES = ("private", "project", "team", "public")


class Field(NamedTuple):
    """One field of a kind's schema: its type, whether it is required, its allowed
    values, default and bounds."""

    name: str
    type: str  # str | text | float | int | bool | list | map | time
    required: bool = False
    enum: tuple[str, ...] | None = None
    default: Any = None
    ids: bool = False  # value (or each list item) must be a vouch id
    min: float | None = None
    max: float | None = None


class Chunk(NamedTuple):
    """One searchable piece of an object, as the index stores it."""

    kind: str
    object_id: str
    text: str
    chunk_index: int = 0
    total_chunks: int = 1
    section: str = ""
    page: int | None = None
    title: str = ""
    type: str = ""
    status: str = ""
    tags: tuple[str, ...] = ()
    start_line: int | None = None
    end_line: int | None = None
    heading_level: int | None = None
    # a transcript's turn (issue 19): its number, speaker, time and session, the text of
    # its neighbouring turns in the same session (a lexical column of its own), and the
    # texts its vector is made of when not `text`: the turn with its neighbours, joined
    # by newlines (`index.chunking.vector_parts`; kept apart so each turn is tokenized once)
    turn: int | None = None
    speaker: str | None = None
    time: str | None = None
    session: int | None = None
    context: str = ""
    window: tuple[str, ...] = ()


def _default(f: Field) -> Any:
    if f.default is not None:
        return f.default
    return [] if f.type == "list" else {} if f.type == "map" else None


def _check_value(f: Field, value: Any) -> list[str]:
    # every file every reader loads passes here: the common cases return early
    name = f.name
    if f.type in ("str", "text", "time"):
        if isinstance(value, datetime | date) and f.type == "time":
            return []
        if not isinstance(value, str):
            return [f"{name} must be a string"]
        if not _storable(value):
            return [f"{name} must be valid Unicode text (it holds bytes that are not UTF-8)"]
        if f.required and f.type != "time" and not value.strip():
            return [f"{name} must not be empty"]
        if f.enum and value not in f.enum:
            return [f"{name} {value!r} is not one of: {', '.join(f.enum)}"]
        if f.ids and value and not _valid_id(value):
            return [f"{name} {value!r} is not a vouch id"]
        return []
    if f.type in ("float", "int"):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if f.type == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
        if not ok or (isinstance(value, float) and not math.isfinite(value)):
            return [f"{name} must be a {'number' if f.type == 'float' else 'whole number'}"]
        if (f.min is not None and value < f.min) or (f.max is not None and value > f.max):
            return [f"{name} {value} is out of range {f.min}..{f.max}"]
        return []
    if f.type == "bool":
        return [] if isinstance(value, bool) else [f"{name} must be true or false"]
    if f.type == "list":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return [f"{name} must be a list of strings"]
        if not all(_storable(v) for v in value):
            return [f"{name} must be valid Unicode text (it holds bytes that are not UTF-8)"]
        if f.required and not value:
            return [f"{name} must not be empty"]
        if not all(v.strip() for v in value):
            return [f"{name} must not hold an empty item"]
        if not f.enum and not f.ids:
            return []
        errors = []
        for v in value:
            if f.enum and v not in f.enum:
                errors.append(f"{name} item {v!r} is not one of: {', '.join(f.enum)}")
            if f.ids and not _valid_id(v):
                errors.append(f"{name} item {v!r} is not a vouch id")
        return errors
    if f.type == "map":
        if not isinstance(value, dict):
            return [f"{name} must be a mapping"]
        if not _all_unicode(value):
            return [f"{name} must be valid Unicode text (it holds bytes that are not UTF-8)"]
        return []
    raise AssertionError(f"unknown field type {f.type}")


def _usual_value(f: Field) -> Callable[[Any], bool]:
    """A cheap test that only values `_check_value` finds no fault with pass (ASCII text,
    plain numbers); whatever it refuses gets the full check, which names the problem.
    Every knowledge file every reader loads is validated: this keeps that cheap."""
    enum = frozenset(f.enum) if f.enum else None
    low = -math.inf if f.min is None else f.min
    high = math.inf if f.max is None else f.max

    def text(v: Any) -> bool:
        return (
            type(v) is str
            and v.isascii()
            and (enum is None or v in enum)
            and (not f.required or f.type == "time" or bool(v.strip()))
            and (not f.ids or _valid_id(v))
        )

    def number(v: Any) -> bool:
        if type(v) is int:  # (math.isfinite would overflow on a huge one)
            return low <= v <= high
        return f.type == "float" and type(v) is float and math.isfinite(v) and low <= v <= high

    def strings(v: Any) -> bool:
        return (
            type(v) is list
            and (bool(v) or not f.required)
            and all(
                type(x) is str
                and x.isascii()
                and x.strip()
                and (enum is None or x in enum)
                and (not f.ids or _valid_id(x))
                for x in v
            )
        )

    if f.type in ("str", "text", "time"):
        return text
    if f.type in ("float", "int"):
        return number
    if f.type == "list":
        return strings
    if f.type == "bool":
        return lambda v: type(v) is bool
    return lambda v: False  # maps: always the full check


def _storable(text: str) -> bool:
    return text.isascii() or yamlio.is_storable_text(text)


def _all_unicode(value: Any) -> bool:
    if isinstance(value, str):
        return yamlio.is_storable_text(value)
    if isinstance(value, dict):
        return all(_all_unicode(k) and _all_unicode(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_all_unicode(v) for v in value)
    return True


def _valid_id(value: str) -> bool:
    """What `ids.check_id` accepts, without raising for each refusal."""
    return ids.is_object_id(value) or ids.is_source_id(value) or ids.is_proposal_id(value)


def redacted(kind: Kind, data: Mapping[str, Any]) -> bool:
    """Whether a decision redacted the object: status `redacted`, or, for a kind without
    a status, the `redacted_hash` it records (an entity) or its tombstone's `redacted_at`
    (a source)."""
    if "status" in kind.field_names:
        return data.get("status") == REDACTED
    return data.get(REDACTED_HASH) is not None or bool(data.get("redacted_at"))


@dataclass(frozen=True)
class Kind:
    name: str  # claim
    plural: str  # claims
    fields: tuple[Field, ...]
    label_field: str  # the field the slug is made from
    identity: Callable[[Obj], object]  # the canonical creation content
    ext: str = ".yaml"
    body_field: str | None = None  # markdown kinds keep this field as the body
    title_of: Callable[[Obj], str] = field(default=lambda o: "")
    type_field: str | None = "type"

    @property
    def directory(self) -> str:
        return self.plural

    def default(self, name: str) -> Any:
        """The default of one field: the one place such a default is declared."""
        return next(f.default for f in self.fields if f.name == name)

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    # -- paths ------------------------------------------------------------------
    def path_for(self, object_id: str) -> str:
        """Path of the object's file relative to `.vouch/`."""
        ids.check_id(object_id, f"{self.name} id")
        return f"{self.directory}/{ids.shard(object_id)}/{object_id}{self.ext}"

    # -- identity & construction -------------------------------------------------
    def make_id(self, data: Mapping[str, Any]) -> str:
        """`<slug>-<hash8>` of the object's identity. An object redacted by a decision has
        lost its words: its id is the one it had, when the digest it records
        (`redacted_hash`, what that id was made from) ends it (`vouch.gate.change_plans`)."""
        digest = data.get(REDACTED_HASH)
        if digest is not None and redacted(self, data):
            held = str(data.get("id") or "")
            if isinstance(digest, str) and ids.is_sha256(digest) and held.endswith(digest[:8]):
                return held
            return f"(a redacted {self.name} whose {REDACTED_HASH} does not end its id)"
        label = str(data.get(self.label_field) or "")
        return ids.object_id(label, self.identity_of(data), fallback=self.name)

    def naming(self, obj: Mapping[str, Any], wanted: Iterable[str]) -> list[tuple[str, Any, str]]:
        """(field, its value, the first of `wanted` it names) for each id field of `obj`
        (its own `id` aside) naming one of `wanted`: what rests on those objects."""
        wanted = list(wanted)
        out = []
        for f in self.fields:
            if not f.ids or f.name == "id":
                continue
            value = obj.get(f.name)
            held = value if isinstance(value, list) else [value]
            named = [w for w in wanted if w in held]
            if named:
                out.append((f.name, value, named[0]))
        return out

    def identity_of(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """What the id's hash is taken of."""
        return {"kind": self.name, **_as_identity(self.identity(dict(data)))}

    def new(self, **values: Any) -> Obj:
        """A complete, validated object with defaults, timestamps and its id."""
        data = {k: v for k, v in values.items() if v is not None}
        now = ids.now_iso()
        for name in ("created_at", "updated_at"):
            if name in self.field_names and name not in data:
                data[name] = now
        data["id"] = self.make_id(data)
        obj = self.normalize(data)
        self.validate_or_raise(obj)
        return obj

    # -- validation ----------------------------------------------------------------
    def normalize(self, data: Mapping[str, Any]) -> Obj:
        """Fill defaults and put keys in schema order (unknown keys kept last)."""
        out: Obj = {}
        for f in self.fields:
            value = data.get(f.name)
            if value is None:
                value = _default(f)
            if isinstance(value, datetime):
                value = value.strftime("%Y-%m-%dT%H:%M:%SZ")
            if value is None and not f.required:
                continue
            out[f.name] = value
        for k, v in data.items():
            if k not in out and k not in self.field_names:
                out[k] = v
        return out

    def validate(self, data: Mapping[str, Any]) -> list[str]:
        errors: list[str] = []
        known = self._known
        for k in data:
            if k not in known:
                errors.append(f"unknown field {k!r} for a {self.name}")
        for f, usual in self._checks:
            value = data.get(f.name)
            if value is None:
                if f.required:
                    errors.append(f"{f.name} is required")
                continue
            if not usual(value):
                errors.extend(_check_value(f, value))
        return errors

    @cached_property
    def _known(self) -> frozenset[str]:
        return frozenset(self.field_names)

    @cached_property
    def _checks(self) -> tuple[tuple[Field, Callable[[Any], bool]], ...]:
        return tuple((f, _usual_value(f)) for f in self.fields)

    def validate_or_raise(self, data: Mapping[str, Any]) -> None:
        errors = self.validate(data)
        if errors:
            raise ValidationFailed(errors, what=self.name)

    # -- files -----------------------------------------------------------------------
    def dump(self, obj: Mapping[str, Any]) -> str:
        obj = self.normalize(obj)
        self.validate_or_raise(obj)
        if self.body_field is not None:
            meta = {k: v for k, v in obj.items() if k != self.body_field}
            return yamlio.dump_markdown(meta, str(obj.get(self.body_field) or ""))
        return yamlio.dump_yaml(obj)

    def load(self, text: str, *, where: str = "") -> Obj:
        """The object a file's text holds, validated and normalised: the one way every
        reader (KB.read, the index, the gate) turns a knowledge file into an object.
        CorruptFile naming `where` and every problem when it is not a valid object."""
        where = where or f"{self.name} file"
        if self.body_field is not None:
            meta, body = fastyaml.load_page(text, where=where)
            data = {**meta, self.body_field: body}
        else:
            data = fastyaml.load(text, where=where)
        errors = self.validate(data)
        if errors:
            raise CorruptFile(f"{where} is not a valid {self.name}: " + "; ".join(errors))
        return self.normalize(data)

    def edit(self, text: str, changes: Mapping[str, Any], *, where: str = "") -> str:
        """Change some fields of a file vouch or a person wrote, keeping its comments."""
        where = where or f"{self.name} file"
        current = self.load(text, where=where)
        merged = {**current, **{k: v for k, v in changes.items()}}
        merged = {k: v for k, v in merged.items() if v is not None}
        self.validate_or_raise(merged)
        if self.body_field is not None:
            body = changes.get(self.body_field)
            meta_changes = {k: v for k, v in changes.items() if k != self.body_field}
            new = yamlio.edit_markdown(text, meta_changes, where=where)
            if body is not None:
                head = new[: new.index("\n---", 3) + 4]
                kept = yamlio.markdown_body(body)
                new = head + (f"\n\n{kept}\n" if kept else "\n")
            return new
        return yamlio.edit_yaml(text, changes, where=where)

    def chunk(self, obj: Mapping[str, Any], text: str, **extra: Any) -> Chunk:
        tags = tuple(obj.get("tags") or ())
        return Chunk(
            kind=self.name,
            object_id=str(obj["id"]),
            text=text,
            title=self.title_of(dict(obj)),
            type=str(obj.get(self.type_field) or "") if self.type_field else "",
            status=str(obj.get("status") or ""),
            tags=tags,
            **extra,
        )


def _as_identity(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"value": value}


def collapse(text: str) -> str:
    """Whitespace-normalised text, so identity ignores reflowing."""
    return " ".join(text.split())
