"""The shape of a kb.* method: its parameters, its command line, its scope.

The registry (`vouch.ops`) holds one `Method` per name; each area declares its methods
in its own module under `vouch/methods/` (a `METHODS` tuple) from these classes, so
declaring a method costs one entry and its handler, and loading the declarations
imports no handler.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from vouch.core import yamlio
from vouch.errors import UsageError

SCOPES = ("read", "intake", "propose", "decide", "lifecycle", "session", "maintenance")
# Scopes whose methods write something someone answers for: the audit log or a commit
# records who acted. (`maintenance` that only rebuilds the derived index is not one.)
ATTRIBUTED_SCOPES = ("intake", "propose", "decide", "lifecycle", "session")


class MissingParam(UsageError):
    """A required parameter is absent or null (JSONL: missing_param)."""


class InvalidParams(UsageError):
    """A parameter has the wrong type or an unknown name (JSONL: invalid_request)."""


class MethodNotFound(UsageError):
    """No such method (JSONL: method_not_found)."""


_NONE: Mapping[str, Any] = MappingProxyType({})  # an empty mapping no declaration can change
_HANDLERS: dict[str, Callable[..., Any]] = {}  # "module:function" → the function, once imported


def string_list() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}}


class Param(NamedTuple):
    """One parameter of a method: its JSON schema, default and what it means."""

    name: str
    schema: dict[str, Any]
    required: bool = False
    default: Any = None
    description: str = ""
    # its value (or each item) is an object id: a unique source-id prefix, or a source
    # named by its path (`docs/a.rst:L5-L9`), is resolved to the source's id
    ids: bool = False
    # the schema states an enum or a range for clients, but the handler checks it, so
    # that an invalid proposal gets every problem at once (valid: false, errors: [...])
    checked_later: bool = False

    def bound_schema(self) -> dict[str, Any]:
        """The schema `bind` checks: without what the handler checks itself."""
        if not self.checked_later:
            return self.schema
        return _loose(self.schema)

    def property_schema(self) -> dict[str, Any]:
        out = dict(self.schema)
        if self.description:
            out["description"] = self.description
        if self.default is not None:
            out["default"] = self.default
        return out


class Cli(NamedTuple):
    """How a method looks on the command line; `vouch/cli/build.py` makes the command.

    Every parameter becomes an option (`dry_run` → `--dry-run`) with the parameter's
    type, default and required-ness, unless it is a positional argument (`args`) or a
    value the command always sends (`presets`). Arrays repeat and split on commas; an
    object takes `--NAME KEY=VALUE` and, for the `keys` declared, `--KEY VALUE`.
    """

    verb: tuple[str, ...] = ()  # the command path; () → the method name, dashed
    args: tuple[str, ...] = ()  # parameters given as positional arguments, in order
    names: Mapping[str, tuple[str, ...]] = _NONE  # option spellings
    keys: Mapping[str, tuple[str, ...]] = _NONE  # object → --KEY
    files: tuple[str, ...] = ()  # string parameters read from FILE (or - for stdin)
    presets: Mapping[str, Any] = _NONE  # sent, never asked
    repeat: bool = False  # the first argument takes many values: one call each
    human: str | None = None  # "module:function(result) -> str" for people
    emit: str | None = None  # "module:function(out, result)": prints instead of `human`
    format: str = "human"  # the output on a terminal (a pipe gets json): human or markdown
    formats: tuple[str, ...] = ()  # --format values beyond human/json/markdown (graph: dot)

    def path(self, method_name: str) -> tuple[str, ...]:
        return self.verb or (method_name.removeprefix("kb.").replace("_", "-"),)


class Method(NamedTuple):
    """A kb.* method: its name, scope, parameters, handler and command line."""

    name: str
    scope: str
    summary: str
    handler: str  # "module:function", called as function(ctx, **params)
    params: tuple[Param, ...] = ()
    writes: bool = False
    cli: Cli = Cli()
    decision: bool = False  # a person's decision outside scope "decide" (anchor, import)
    # a read an agent host gets by default (`vouch.methods.toolsets`): finding, reading and
    # following up its own proposals; every intake, propose and session method is in too
    agent_read: bool = False

    @property
    def command(self) -> tuple[str, ...]:
        """The CLI command path (`vouch <path...>`)."""
        return self.cli.path(self.name)

    @property
    def attributed(self) -> bool:
        """Does a call record who acted? Then a transport needs a declared agent."""
        return self.writes or self.scope in ATTRIBUTED_SCOPES

    @property
    def decides(self) -> bool:
        """Is a call a decision? Then only a caller that `may_decide` makes it."""
        return self.scope == "decide" or self.decision

    @property
    def tool_name(self) -> str:
        return self.name.replace(".", "_")

    def input_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {p.name: p.property_schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def bind(self, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check names and types, fill defaults; raise MissingParam / InvalidParams."""
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise InvalidParams(f"{self.name}: params must be an object")
        raw = dict(raw)
        known = {p.name for p in self.params}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise InvalidParams(
                f"{self.name}: unknown parameter(s) {', '.join(unknown)}",
                hint="known: " + (", ".join(sorted(known)) or "none"),
            )
        bound: dict[str, Any] = {}
        for p in self.params:
            value = raw.get(p.name)
            if value is None:
                if p.required:
                    raise MissingParam(f"{self.name}: missing required parameter {p.name!r}")
                if p.default is not None:
                    bound[p.name] = p.default
                continue
            problem = type_problem(value, p.bound_schema())
            if problem:
                raise InvalidParams(f"{self.name}: parameter {p.name!r} {problem}")
            bound[p.name] = value
        return bound

    def resolve_ids(self, bound: dict[str, Any], resolve: Callable[[str], str]) -> None:
        """Replace short source ids and source paths in the id parameters (`Param.ids`),
        in place."""
        for p in self.params:
            value = bound.get(p.name)
            if not p.ids or value is None:
                continue
            if isinstance(value, str):
                bound[p.name] = resolve(value)
            elif isinstance(value, list):
                bound[p.name] = [resolve(v) if isinstance(v, str) else v for v in value]

    def function(self) -> Callable[..., Any]:
        found = _HANDLERS.get(self.handler)
        if found is None:
            module, _, attr = self.handler.partition(":")
            found = _HANDLERS[self.handler] = getattr(importlib.import_module(module), attr)
        return found

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "scope": self.scope,
            "summary": self.summary,
            "params": self.input_schema(),
        }


def type_problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    checks: dict[str, Callable[[Any], bool]] = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    if kind in checks and not checks[kind](value):
        return f"must be {'an' if kind in ('integer', 'object', 'array') else 'a'} {kind}"
    unstorable = kind == "string" and not yamlio.is_storable_text(value)
    if unstorable and schema.get("format") != "path":
        # Bytes that are not UTF-8 reach us as lone surrogates (argv, JSON "\udcff"); they
        # cannot be written to a YAML file that loads again, so refuse them at the edge.
        return "must be valid Unicode text (it holds bytes that are not UTF-8)"
    if kind == "array" and "items" in schema:
        for item in value:
            problem = type_problem(item, schema["items"])
            if problem:
                return f"items {problem}"
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of: {', '.join(map(str, schema['enum']))}"
    if kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            return f"must be >= {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"must be <= {schema['maximum']}"
    return None


def _loose(schema: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in schema.items() if k not in ("enum", "minimum", "maximum")}
    if isinstance(out.get("items"), Mapping):
        out["items"] = _loose(out["items"])
    return out


# parameters several methods share
OBJECT_ID = Param("id", {"type": "string"}, required=True, description="object id", ids=True)
PAGING = (
    Param("limit", {"type": "integer", "minimum": 0}, default=50),
    Param("offset", {"type": "integer", "minimum": 0}, default=0),
    Param(
        "filter",
        {"type": "object"},
        description="field equality; for list fields (tags) every value must be present",
    ),
)
