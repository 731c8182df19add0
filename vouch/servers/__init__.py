"""Agent transports: thin adapters that expose `ops.REGISTRY` over JSONL and MCP.

Nothing here knows what a method does. A server opens the knowledge base once, holds one
long-lived `CallContext` (its `warm` dict keeps the index and the embedding model loaded
between requests) and turns each request into `ops.invoke(ctx, name, params)`. What it
serves is its tool set (`--tools`, `vouch.methods.toolsets`): over MCP an agent's by
default, every method with `--tools full` (and over JSONL).

Trust (DESIGN §4.1), enforced by scope in `ops.authorize`, not here:
- Identity is declared by whoever *started* the server, never by a client: `VOUCH_AGENT`,
  else `agent` in config.yaml. No request parameter names the actor, and an MCP client's
  self-chosen `clientInfo` name is only logged. With neither set the server still starts
  but only reads: every method that records who acted (intake, propose, decide,
  lifecycle, session) is refused with E104 — it never falls back to the git user, so an
  agent's writes are never made in the name of the person who ran it.
- Approving and rejecting (scope "decide") are a person's: refused with E104 unless the
  server was started with `--allow-decisions`. Even then the gate refuses an agent's
  approval of its own proposal. `kb.approve`'s `approver` parameter is honoured only
  with `--trusted-host` (`CallContext.trusted`), which says the host enforces identity.
"""

from __future__ import annotations

import logging
from pathlib import Path

from vouch.methods.context import CallContext


def server_context(
    transport: str,
    *,
    kb_path: str | None = None,
    start: Path | None = None,
    trusted_host: bool = False,
    allow_decisions: bool = False,
    tools: str | None = None,
) -> CallContext:
    """The one context a server keeps for its lifetime; opening the KB here fails early.
    `tools`: the methods served (`vouch.methods.toolsets`; default: the transport's)."""
    from vouch.methods import toolsets

    ctx = CallContext(
        kb_path=kb_path,
        start=start,
        actor_override=None,
        trusted=trusted_host,
        transport=transport,
        allow_decisions=allow_decisions,
        tools=tools or toolsets.default_for(transport),
    )
    _ = ctx.kb  # E001 at start-up, not on the first request
    watch_files(ctx)
    return ctx


def watch_files(ctx: CallContext) -> None:
    """Tell the server's searches when `.vouch/` files change (inotify), so they see a
    hand edit at once and skip git's stat of every file while nothing changed; where
    there is no inotify, or not enough watches for every folder, they keep to
    `search.freshness_seconds`."""
    from vouch.search.access import WATCH
    from vouch.servers.watch import Watch

    found = Watch.open(str(ctx.kb.dir))
    if isinstance(found, Watch) and found.complete:  # else the window's checks are fewer
        ctx.warm[WATCH] = found
    else:
        found.close()


def configured_actor(ctx: CallContext) -> str | None:
    """The agent the server's starter declared (VOUCH_AGENT, config `agent`), if any."""
    from vouch.methods.actor import configured_actor as from_environment

    return from_environment(ctx.kb, server=True)


def log_ready(log: logging.Logger, ctx: CallContext, what: str) -> None:
    """The start-up lines on stderr: who the server acts as and what it may do."""
    from vouch.methods import registry as ops
    from vouch.methods.actor import AGENT_HINT

    agent = configured_actor(ctx)
    if agent is None:
        log.warning(
            "no VOUCH_AGENT or config `agent`: this server is read-only (reads and "
            "searches work; registering, proposing and deciding are refused); %s",
            AGENT_HINT,
        )
    log.info(
        "vouch %s server ready: kb=%s agent=%s decisions=%s trusted_host=%s methods=%d (%s%s)",
        what,
        ctx.kb.dir,
        agent or "(none: read-only)",
        "allowed" if ctx.allow_decisions else "refused (a person decides at the CLI)",
        ctx.trusted,
        len(ops.served(ctx)),
        ctx.tools,
        "" if ctx.tools == "full" else "; --tools full serves every method",
    )
