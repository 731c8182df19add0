"""Install into the agent's host (issue 18, point 6): `vouch install-agent HOST` writes
the MCP server entry and the instructions, idempotently, never touching the user's own
entries, and `--uninstall` reverses it; the installed entry starts a server that the
real MCP SDK client lists tools from."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from vouch.install import hosts
from vouch.store.kb import KB

ROOT = Path(__file__).parents[1]

USER_JSON = (
    '{\n  "mcpServers": {"other": {"command": "other-server", "args": ["--x"]}},\n  "note": 1\n}\n'
)
USER_TOML = 'model = "o3"\n\n[mcp_servers.other]\ncommand = "other-server"\n'
SEEDED = {
    "claude-code": (".mcp.json", USER_JSON),
    "cursor": (".cursor/mcp.json", USER_JSON),
    "codex": (".codex/config.toml", USER_TOML),
}
OWN_FILES = {
    "claude-code": [".mcp.json", ".claude/skills/vouch/SKILL.md"],
    "cursor": [".cursor/mcp.json", ".cursor/rules/vouch.mdc"],
    "codex": [".codex/config.toml"],
}


def _snapshot(project: Path) -> dict[str, bytes]:
    return {
        p.relative_to(project).as_posix(): p.read_bytes()
        for p in project.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(project).parts
    }


def _server(project: Path, host: str) -> dict:
    rel = SEEDED[host][0]
    text = (project / rel).read_text()
    if host == "codex":
        return tomllib.loads(text)["mcp_servers"]["vouch"]
    return json.loads(text)["mcpServers"]["vouch"]


@pytest.mark.parametrize("host", ["claude-code", "cursor", "codex"])
def test_install_twice_then_uninstall_keeps_the_users_entries(
    host: str, tmp_path: Path, run_cli
) -> None:
    project = tmp_path / "project"
    rel, user_text = SEEDED[host]
    (project / rel).parent.mkdir(parents=True)
    (project / rel).write_text(user_text)
    first = run_cli("install-agent", host, "--path", str(project), "--json")
    assert first.code == 0, first.err
    assert first.json()["changed"] is True
    assert {f["path"] for f in first.json()["files"]} == set(OWN_FILES[host])
    entry = _server(project, host)
    assert entry["env"] == {"VOUCH_AGENT": host}
    assert entry["args"][-5:] == ["serve", "--transport", "mcp", "--tools", "agent"]
    assert Path(entry["command"]).is_absolute()  # the host's PATH may not hold vouch
    if host == "codex":
        parsed = tomllib.loads((project / rel).read_text())
        assert parsed["model"] == "o3" and parsed["mcp_servers"]["other"]["command"]
        assert (project / rel).read_text().startswith(USER_TOML)
    else:
        parsed = json.loads((project / rel).read_text())
        assert parsed["note"] == 1 and parsed["mcpServers"]["other"]["args"] == ["--x"]
    installed = _snapshot(project)
    second = run_cli("install-agent", host, "--path", str(project))
    assert second.code == 0, second.err
    assert "nothing changed" in second.out
    assert _snapshot(project) == installed
    gone = run_cli("install-agent", host, "--path", str(project), "--uninstall", "--json")
    assert gone.code == 0 and gone.json()["changed"] is True, gone.err
    after = _snapshot(project)
    assert set(after) == {rel}  # vouch's own files and folders are gone
    if host == "codex":
        assert after[rel].decode() == user_text
    else:
        assert json.loads(after[rel]) == json.loads(user_text)
    again = run_cli("install-agent", host, "--path", str(project), "--uninstall")
    assert again.code == 0 and "nothing changed" in again.out


def test_what_it_cannot_edit_is_refused_with_nothing_changed(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "p"
    skill = project / ".claude" / "skills" / "vouch" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("my own notes\n")
    res = run_cli("install-agent", "claude-code", "--path", str(project))
    assert res.code == 1 and "E105" in res.err and "not written by vouch" in res.err
    assert not (project / ".mcp.json").exists()  # checked before anything was written
    assert run_cli("install-agent", "claude-code", "--path", str(project), "--uninstall").code == 0
    assert skill.read_text() == "my own notes\n"  # the user's file is never removed
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text("{not json")
    res = run_cli("install-agent", "cursor", "--path", str(project))
    assert res.code == 1 and "not valid JSON" in res.err
    assert (project / ".cursor" / "mcp.json").read_text() == "{not json"
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text('[mcp_servers.vouch]\ncommand = "mine"\n')
    res = run_cli("install-agent", "codex", "--path", str(project))
    assert res.code == 1 and "did not write" in res.err
    generic = run_cli("install-agent", "generic", "--json")
    assert generic.json()["mcpServers"]["vouch"]["env"] == {"VOUCH_AGENT": "generic"}
    assert run_cli("install-agent", "nope").code == 1


def test_the_packaged_skill_is_the_projects_skill() -> None:
    assert hosts.skill_text() == (ROOT / "SKILL.md").read_text(encoding="utf-8")


def test_the_installed_mcp_json_starts_a_server_the_sdk_lists(kb: KB, run_cli) -> None:
    res = run_cli("install-agent", "claude-code", cwd=kb.root)
    assert res.code == 0, res.err
    entry = json.loads((kb.root / ".mcp.json").read_text())["mcpServers"]["vouch"]
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        cwd=str(kb.root),
        env={**os.environ, **entry["env"]},
    )

    async def main() -> tuple[set[str], dict]:
        info = types.Implementation(name="claude-code", version="1.0")
        async with Client(params, client_info=info) as client:
            listed = await client.list_tools()
            caps = await client.call_tool("kb_capabilities", {})
            assert caps.content and caps.content[0].type == "text"
            return {t.name for t in listed.tools}, json.loads(caps.content[0].text)

    tools, caps = anyio.run(main)
    assert {"kb_search", "kb_propose_claim", "kb_read_proposal"} <= tools
    assert caps["caller"]["agent"] == "claude-code" and caps["caller"]["may_write"] is True


def test_no_file_is_written_or_removed_through_a_committed_link(
    kb: KB, run_cli: Any, tmp_path: Path
) -> None:
    """The third and fourth outsiders: `.codex`, `.cursor`, `.claude/skills` committed
    as links to folders outside led install-agent (and --uninstall) to write, edit and
    remove files there."""
    outside = tmp_path / "outside"
    for host, link in (("codex", ".codex"), ("cursor", ".cursor"), ("claude-code", ".claude")):
        target = outside / host
        target.mkdir(parents=True)
        (target / "keep.txt").write_text("theirs\n")
        (kb.root / link).symlink_to(target)
        for args in (("install-agent", host), ("install-agent", host, "--uninstall")):
            res = run_cli(*args, cwd=kb.root)
            assert res.code == 1 and "E100" in res.err and "link" in res.err, (args, res.err)
        assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]
        (kb.root / link).unlink()
