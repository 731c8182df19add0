"""Agent transports: thin adapters that expose `ops.REGISTRY` over JSONL and MCP.

Nothing here knows what a method does. A server opens the knowledge base once, holds one
long-lived `CallContext` (its `warm` dict keeps the index and the embedding model loaded
between requests) and turns each request into `ops.invoke(ctx, name, params)`.

Identity. Who acts is decided by whoever *started* the server, never by a request:
`VOUCH_AGENT`, then `agent` in config.yaml, then (MCP only) the name the client gave in
its `clientInfo`, then git's user.name. No request parameter names the proposer, so an
agent cannot approve its own proposal by claiming to be someone else. `kb.approve`'s
`approver` parameter is honoured only when the server runs with `--trusted-host`
(`CallContext.trusted`), which says the host enforces identity itself.
"""

from __future__ import annotations

from pathlib import Path

from vouch.callctx import CallContext


def server_context(transport: str, *, kb_path: str | None = None, start: Path | None = None,
                   trusted_host: bool = False) -> CallContext:
    """The one context a server keeps for its lifetime; opening the KB here fails early."""
    ctx = CallContext(kb_path=kb_path, start=start, actor_override=None,
                      trusted=trusted_host, transport=transport)
    _ = ctx.kb  # E001 at start-up, not on the first request
    return ctx


def configured_actor(ctx: CallContext) -> str | None:
    """The actor the server's environment names (VOUCH_AGENT, config `agent`), if any."""
    from vouch.actor import configured_actor as from_environment

    return from_environment(ctx.kb)
