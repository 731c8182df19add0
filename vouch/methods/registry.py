"""The registry: every kb.* method declared once — name, parameters, handler, scope.

The CLI, the JSONL and MCP servers and `kb.capabilities` are generated from this table.
A method that is not built yet is simply absent. Handlers are named as
`module:function` and imported on first call, so that loading the registry is cheap for
a cold CLI process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from vouch import __version__
from vouch.errors import GateRefused
from vouch.kinds import source as source_kind
from vouch.methods.context import CallContext
from vouch.methods.shape import (
    ATTRIBUTED_SCOPES,
    SCOPES,
    Cli,
    InvalidParams,
    Method,
    MethodNotFound,
    MissingParam,
    Param,
    string_list,
    type_problem,
)

TRANSPORTS = ("cli", "jsonl", "mcp")
SPEC = "vouch kb-methods (spec/kb-methods.md)"


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
    started the server allowed it, they change approved knowledge (scope `lifecycle`)
    only when the configuration committed on the branch says `review.agent_lifecycle:
    true`, and they write only as the agent that person declared.
    """
    if method.scope == "lifecycle" and ctx.transport != "cli":
        from vouch.gate.lifecycle import agents_may_change

        if not agents_may_change(ctx.kb):
            raise GateRefused(
                f"{method.name}: changing approved knowledge is a reviewer's call, and "
                f"this knowledge base does not let agents do it over {ctx.transport}",
                hint="a person runs it at the CLI (e.g. `vouch "
                f"{' '.join(method.command)} ...`), or commits `review.agent_lifecycle: "
                "true` in .vouch/config.yaml to allow agents",
            )
    if method.scope == "decide" and not ctx.may_decide:
        raise GateRefused(
            f"{method.name}: approving or rejecting is a person's decision, and this "
            f"{ctx.transport} server was not started to allow it",
            hint="a person decides at the CLI (`vouch approve ID`, `vouch reject ID --reason "
            "...`), or starts the server with `vouch serve --allow-decisions`",
        )
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
    from vouch.methods.actor import configured_actor

    cli = ctx.transport == "cli"
    agent = configured_actor(ctx.kb, ctx.actor_override if cli else None)
    may_write = cli or agent is not None
    return {
        "transport": ctx.transport,
        "agent": agent,
        "may_write": may_write,
        "may_decide": ctx.may_decide and may_write,
    }


# -- declarations ------------------------------------------------------------------------
_HUMAN = "vouch.cli.human:"
_ID = Param("id", {"type": "string"}, required=True, description="object id")
_LIST = (
    Param("limit", {"type": "integer", "minimum": 0}, default=50),
    Param("offset", {"type": "integer", "minimum": 0}, default=0),
    Param(
        "filter",
        {"type": "object"},
        description="field equality; for list fields (tags) every value must be present",
    ),
)

register(
    Method(
        "kb.capabilities",
        "read",
        "What this server offers (methods, retrieval, transports) and may_write / "
        "may_decide for this caller.",
        "vouch.methods.registry:capabilities",
        cli=Cli(human=f"{_HUMAN}capabilities", format="json"),
    )
)
register(
    Method(
        "kb.status",
        "read",
        "Counts of knowledge, pending proposals, last audit time.",
        "vouch.methods.reads:status",
        cli=Cli(human=f"{_HUMAN}status"),
    )
)
for _kind in ("page", "claim", "entity", "relation"):
    register(
        Method(
            f"kb.read_{_kind}",
            "read",
            f"Read one {_kind} by id (null when absent).",
            f"vouch.methods.reads:read_{_kind}",
            (_ID,),
            cli=Cli(verb=("read", _kind), args=("id",), human=f"{_HUMAN}read"),
        )
    )
for _plural in ("pages", "claims", "entities", "relations", "sources"):
    register(
        Method(
            f"kb.list_{_plural}",
            "read",
            f"List {_plural}, sorted by id.",
            f"vouch.methods.reads:list_{_plural}",
            _LIST,
            cli=Cli(verb=("list", _plural), human=f"{_HUMAN}listing"),
        )
    )

_SOURCE_TYPE = {"type": "string", "enum": list(source_kind.TYPES)}
register(
    Method(
        "kb.register_source",
        "intake",
        "Store text as a content-addressed source (not gated).",
        "vouch.methods.reads:register_source",
        (
            Param("content", {"type": "string"}, required=True, description="UTF-8 text content"),
            Param("type", _SOURCE_TYPE, default="file"),
            Param(
                "locator",
                {"type": "string"},
                required=True,
                description="where the content came from: path, URL, message id",
            ),
            Param("title", {"type": "string"}),
            Param("media_type", {"type": "string"}),
            Param("tags", string_list()),
        ),
        writes=True,
        cli=Cli(verb=("source", "register"), args=("content",), human=f"{_HUMAN}registered"),
    )
)
register(
    Method(
        "kb.register_source_from_path",
        "intake",
        "Store a file as a content-addressed source.",
        "vouch.methods.reads:register_source_from_path",
        (
            Param(
                "path",
                {"type": "string", "format": "path"},
                required=True,
                description="absolute or repo-relative",
            ),
            Param("type", _SOURCE_TYPE),
            Param("title", {"type": "string"}),
            Param("tags", string_list()),
        ),
        writes=True,
        cli=Cli(verb=("source", "add"), args=("path",), human=f"{_HUMAN}registered"),
    )
)

# -- search (issue 5) ----------------------------------------------------------------------
_SEARCH_KIND = {
    "type": "string",
    "enum": [
        "claim",
        "page",
        "entity",
        "relation",
        "source",
        "claims",
        "pages",
        "entities",
        "relations",
        "sources",
    ],
}
register(
    Method(
        "kb.search",
        "read",
        "Hybrid search (BM25 + vectors, RRF) over approved knowledge and sources.",
        "vouch.search.api:kb_search",
        (
            Param("query", {"type": "string"}, required=True, description="any text"),
            Param(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": 10_000},
                description="results per page (default search.default_top, 10)",
            ),
            Param("kinds", {"type": "array", "items": _SEARCH_KIND}),
            Param(
                "mode",
                {"type": "string", "enum": ["hybrid", "fts", "vector"]},
                default="hybrid",
                description="fts: lexical only; vector: embeddings only",
            ),
            Param("tags", string_list(), description="documents carrying every one of these"),
            Param("types", string_list(), description="claim/page/source types"),
            Param(
                "statuses",
                string_list(),
                description="only these statuses (superseded/archived/redacted: only if named)",
            ),
            Param("threshold", {"type": "number"}, description="minimum RRF score"),
            Param("rrf_k", {"type": "number", "minimum": 0}, description="RRF k (default 60)"),
            Param("cursor", {"type": "string"}, description="next_cursor of a previous response"),
            Param(
                "max_tokens",
                {"type": "integer", "minimum": 1},
                description="token budget (chars/4) for the results",
            ),
            Param("trace", {"type": "boolean"}, description="add channel lists and timings"),
            Param("include_pending", {"type": "boolean"}, description="also search open proposals"),
            Param(
                "envelope",
                {"type": "boolean"},
                description="return the whole response (cursor, truncated, trace), not the hits",
            ),
        ),
        cli=Cli(
            args=("query",),
            presets={"envelope": True},
            format="json",
            names={
                "limit": ("--top", "--limit"),
                "kinds": ("--kind",),
                "types": ("--type",),
                "statuses": ("--status",),
            },
            human="vouch.search.human:render",
        ),
    )
)
register(
    Method(
        "kb.tags",
        "read",
        "Every tag with the number of objects carrying it.",
        "vouch.search.catalog:tags",
        cli=Cli(human=f"{_HUMAN}tags"),
    )
)
register(
    Method(
        "kb.info",
        "read",
        "What the index holds for one object: chunks, headings.",
        "vouch.search.catalog:info",
        (_ID,),
        cli=Cli(args=("id",), human=f"{_HUMAN}info"),
    )
)

# -- review gate (issue 3) ---------------------------------------------------------------
_DRY_RUN = Param(
    "dry_run",
    {"type": "boolean"},
    default=False,
    description="validate only; write nothing, not even an audit line",
)
_PROPOSED = Cli(emit=f"{_HUMAN}proposed")
_IDS = string_list


def _enum_doc(values: tuple[str, ...]) -> str:
    return "one of: " + ", ".join(values)


def _register_gate() -> None:
    # Enums and ranges are checked by the gate, not by `bind`, so that a bad proposal
    # gets every problem listed at once (valid: false, errors: [...]).
    from vouch.kinds import claim, entity, page, relation

    confidence = Param(
        "confidence",
        {"type": "number"},
        default=claim.KIND.default("confidence"),
        description="0..1",
    )
    register(
        Method(
            "kb.propose_claim",
            "propose",
            "Propose a claim citing sources/evidence (a branch).",
            "vouch.methods.gate:propose_claim",
            (
                Param("text", {"type": "string"}, required=True),
                Param(
                    "evidence",
                    _IDS(),
                    required=True,
                    description="source ids, evidence ids, or <source-id>:L10-L20 pointers",
                ),
                Param(
                    "type",
                    {"type": "string"},
                    default=claim.KIND.default("type"),
                    description=_enum_doc(claim.TYPES),
                ),
                confidence,
                Param("entities", _IDS()),
                Param("scope", {"type": "string"}, description=_enum_doc(source_kind.SCOPES)),
                Param("tags", _IDS()),
                Param("session_id", {"type": "string"}),
                Param("rationale", {"type": "string"}, description="why; recorded on the proposal"),
                _DRY_RUN,
            ),
            writes=True,
            cli=replace(
                _PROPOSED,
                names={
                    "evidence": ("--evidence", "--source"),
                    "entities": ("--entity",),
                    "session_id": ("--session",),
                },
            ),
        )
    )
    register(
        Method(
            "kb.propose_page",
            "propose",
            "Propose a markdown page.",
            "vouch.methods.gate:propose_page",
            (
                Param("title", {"type": "string"}, required=True),
                Param("body", {"type": "string"}, description="markdown"),
                Param(
                    "type",
                    {"type": "string"},
                    default=page.KIND.default("type"),
                    description=_enum_doc(page.TYPES),
                ),
                Param("claims", _IDS()),
                Param("entities", _IDS()),
                Param("sources", _IDS()),
                Param("tags", _IDS()),
                _DRY_RUN,
            ),
            writes=True,
            cli=replace(
                _PROPOSED,
                files=("body",),
                names={"claims": ("--claim",), "entities": ("--entity",), "sources": ("--source",)},
            ),
        )
    )
    register(
        Method(
            "kb.propose_entity",
            "propose",
            "Propose an entity (person, system, concept, ...).",
            "vouch.methods.gate:propose_entity",
            (
                Param("name", {"type": "string"}, required=True),
                Param(
                    "type", {"type": "string"}, required=True, description=_enum_doc(entity.TYPES)
                ),
                Param("aliases", _IDS()),
                Param("description", {"type": "string"}),
                _DRY_RUN,
            ),
            writes=True,
            cli=replace(_PROPOSED, names={"aliases": ("--alias",)}),
        )
    )
    register(
        Method(
            "kb.propose_relation",
            "propose",
            "Propose a typed relation between two objects.",
            "vouch.methods.gate:propose_relation",
            (
                Param("source", {"type": "string"}, required=True, description="from this id"),
                Param(
                    "relation",
                    {"type": "string"},
                    required=True,
                    description=_enum_doc(relation.TYPES),
                ),
                Param("target", {"type": "string"}, required=True, description="to this id"),
                confidence,
                Param("evidence", _IDS()),
                _DRY_RUN,
            ),
            writes=True,
            cli=replace(
                _PROPOSED,
                names={"source": ("--from",), "relation": ("--rel",), "target": ("--to",)},
            ),
        )
    )
    register(
        Method(
            "kb.list_pending",
            "read",
            "Open proposals, oldest first.",
            "vouch.methods.gate:list_pending",
            _LIST,
            cli=Cli(
                verb=("pending",), keys={"filter": ("kind", "proposer")}, human=f"{_HUMAN}pending"
            ),
        )
    )
    register(
        Method(
            "kb.read_proposal",
            "read",
            "One proposal: metadata, object, state and the diff it merges.",
            "vouch.methods.gate:read_proposal",
            (Param("id", {"type": "string"}, required=True, description="proposal id"),),
            cli=Cli(verb=("read", "proposal"), args=("id",), human=f"{_HUMAN}proposal"),
        )
    )
    register(
        Method(
            "kb.approve",
            "decide",
            "Approve a proposal: merge it into its base branch.",
            "vouch.methods.gate:approve",
            (
                Param("proposal_id", {"type": "string"}, required=True),
                Param("reason", {"type": "string"}),
                Param(
                    "approver",
                    {"type": "string"},
                    description="acts as this approver (trusted callers only)",
                ),
                Param(
                    "expect",
                    {"type": "string"},
                    description="the proposal commit that was reviewed; refused if it differs",
                ),
            ),
            writes=True,
            cli=Cli(args=("proposal_id",), repeat=True, human=f"{_HUMAN}approved"),
        )
    )
    register(
        Method(
            "kb.reject",
            "decide",
            "Reject a proposal with a reason; its commit is kept.",
            "vouch.methods.gate:reject",
            (
                Param("proposal_id", {"type": "string"}, required=True),
                Param("reason", {"type": "string"}, required=True),
            ),
            writes=True,
            cli=Cli(args=("proposal_id",), human=f"{_HUMAN}rejected"),
        )
    )
    register(
        Method(
            "kb.audit",
            "maintenance",
            "Audit events, oldest first (tail: only the newest N).",
            "vouch.methods.gate:audit_events",
            (
                Param("tail", {"type": "integer", "minimum": 0}),
                Param(
                    "filter",
                    {"type": "object"},
                    description="{event, actor}; event also matches its dotted children",
                ),
            ),
            cli=Cli(keys={"filter": ("event", "actor")}, human=f"{_HUMAN}audit"),
        )
    )
    register(
        Method(
            "kb.audit_verify",
            "maintenance",
            "Check the audit log against git history: hashes, chain, anchors, "
            "merges made without a decision.",
            "vouch.methods.gate:audit_verify",
            cli=Cli(verb=("audit-verify",), human=f"{_HUMAN}verified"),
        )
    )
    register(
        Method(
            "kb.register_evidence",
            "intake",
            "Store a span pointer into a source (quote checked against its content).",
            "vouch.methods.gate:register_evidence",
            (
                Param("source_id", {"type": "string"}, required=True),
                Param(
                    "locator",
                    {"type": "string"},
                    required=True,
                    description="L10-L20, L7 or #section-anchor",
                ),
                Param("quote", {"type": "string"}),
            ),
            writes=True,
            cli=Cli(
                verb=("evidence", "add"), args=("source_id", "locator"), human=f"{_HUMAN}identifier"
            ),
        )
    )


_register_gate()


# -- index (issue 4) ---------------------------------------------------------------------
register(
    Method(
        "kb.index_rebuild",
        "maintenance",
        "Rebuild the derived search index from the files (atomic: built aside, swapped in).",
        "vouch.methods.index:index_rebuild",
        (
            Param(
                "force",
                {"type": "boolean"},
                default=False,
                description="replace an index that belongs to another knowledge base (E003)",
            ),
        ),
        cli=Cli(verb=("index", "rebuild"), human=f"{_HUMAN}rebuilt"),
    )
)
register(
    Method(
        "kb.index_status",
        "read",
        "The search index: fresh/stale/missing/corrupt, counts, model, sizes.",
        "vouch.methods.index:index_status",
        cli=Cli(verb=("index", "status"), human=f"{_HUMAN}index_status"),
    )
)


# -- the areas that declare their methods in their own module ----------------------------
def _register_areas() -> None:
    from vouch.methods import (
        bundle_methods,
        context_methods,
        lifecycle_methods,
        maintenance_methods,
        session_methods,
    )

    for area in (
        lifecycle_methods,
        session_methods,
        context_methods,
        maintenance_methods,
        bundle_methods,
    ):
        for method in area.METHODS:
            register(method)


_register_areas()

__all__ = [
    "ATTRIBUTED_SCOPES",
    "REGISTRY",
    "SCOPES",
    "Cli",
    "InvalidParams",
    "Method",
    "MethodNotFound",
    "MissingParam",
    "Param",
    "capabilities",
    "get",
    "invoke",
    "register",
    "type_problem",
]
