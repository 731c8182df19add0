"""`vouch install-agent HOST`: vouch's MCP server and instructions in an agent host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from vouch.cli import cli
from vouch.cli.options import Output, kb_command
from vouch.methods.context import CallContext


@cli.command("install-agent")
@click.argument("host", type=click.Choice(["claude-code", "cursor", "codex", "generic"]))
@click.option(
    "--path",
    "path",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The project to install into (default: the repository around the current directory).",
)
@click.option("--uninstall", is_flag=True, help="Remove what an install wrote; keep the rest.")
@click.option(
    "--tools",
    type=click.Choice(["agent", "full"]),
    default="agent",
    show_default=True,
    help="The MCP tools the agent gets. agent: status, search, context, read, register, "
    "propose, revise, comment and sessions; full: every kb.* method.",
)
@kb_command(writes_actor=False)
def install_agent_cmd(
    ctx: CallContext, out: Output, host: str, path: Path | None, uninstall: bool, tools: str
) -> None:
    """Configure an agent host to use vouch: claude-code (.mcp.json and a skill), cursor
    (.cursor/mcp.json and a rule), codex (.codex/config.toml) or generic (print the entry).

    The server entry runs this vouch, by absolute path (the host's PATH may not hold
    the environment it is installed in), as `serve --transport mcp --tools agent` with
    VOUCH_AGENT set to the host's name. Running it again changes nothing; other entries
    are never touched. `vouch doctor` warns when the vouch an entry runs is gone.
    """
    from vouch import git
    from vouch.install import hosts

    if host == "generic":
        entry = {"mcpServers": {hosts.SERVER: hosts.server_entry(host, tools)}}
        if uninstall:
            out.info("generic: nothing was installed, so nothing to remove")
        out.emit(entry, lambda e: json.dumps(e, indent=2))
        return
    project = (path or git.toplevel(Path.cwd()) or Path.cwd()).resolve()
    if not project.is_dir():
        from vouch.errors import NotFound

        raise NotFound(f"no such directory: {project}")
    changes = hosts.install(project, host, uninstall=uninstall, tools=tools)
    changed = any(c.action in ("created", "updated", "removed") for c in changes)
    result: dict[str, Any] = {
        "host": host,
        "project": str(project),
        "uninstall": uninstall,
        "tools": tools,
        "changed": changed,
        "files": [{"path": c.path, "action": c.action} for c in changes],
    }
    out.emit(result, _describe)


def _describe(result: dict[str, Any]) -> str:
    verb = "uninstalled from" if result["uninstall"] else "installed for"
    lines = [f"  {f['action']:<9} {f['path']}" for f in result["files"]]
    if not result["changed"]:
        state = "not installed" if result["uninstall"] else "already installed"
        return f"vouch is {state} for {result['host']} in {result['project']}: nothing changed"
    return f"vouch {verb} {result['host']} in {result['project']}:\n" + "\n".join(lines)
