"""`vouch serve`: run an agent transport (JSONL or MCP) over stdin/stdout."""

from __future__ import annotations

import logging
import os

import click

from vouch.cli import cli
from vouch.cli.options import stdout_is_a_protocol
from vouch.servers import server_context


@cli.command("serve")
@click.option(
    "--transport",
    type=click.Choice(["jsonl", "mcp"]),
    default="jsonl",
    show_default=True,
    help="jsonl: one JSON request per line; mcp: Model Context Protocol over stdio.",
)
@click.option(
    "--kb",
    "kb_path",
    metavar="PATH",
    envvar="VOUCH_KB",
    help="Knowledge base (a repo or its .vouch/); default: walk up from here.",
)
@click.option(
    "--allow-decisions",
    is_flag=True,
    help="Let the agent approve and reject proposals (never its own). Without "
    "it a person decides at the CLI: `vouch approve ID`.",
)
@click.option(
    "--trusted-host",
    is_flag=True,
    help="The host enforces identity: honour kb.approve's `approver` parameter "
    "(only matters with --allow-decisions).",
)
@click.option(
    "--tools",
    type=click.Choice(["agent", "full"]),
    default=None,
    help="The methods served. agent: status, search, context, read, register, propose, "
    "revise, comment and sessions (approve and reject too with --allow-decisions); full: "
    "every method. Default: agent over MCP, full over JSONL.",
)
@click.option(
    "--max-line-bytes",
    type=click.IntRange(min=1024),
    default=None,
    hidden=True,
    help="JSONL: longest request line accepted.",
)
@click.option("-v", "--verbose", is_flag=True, help="Log every refused request to stderr.")
def serve_cmd(
    transport: str,
    kb_path: str | None,
    allow_decisions: bool,
    trusted_host: bool,
    tools: str | None,
    max_line_bytes: int | None,
    verbose: bool,
) -> None:
    """Serve kb.* methods to an agent over stdin/stdout until EOF: over MCP an agent's
    tool set (--tools full: every method), over JSONL every method.

    The agent is who you declare: VOUCH_AGENT, else `agent` in .vouch/config.yaml —
    never a request parameter or an MCP client's name. Without one the server only
    reads (status, search, context, read); with one it may also register sources and propose.
    Approving and rejecting stay with a person unless you pass --allow-decisions.
    Logs go to stderr.

    \b
    Example:  VOUCH_AGENT=claude-code vouch serve --transport mcp
    """
    stdout_is_a_protocol()
    debug = verbose or bool(os.environ.get("VOUCH_DEBUG"))
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.INFO, format="vouch serve: %(message)s"
    )
    for noisy in ("mcp", "httpx", "anyio"):  # SDK chatter stays out unless debugging
        logging.getLogger(noisy).setLevel(logging.DEBUG if debug else logging.WARNING)
    ctx = server_context(
        transport,
        kb_path=kb_path,
        trusted_host=trusted_host,
        allow_decisions=allow_decisions,
        tools=tools,
    )
    if transport == "mcp":
        from vouch.servers import mcp

        mcp.run_stdio(ctx)
        return
    from vouch.servers import jsonl

    jsonl.run_stdio(ctx, max_line_bytes or jsonl.MAX_LINE_BYTES)
