"""The registry: every kb.* method declared once — name, parameters, handler, scope.

The CLI, the JSONL and MCP servers and `kb.capabilities` are generated from this table.
This module is the table and the one door into it (`invoke`, `authorize`,
`capabilities`); each area declares its methods in its own `*_methods` module beside it.
A method that is not built yet is simply absent. Handlers are named as
`module:function` and imported on first call, so that loading the registry is cheap for
a cold CLI process.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vouch import __version__
from vouch.errors import GateRefused
from vouch.methods import toolsets
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


def served(ctx: CallContext) -> list[Method]:
    """The methods this caller is served (`vouch.methods.toolsets`), in registry order."""
    return [m for m in REGISTRY.values() if serves(ctx, m)]


def serves(ctx: CallContext, method: Method) -> bool:
    """Is `method` in this caller's tool set?"""
    return toolsets.serves(method, ctx.tools, allow_decisions=ctx.allow_decisions)


def invoke(ctx: CallContext, name: str, params: Mapping[str, Any] | None = None) -> Any:
    """Validate `params` against the method's schema, check the caller may, run the handler."""
    method = get(name)
    if not serves(ctx, method):
        raise MethodNotFound(f"{name} is not served here", hint=toolsets.FULL_HINT)
    bound = method.bind(params)
    authorize(ctx, method)
    _resolve_sources(ctx, method, bound)
    return method.function()(ctx, **bound)


def _resolve_sources(ctx: CallContext, method: Method, bound: dict[str, Any]) -> None:
    """Short source ids (what human output prints) and sources named by their path
    (`docs/a.rst:L5-L9`) become full ids, before the handler; a call that names every
    id in full reads no directory."""
    from vouch.store import source_names

    values = [bound.get(p.name) for p in method.params if p.ids]
    flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
    if any(source_names.wants_resolving(v) for v in flat):
        kb = ctx.kb
        method.resolve_ids(bound, source_names.resolver(kb))


def authorize(ctx: CallContext, method: Method) -> None:
    """The trust model's one door (DESIGN §4.1), by scope, before any handler runs.

    Agent transports read, register and propose; they decide only when the person who
    started the server allowed it (and a declared agent never decides at the CLI), they
    change approved knowledge (scope `lifecycle`) only when the configuration committed
    on the branch says `review.agent_lifecycle: true`, and they write only as the agent
    that person declared.
    """
    if method.scope == "lifecycle" and ctx.transport != "cli":
        from vouch.gate.lifecycle import agents_may_change

        if not agents_may_change(ctx.kb):
            raise GateRefused(
                f"{method.name}: changing approved knowledge is a reviewer's call, and "
                f"this knowledge base does not let agents do it over {ctx.transport}",
                hint="propose the corrected knowledge instead and tell the user which "
                "object to change; a person runs it at the CLI (e.g. `vouch "
                f"{' '.join(method.command)} ...`)",
            )
    if method.decides:
        from vouch.methods.deciding import require_decider

        require_decider(ctx, method.name)
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
        "methods": [m.describe() for m in served(ctx)],
        "tools": ctx.tools,
        "retrieval": retrieval,
        "review_gated": True,
        "transports": list(TRANSPORTS),
        "caller": _caller(ctx),
    }


def _caller(ctx: CallContext) -> dict[str, Any]:
    """What this caller may do here, so that an agent learns it before being refused.

    `agent` is the declared agent (VOUCH_AGENT, config `agent`); at the CLI a null one
    means the git user acts (`--as` is only a label beside them).
    """
    from vouch.methods.actor import configured_actor

    cli = ctx.transport == "cli"
    agent = configured_actor(ctx.kb, ctx.agent, server=not cli)
    may_write = cli or agent is not None
    return {
        "transport": ctx.transport,
        "agent": agent,
        "may_write": may_write,
        "may_decide": ctx.may_decide and may_write,
    }


# -- the areas that declare their methods in their own module ----------------------------
def _register_areas() -> None:
    from vouch.methods import (
        bundle_methods,
        change_methods,
        context_methods,
        forget_methods,
        gate_methods,
        index_methods,
        lifecycle_methods,
        maintenance_methods,
        migrate_methods,
        provenance_methods,
        read_methods,
        search_methods,
        session_methods,
    )

    for area in (
        read_methods,
        search_methods,
        gate_methods,
        index_methods,
        lifecycle_methods,
        change_methods,
        session_methods,
        context_methods,
        maintenance_methods,
        bundle_methods,
        provenance_methods,
        migrate_methods,
        forget_methods,
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
    "served",
    "serves",
    "type_problem",
]
