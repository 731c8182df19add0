"""Agent-host files a repository commits that hand its agents the power to decide.

Only the person who starts a server may let its agent approve and reject
(`serve --allow-decisions`) or name the approver (`--trusted-host`) — DESIGN §4.1. An
agent host starts whatever server entry the project's own `.mcp.json`,
`.cursor/mcp.json` or `.codex/config.toml` holds, so a pull request that commits an entry
with those flags makes that choice for everyone who opens the repository (the fifth
outsider, rows 38/48: doctor said "agents: ok" and the agent approved its operator's
own proposal as "Rita"). `vouch install-agent` never writes either flag.

Read from the commit, never the work tree (a committed link to /dev/zero is a link
here), bounded in size, and parsed as the host would; a file that cannot be parsed is
searched as text, since a host may read it differently. Reported by `vouch doctor`
(HEAD) and `vouch lint --since` (the range's HEAD) as an error.
"""

from __future__ import annotations

from typing import Any

from vouch.errors import VouchError
from vouch.health.issues import Issue, error
from vouch.install import hostfiles, hosts
from vouch.store.kb import KB

GRANTS = ("--allow-decisions", "--trusted-host")
MAX_BYTES = hostfiles.MAX_BYTES  # a host file larger than this is not parsed, only searched
KIND = "agent-host-decides"


def committed(kb: KB, rev: str = "HEAD") -> list[Issue]:
    """An error for each server entry of a host file committed in `rev` that grants
    decisions (or, for a file that cannot be parsed, each such file)."""
    repo = kb.repo
    if repo.peek(rev) is None:
        return []
    issues: list[Issue] = []
    seen: set[str] = set()
    for host in hosts.HOSTS:
        for rel, how in hosts.plan(host):
            if how not in ("mcp-json", "toml") or rel in seen:
                continue
            seen.add(rel)
            text = _text(kb, rev, rel)
            if text is None:
                continue
            for where, flags in _granting(text, how):
                issues.append(
                    error(
                        KIND,
                        f"the committed {rel} starts {where} with {' and '.join(flags)}: "
                        f"everyone who opens this repository in {host} would let its agent "
                        "approve and reject proposals"
                        + (", naming any approver it likes" if GRANTS[1] in flags else "")
                        + " — a choice only the person who starts the server may make; "
                        f"remove the flags from the committed file (`vouch install-agent "
                        f"{host}` writes an entry without them), and start a deciding server "
                        "yourself when you mean to",
                        path=rel,
                    )
                )
    return issues


def _text(kb: KB, rev: str, rel: str) -> str | None:
    """The committed file's text (a prefix of it when it is larger than MAX_BYTES); None
    when `rev` holds no regular file there."""
    try:
        blob = kb.repo.blob_at(rev, rel)
    except VouchError:
        return None
    if blob is None:
        return None
    # a blob's first bytes, whatever its size (a link's blob is its target's name)
    found = kb.repo.store.read_ends(blob, MAX_BYTES + 1, 0)
    if found is None or found[0] != "blob":
        return None
    return found[1].decode("utf-8", "replace")


def _granting(text: str, how: str) -> list[tuple[str, list[str]]]:
    """(which server, the flags it is started with) for each granting server entry."""
    mentioned = [g for g in GRANTS if g in text]
    if not mentioned:
        return []
    data: Any = None
    if len(text) <= MAX_BYTES:
        load = hostfiles.load_json if how == "mcp-json" else hostfiles.load_toml
        try:  # the bounded reader install-agent and doctor use (depth, dotted keys)
            data = load(text, "")
        except hostfiles.HostFileRefused:
            data = None
    key = "mcpServers" if how == "mcp-json" else "mcp_servers"
    servers = data.get(key) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        # unparsed (or a shape no host reads): what it says is judged as text
        return [("a server", mentioned)] if data is None else []
    found = []
    for name, entry in servers.items():
        flags = [g for g in GRANTS if any(g in s for s in _strings(entry))]
        if flags:
            found.append((f"the MCP server {str(name)[:80]!r}", flags))
    return found


def _strings(value: Any, depth: int = 0) -> list[str]:
    """Every string inside a server entry (command, args, env, ...), to a bounded depth."""
    if isinstance(value, str):
        return [value]
    if depth > 8:
        return []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v, depth + 1)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []
