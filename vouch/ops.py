"""The registry: every kb.* method declared once — name, parameters, handler, scope.

The CLI, the JSONL and MCP servers and `kb.capabilities` are generated from this table.
A method that is not built yet is simply absent. Handlers are named as
`module:function` and imported on first call, so that loading the registry is cheap for
a cold CLI process.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vouch import __version__, yamlio
from vouch.callctx import CallContext
from vouch.errors import GateRefused, UsageError
from vouch.kinds import source as source_kind

SCOPES = ("read", "intake", "propose", "decide", "lifecycle", "session", "maintenance")
# Scopes whose methods write something someone answers for: the audit log or a commit
# records who acted. (`maintenance` that only rebuilds the derived index is not one.)
ATTRIBUTED_SCOPES = ("intake", "propose", "decide", "lifecycle", "session")
TRANSPORTS = ("cli", "jsonl", "mcp")
SPEC = "vouch kb-methods (spec/kb-methods.md)"


class MissingParam(UsageError):
    """A required parameter is absent or null (JSONL: missing_param)."""


class InvalidParams(UsageError):
    """A parameter has the wrong type or an unknown name (JSONL: invalid_request)."""


class MethodNotFound(UsageError):
    """No such method (JSONL: method_not_found)."""


def _string_list() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}}


@dataclass(frozen=True)
class Param:
    name: str
    schema: dict[str, Any]
    required: bool = False
    default: Any = None
    description: str = ""

    def property_schema(self) -> dict[str, Any]:
        out = dict(self.schema)
        if self.description:
            out["description"] = self.description
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class Cli:
    """How a method looks on the command line; `vouch/cli/build.py` makes the command.

    Every parameter becomes an option (`dry_run` → `--dry-run`) with the parameter's
    type, default and required-ness, unless it is a positional argument (`args`) or a
    value the command always sends (`presets`). Arrays repeat and split on commas; an
    object takes `--NAME KEY=VALUE` and, for the `keys` declared, `--KEY VALUE`.
    """

    verb: tuple[str, ...] = ()  # the command path; () → the method name, dashed
    args: tuple[str, ...] = ()  # parameters given as positional arguments, in order
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # option spellings
    keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # object → --KEY
    files: tuple[str, ...] = ()  # string parameters read from FILE (or - for stdin)
    presets: Mapping[str, Any] = field(default_factory=dict)  # sent, never asked
    repeat: bool = False  # the first argument takes many values: one call each
    human: str | None = None  # "module:function(result) -> str" for people
    emit: str | None = None  # "module:function(out, result)": prints instead of `human`
    format: str = "human"  # the default output format

    def path(self, method_name: str) -> tuple[str, ...]:
        return self.verb or (method_name.removeprefix("kb.").replace("_", "-"),)


@dataclass(frozen=True)
class Method:
    name: str
    scope: str
    summary: str
    handler: str  # "module:function", called as function(ctx, **params)
    params: tuple[Param, ...] = ()
    writes: bool = False
    cli: Cli = field(default_factory=Cli)
    _resolved: list[Callable[..., Any]] = field(default_factory=list, compare=False, repr=False)

    @property
    def command(self) -> tuple[str, ...]:
        """The CLI command path (`vouch <path...>`)."""
        return self.cli.path(self.name)

    @property
    def attributed(self) -> bool:
        """Does a call record who acted? Then a transport needs a declared agent."""
        return self.writes or self.scope in ATTRIBUTED_SCOPES

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
            problem = type_problem(value, p.schema)
            if problem:
                raise InvalidParams(f"{self.name}: parameter {p.name!r} {problem}")
            bound[p.name] = value
        return bound

    def function(self) -> Callable[..., Any]:
        if not self._resolved:
            module, _, attr = self.handler.partition(":")
            self._resolved.append(getattr(importlib.import_module(module), attr))
        return self._resolved[0]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "scope": self.scope, "summary": self.summary,
                "params": self.input_schema()}



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


REGISTRY: dict[str, Method] = {}


def register(method: Method) -> Method:
    if method.name in REGISTRY:
        raise AssertionError(f"{method.name} registered twice")
    if method.scope not in SCOPES:
        raise AssertionError(f"{method.name}: unknown scope {method.scope}")
    REGISTRY[method.name] = method
    return method


def get(name: str) -> Method:
    method = REGISTRY.get(name)
    if method is None:
        raise MethodNotFound(f"unknown method {name!r}", hint="`vouch capabilities` lists them")
    return method


def invoke(ctx: CallContext, name: str, params: Mapping[str, Any] | None = None) -> Any:
    """Validate `params` against the method's schema, check the caller may, run the handler."""
    method = get(name)
    bound = method.bind(params)
    authorize(ctx, method)
    return method.function()(ctx, **bound)


def authorize(ctx: CallContext, method: Method) -> None:
    """The trust model's one door (DESIGN §4.1), by scope, before any handler runs.

    Agent transports read, register and propose; they decide only when the person who
    started the server allowed it, and they write only as the agent that person declared.
    """
    if method.scope == "decide" and not ctx.may_decide:
        raise GateRefused(
            f"{method.name}: approving or rejecting is a person's decision, and this "
            f"{ctx.transport} server was not started to allow it",
            hint="a person decides at the CLI (`vouch approve ID`, `vouch reject ID --reason "
                 "...`), or starts the server with `vouch serve --allow-decisions`")
    if method.attributed and ctx.transport != "cli":
        ctx.actor()  # GateRefused when the server's starter declared no agent


def capabilities(ctx: CallContext) -> dict[str, Any]:
    retrieval: dict[str, Any] = {}
    if "kb.search" in REGISTRY:
        from vouch.index.capabilities import describe

        retrieval = describe(ctx)
    return {
        "name": "vouch",
        "version": __version__,
        "spec": SPEC,
        "methods": [m.describe() for m in REGISTRY.values()],
        "retrieval": retrieval,
        "review_gated": True,
        "transports": list(TRANSPORTS),
        "caller": _caller(ctx),
    }


def _caller(ctx: CallContext) -> dict[str, Any]:
    """What this caller may do here, so that an agent learns it before being refused.

    `agent` is the declared actor (--as, VOUCH_AGENT, config `agent`); at the CLI a null
    one means the git user acts.
    """
    from vouch.actor import configured_actor

    cli = ctx.transport == "cli"
    agent = configured_actor(ctx.kb, ctx.actor_override if cli else None)
    may_write = cli or agent is not None
    return {"transport": ctx.transport, "agent": agent, "may_write": may_write,
            "may_decide": ctx.may_decide and may_write}


# -- declarations ------------------------------------------------------------------------
_HUMAN = "vouch.cli.human:"
_ID = Param("id", {"type": "string"}, required=True, description="object id")
_LIST = (
    Param("limit", {"type": "integer", "minimum": 0}, default=50),
    Param("offset", {"type": "integer", "minimum": 0}, default=0),
    Param("filter", {"type": "object"},
          description="field equality; for list fields (tags) every value must be present"),
)

register(Method("kb.capabilities", "read",
                "What this server offers (methods, retrieval, transports) and may_write / "
                "may_decide for this caller.",
                "vouch.ops:capabilities",
                cli=Cli(human=f"{_HUMAN}capabilities", format="json")))
register(Method("kb.status", "read", "Counts of knowledge, pending proposals, last audit time.",
                "vouch.reads:status", cli=Cli(human=f"{_HUMAN}status")))
for _kind in ("page", "claim", "entity", "relation"):
    register(Method(f"kb.read_{_kind}", "read", f"Read one {_kind} by id (null when absent).",
                    f"vouch.reads:read_{_kind}", (_ID,),
                    cli=Cli(verb=("read", _kind), args=("id",), human=f"{_HUMAN}read")))
for _plural in ("pages", "claims", "entities", "relations", "sources"):
    register(Method(f"kb.list_{_plural}", "read", f"List {_plural}, sorted by id.",
                    f"vouch.reads:list_{_plural}", _LIST,
                    cli=Cli(verb=("list", _plural), human=f"{_HUMAN}listing")))

_SOURCE_TYPE = {"type": "string", "enum": list(source_kind.TYPES)}
register(Method(
    "kb.register_source", "intake", "Store text as a content-addressed source (not gated).",
    "vouch.reads:register_source",
    (
        Param("content", {"type": "string"}, required=True, description="UTF-8 text content"),
        Param("type", _SOURCE_TYPE, default="file"),
        Param("locator", {"type": "string"}, required=True,
              description="where the content came from: path, URL, message id"),
        Param("title", {"type": "string"}),
        Param("media_type", {"type": "string"}),
        Param("tags", _string_list()),
    ),
    writes=True,
    cli=Cli(verb=("source", "register"), args=("content",), human=f"{_HUMAN}registered"),
))
register(Method(
    "kb.register_source_from_path", "intake", "Store a file as a content-addressed source.",
    "vouch.reads:register_source_from_path",
    (
        Param("path", {"type": "string", "format": "path"}, required=True,
              description="absolute or repo-relative"),
        Param("type", _SOURCE_TYPE),
        Param("title", {"type": "string"}),
        Param("tags", _string_list()),
    ),
    writes=True,
    cli=Cli(verb=("source", "add"), args=("path",), human=f"{_HUMAN}registered"),
))

# -- search (issue 5) ----------------------------------------------------------------------
_SEARCH_KIND = {"type": "string", "enum": ["claim", "page", "entity", "relation", "source",
                                           "claims", "pages", "entities", "relations",
                                           "sources"]}
register(Method(
    "kb.search", "read",
    "Hybrid search (BM25 + vectors, RRF) over approved knowledge and sources.",
    "vouch.search.api:kb_search",
    (
        Param("query", {"type": "string"}, required=True, description="any text"),
        Param("limit", {"type": "integer", "minimum": 1, "maximum": 10_000},
              description="results per page (default search.default_top, 10)"),
        Param("kinds", {"type": "array", "items": _SEARCH_KIND}),
        Param("mode", {"type": "string", "enum": ["hybrid", "fts", "vector"]},
              default="hybrid", description="fts: lexical only; vector: embeddings only"),
        Param("tags", _string_list(), description="documents carrying every one of these"),
        Param("types", _string_list(), description="claim/page/source types"),
        Param("statuses", _string_list(),
              description="only these statuses (superseded/archived/redacted: only if named)"),
        Param("threshold", {"type": "number"}, description="minimum RRF score"),
        Param("rrf_k", {"type": "number", "minimum": 0}, description="RRF k (default 60)"),
        Param("cursor", {"type": "string"}, description="next_cursor of a previous response"),
        Param("max_tokens", {"type": "integer", "minimum": 1},
              description="token budget (chars/4) for the results"),
        Param("trace", {"type": "boolean"}, description="add channel lists and timings"),
        Param("include_pending", {"type": "boolean"}, description="also search open proposals"),
        Param("envelope", {"type": "boolean"},
              description="return the whole response (cursor, truncated, trace), not the hits"),
    ),
    cli=Cli(args=("query",), presets={"envelope": True}, format="json",
            names={"limit": ("--top", "--limit"), "kinds": ("--kind",), "types": ("--type",),
                   "statuses": ("--status",)},
            human="vouch.search.human:render"),
))
register(Method("kb.tags", "read", "Every tag with the number of objects carrying it.",
                "vouch.search.catalog:tags", cli=Cli(human=f"{_HUMAN}tags")))
register(Method("kb.info", "read", "What the index holds for one object: chunks, headings.",
                "vouch.search.catalog:info", (_ID,), cli=Cli(args=("id",), human=f"{_HUMAN}info")))

# -- review gate (issue 3) ---------------------------------------------------------------
_DRY_RUN = Param("dry_run", {"type": "boolean"}, default=False,
                 description="validate only; write nothing, not even an audit line")
_PROPOSED = Cli(emit=f"{_HUMAN}proposed")
_IDS = _string_list


def _enum_doc(values: tuple[str, ...]) -> str:
    return "one of: " + ", ".join(values)


def _register_gate() -> None:
    # Enums and ranges are checked by the gate, not by `bind`, so that a bad proposal
    # gets every problem listed at once (valid: false, errors: [...]).
    from vouch.kinds import claim, entity, page, relation

    confidence = Param("confidence", {"type": "number"},
                       default=claim.KIND.default("confidence"), description="0..1")
    register(Method(
        "kb.propose_claim", "propose", "Propose a claim citing sources/evidence (a branch).",
        "vouch.gate.handlers:propose_claim",
        (
            Param("text", {"type": "string"}, required=True),
            Param("evidence", _IDS(), required=True,
                  description="source ids, evidence ids, or <source-id>:L10-L20 pointers"),
            Param("type", {"type": "string"}, default=claim.KIND.default("type"),
                  description=_enum_doc(claim.TYPES)),
            confidence,
            Param("entities", _IDS()),
            Param("scope", {"type": "string"}, description=_enum_doc(source_kind.SCOPES)),
            Param("tags", _IDS()),
            Param("session_id", {"type": "string"}),
            Param("rationale", {"type": "string"}, description="why; recorded on the proposal"),
            _DRY_RUN,
        ),
        writes=True,
        cli=replace(_PROPOSED, names={"evidence": ("--evidence", "--source"),
                                      "entities": ("--entity",), "session_id": ("--session",)}),
    ))
    register(Method(
        "kb.propose_page", "propose", "Propose a markdown page.",
        "vouch.gate.handlers:propose_page",
        (
            Param("title", {"type": "string"}, required=True),
            Param("body", {"type": "string"}, description="markdown"),
            Param("type", {"type": "string"}, default=page.KIND.default("type"),
                  description=_enum_doc(page.TYPES)),
            Param("claims", _IDS()),
            Param("entities", _IDS()),
            Param("sources", _IDS()),
            Param("tags", _IDS()),
            _DRY_RUN,
        ),
        writes=True,
        cli=replace(_PROPOSED, files=("body",), names={
            "claims": ("--claim",), "entities": ("--entity",), "sources": ("--source",)}),
    ))
    register(Method(
        "kb.propose_entity", "propose", "Propose an entity (person, system, concept, ...).",
        "vouch.gate.handlers:propose_entity",
        (
            Param("name", {"type": "string"}, required=True),
            Param("type", {"type": "string"}, required=True,
                  description=_enum_doc(entity.TYPES)),
            Param("aliases", _IDS()),
            Param("description", {"type": "string"}),
            _DRY_RUN,
        ),
        writes=True,
        cli=replace(_PROPOSED, names={"aliases": ("--alias",)}),
    ))
    register(Method(
        "kb.propose_relation", "propose", "Propose a typed relation between two objects.",
        "vouch.gate.handlers:propose_relation",
        (
            Param("source", {"type": "string"}, required=True, description="from this id"),
            Param("relation", {"type": "string"}, required=True,
                  description=_enum_doc(relation.TYPES)),
            Param("target", {"type": "string"}, required=True, description="to this id"),
            confidence,
            Param("evidence", _IDS()),
            _DRY_RUN,
        ),
        writes=True,
        cli=replace(_PROPOSED, names={"source": ("--from",), "relation": ("--rel",),
                                      "target": ("--to",)}),
    ))
    register(Method("kb.list_pending", "read", "Open proposals, oldest first.",
                    "vouch.gate.handlers:list_pending", _LIST,
                    cli=Cli(verb=("pending",), keys={"filter": ("kind", "proposer")},
                            human=f"{_HUMAN}pending")))
    register(Method("kb.read_proposal", "read",
                    "One proposal: metadata, object, state and the diff it merges.",
                    "vouch.gate.handlers:read_proposal",
                    (Param("id", {"type": "string"}, required=True,
                           description="proposal id"),),
                    cli=Cli(verb=("read", "proposal"), args=("id",),
                            human=f"{_HUMAN}proposal")))
    register(Method(
        "kb.approve", "decide", "Approve a proposal: merge it into its base branch.",
        "vouch.gate.handlers:approve",
        (
            Param("proposal_id", {"type": "string"}, required=True),
            Param("reason", {"type": "string"}),
            Param("approver", {"type": "string"},
                  description="acts as this approver (trusted callers only)"),
            Param("expect", {"type": "string"},
                  description="the proposal commit that was reviewed; refused if it differs"),
        ),
        writes=True,
        cli=Cli(args=("proposal_id",), repeat=True, human=f"{_HUMAN}approved"),
    ))
    register(Method(
        "kb.reject", "decide", "Reject a proposal with a reason; its commit is kept.",
        "vouch.gate.handlers:reject",
        (
            Param("proposal_id", {"type": "string"}, required=True),
            Param("reason", {"type": "string"}, required=True),
        ),
        writes=True,
        cli=Cli(args=("proposal_id",), human=f"{_HUMAN}rejected"),
    ))
    register(Method(
        "kb.audit", "maintenance", "Audit events, oldest first (tail: only the newest N).",
        "vouch.gate.handlers:audit_events",
        (
            Param("tail", {"type": "integer", "minimum": 0}),
            Param("filter", {"type": "object"},
                  description="{event, actor}; event also matches its dotted children"),
        ),
        cli=Cli(keys={"filter": ("event", "actor")}, human=f"{_HUMAN}audit"),
    ))
    register(Method("kb.audit_verify", "maintenance",
                    "Check the audit log against git history: hashes, chain, anchors, "
                    "merges made without a decision.",
                    "vouch.gate.handlers:audit_verify",
                    cli=Cli(verb=("audit-verify",), human=f"{_HUMAN}verified")))
    register(Method(
        "kb.register_evidence", "intake",
        "Store a span pointer into a source (quote checked against its content).",
        "vouch.gate.handlers:register_evidence",
        (
            Param("source_id", {"type": "string"}, required=True),
            Param("locator", {"type": "string"}, required=True,
                  description="L10-L20, L7 or #section-anchor"),
            Param("quote", {"type": "string"}),
        ),
        writes=True,
        cli=Cli(verb=("evidence", "add"), args=("source_id", "locator"),
                human=f"{_HUMAN}identifier"),
    ))


_register_gate()


# -- index (issue 4) ---------------------------------------------------------------------
register(Method(
    "kb.index_rebuild", "maintenance",
    "Rebuild the derived search index from the files (atomic: built aside, swapped in).",
    "vouch.index.methods:index_rebuild",
    (Param("force", {"type": "boolean"}, default=False,
           description="replace an index that belongs to another knowledge base (E003)"),),
    cli=Cli(verb=("index", "rebuild"), human=f"{_HUMAN}rebuilt"),
))
register(Method("kb.index_status", "read",
                "The search index: fresh/stale/missing/corrupt, counts, model, sizes.",
                "vouch.index.methods:index_status",
                cli=Cli(verb=("index", "status"), human=f"{_HUMAN}index_status")))
