"""What `vouch install-agent HOST` writes into a project, for each agent host.

Each host gets an MCP server entry that starts `vouch serve --transport mcp` with
`VOUCH_AGENT` set to the host's name (who the agent is, fixed by the person installing
it), and the instructions the host reads (SKILL.md, shipped in the package):

- claude-code: `.mcp.json` (`mcpServers.vouch`) and `.claude/skills/vouch/SKILL.md`;
- cursor: `.cursor/mcp.json` (`mcpServers.vouch`) and `.cursor/rules/vouch.mdc`;
- codex: `.codex/config.toml` (`[mcp_servers.vouch]`, read in trusted projects);
- generic: nothing written; the JSON entry is returned for the user to paste.

Every edit is idempotent (a second run changes nothing and says so), touches only
vouch's own entry (other servers and keys stay byte for byte where they were parsed and
re-written, and untouched in TOML), refuses a file it cannot parse rather than guess,
and is reversed by `uninstall`. Files vouch owns carry a marker line; one that lacks it
is the user's and is never overwritten or removed.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from vouch.core.fsio import write_atomic
from vouch.errors import Conflict, UsageError
from vouch.install.hostfiles import HostFileRefused, cut, load_json, load_toml, read

HOSTS = ("claude-code", "cursor", "codex", "generic")
TOOLSETS = ("agent", "full")  # `vouch serve --tools` (`vouch.methods.toolsets`)
SCRIPT_NAMES = ("vouch", "vouch.exe")
SERVER = "vouch"
MARK = (
    "<!-- written by `vouch install-agent`; `vouch install-agent {host} --uninstall` removes it -->"
)
_TOML_BEGIN = "# >>> vouch install-agent: the vouch MCP server >>>"
_TOML_END = "# <<< vouch install-agent <<<"


@dataclass(frozen=True)
class Change:
    path: str  # relative to the project
    action: str  # created | updated | unchanged | removed | absent | kept


def launcher() -> tuple[str, list[str]]:
    """The command that starts this vouch wherever the host looks, by absolute path: a
    host starts its servers with its own PATH, which need not hold the virtual
    environment vouch was installed in. The `vouch` script that is running; else, when
    run as `python -m vouch`, this interpreter with `-m vouch`; else (a library caller)
    the `vouch` script installed beside this interpreter, or the interpreter itself.
    Paths are made absolute, never resolved: a virtual environment's python is a link
    whose target does not know the environment's packages."""
    interpreter = os.path.abspath(sys.executable)
    running = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if running is not None and running.name in SCRIPT_NAMES and running.is_file():
        return os.path.abspath(running), []
    beside = Path(interpreter).parent / SCRIPT_NAMES[0]
    as_module = running is not None and running.parts[-2:] == ("vouch", "__main__.py")
    if not as_module and beside.is_file() and os.access(beside, os.X_OK):
        return str(beside), []
    return interpreter, ["-P", "-m", "vouch"]  # -P: never a module of the project's folder


def server_entry(host: str, tools: str = "agent") -> dict[str, Any]:
    """The MCP server entry: this vouch by absolute path (`launcher`), serving the tool
    set asked for (`agent` by default, `full`: every method) as the agent `host`."""
    command, args = launcher()
    return {
        "command": command,
        "args": [*args, "serve", "--transport", "mcp", "--tools", tools],
        "env": {"VOUCH_AGENT": host},
    }


def skill_text() -> str:
    return resources.files("vouch").joinpath("templates/SKILL.md").read_text(encoding="utf-8")


def _cursor_rule(host: str) -> str:
    body = skill_text()
    if body.startswith("---\n"):
        body = body[body.index("\n---\n", 4) + 5 :]
    head = (
        "---\ndescription: Search, cite and propose reviewed project knowledge with vouch "
        "(.vouch/)\nalwaysApply: false\n---\n"
    )
    return head + body.rstrip("\n") + "\n\n" + MARK.format(host=host) + "\n"


def _skill(host: str) -> str:
    return skill_text().rstrip("\n") + "\n\n" + MARK.format(host=host) + "\n"


def plan(host: str) -> list[tuple[str, str]]:
    """(relative path, how it is edited) for a host: mcp-json, toml, or owned text."""
    if host == "claude-code":
        return [(".mcp.json", "mcp-json"), (".claude/skills/vouch/SKILL.md", "skill")]
    if host == "cursor":
        return [(".cursor/mcp.json", "mcp-json"), (".cursor/rules/vouch.mdc", "cursor-rule")]
    if host == "codex":
        return [(".codex/config.toml", "toml")]
    if host == "generic":
        return []
    raise UsageError(f"unknown agent host {host!r}", hint="hosts: " + ", ".join(HOSTS))


def install(
    project: Path, host: str, *, uninstall: bool = False, tools: str = "agent"
) -> list[Change]:
    """Install (or remove) vouch for `host` in `project`, serving the tool set `tools`.
    Every file is computed and checked first; nothing is written when one of them
    cannot be edited."""
    if tools not in TOOLSETS:
        raise UsageError(f"unknown tool set {tools!r}", hint="tool sets: " + ", ".join(TOOLSETS))
    entry = server_entry(host, tools)
    writes: list[tuple[Path, str | None, Change]] = []
    for rel, how in plan(host):
        path = project / rel
        _no_links(project, rel)
        old = read(project, rel)  # bounded: a committed file may be anything (hostfiles)
        if how == "mcp-json":
            new = _edit_json(old, entry, rel, uninstall)
        elif how == "toml":
            new = _edit_toml(old, entry, rel, uninstall)
        else:
            text = _skill(host) if how == "skill" else _cursor_rule(host)
            new = _edit_owned(old, text, rel, uninstall)
        writes.append((path, new, Change(rel, _action(old, new))))
    for path, new, change in writes:
        if change.action in ("created", "updated"):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, new or "")
        elif change.action == "removed":
            path.unlink()
            _prune(path.parent, project)
    return [c for _, _, c in writes]


def _no_links(project: Path, rel: str) -> None:
    """Refuse a path whose folders or file are links: a repository can commit
    `.codex` or `.claude/skills` as a link to anywhere, and vouch would read, write or
    remove files there (the third and fourth outsiders)."""
    here = project
    for part in Path(rel).parts:
        here = here / part
        if here.is_symlink():
            raise UsageError(
                f"{here} is a link, and vouch writes no agent configuration through one "
                "(a repository can commit a link that leads anywhere)",
                hint=f"remove the link ({here}) and run the command again",
            )


def _action(old: str | None, new: str | None) -> str:
    if old == new:
        return "unchanged" if old is not None else "absent"
    if new is None:
        return "removed"
    return "created" if old is None else "updated"


def _prune(directory: Path, project: Path) -> None:
    """Remove the folders vouch's files leave empty, up to the project."""
    while directory != project and project in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _edit_json(old: str | None, entry: dict[str, Any], rel: str, uninstall: bool) -> str | None:
    data: Any = {}
    if old is not None and old.strip():
        data = load_json(old, rel)
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise UsageError(f"{rel}: mcpServers is not an object; nothing was changed")
    if uninstall:
        if SERVER not in servers:
            return old
        servers = {k: v for k, v in servers.items() if k != SERVER}
        rest = {k: v for k, v in data.items() if k != "mcpServers"}
        if not servers and not rest:
            return None  # only vouch was in it
        data = {**data, "mcpServers": servers}
    else:
        if servers.get(SERVER) == entry:
            return old
        data = {**data, "mcpServers": {**servers, SERVER: entry}}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _toml_block(entry: dict[str, Any]) -> str:
    return "\n".join(
        [
            _TOML_BEGIN,
            f"[mcp_servers.{SERVER}]",
            f"command = {json.dumps(entry['command'])}",
            f"args = [{', '.join(json.dumps(a) for a in entry['args'])}]",
            f"env = {{ VOUCH_AGENT = {json.dumps(entry['env']['VOUCH_AGENT'])} }}",
            _TOML_END,
        ]
    )


def _edit_toml(old: str | None, entry: dict[str, Any], rel: str, uninstall: bool) -> str | None:
    text = old or ""
    start, end = text.find(_TOML_BEGIN), text.find(_TOML_END)
    ours = start >= 0 and end > start
    outside = text[:start] + text[end + len(_TOML_END) :] if ours else text
    if uninstall:
        if not ours:
            return old
        left = text[:start].rstrip("\n") + "\n" + text[end + len(_TOML_END) :].lstrip("\n")
        return left if left.strip() else None
    parsed = load_toml(outside, rel)
    if SERVER in (parsed.get("mcp_servers") or {}):
        raise Conflict(
            f"{rel} already has an [mcp_servers.{SERVER}] entry that vouch did not write; "
            "nothing was changed",
            hint="remove that entry (or rename it), then run the command again",
        )
    block = _toml_block(entry)
    if ours:
        new = text[:start] + block + text[end + len(_TOML_END) :]
    else:
        new = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block + "\n"
    try:
        tomllib.loads(new)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise UsageError(
            f"{rel}: adding [mcp_servers.{SERVER}] would not be valid TOML ({cut(str(exc))}); "
            "nothing was changed",
            hint="add the entry by hand (`vouch install-agent generic` prints it)",
        ) from exc
    return new


def _edit_owned(old: str | None, text: str, rel: str, uninstall: bool) -> str | None:
    mine = old is not None and "`vouch install-agent`" in old
    if old is not None and not mine:
        if uninstall:
            return old  # the user's own file: never removed
        raise Conflict(
            f"{rel} exists and was not written by vouch; nothing was changed",
            hint="move it aside, then run the command again",
        )
    return None if uninstall else text


@dataclass(frozen=True)
class Installed:
    host: str
    path: str  # relative to the project
    command: str
    args: tuple[str, ...]


def installed(project: Path) -> list[Installed]:
    """The vouch server entries the agent hosts' files in `project` hold, whoever wrote
    them; a file that is absent or unreadable holds none (it is not ours to judge)."""
    return scan(project)[0]


def scan(project: Path) -> tuple[list[Installed], list[HostFileRefused]]:
    """(the vouch server entries the agent hosts' files in `project` hold, whoever wrote
    them; the files refused past a bound: a link, a device, too large, too deep). A file
    that is absent, or not UTF-8, JSON or TOML, holds none (it is not ours to judge)."""
    found: list[Installed] = []
    refused: list[HostFileRefused] = []
    for host in HOSTS:
        for rel, how in plan(host):
            if how not in ("mcp-json", "toml"):
                continue
            try:
                text = read(project, rel)
                if text is None:
                    continue
                data: Any = load_json(text, rel) if how == "mcp-json" else load_toml(text, rel)
            except HostFileRefused as exc:
                if not exc.syntax:
                    refused.append(exc)
                continue
            key = "mcpServers" if how == "mcp-json" else "mcp_servers"
            servers = data.get(key) if isinstance(data, dict) else None
            entry = servers.get(SERVER) if isinstance(servers, dict) else None
            if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
                continue
            args = entry.get("args")
            strings = tuple(a for a in args if isinstance(a, str)) if isinstance(args, list) else ()
            found.append(Installed(host, rel, entry["command"], strings))
    return found, refused
