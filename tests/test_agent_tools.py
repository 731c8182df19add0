"""Agent hosts (issue 36, finding 6): an agent gets a small tool set by default — the
registry filtered, not a list kept by hand — and the full one on request; the host
starts the vouch that installed it, by absolute path, even from a virtual environment
that is not on the host's PATH; `vouch doctor` says when that vouch is gone.

Servers are started by the official MCP SDK's stdio client, as a host starts them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from test_servers_mcp import payload, run_client

from vouch.methods import registry as ops
from vouch.methods import toolsets
from vouch.methods.shape import Method
from vouch.servers import jsonl, server_context
from vouch.store.kb import KB

ROOT = Path(__file__).parents[1]
AGENT_SET = {m.tool_name for m in ops.REGISTRY.values() if toolsets.serves(m, "agent")}
EVERY = {m.tool_name for m in ops.REGISTRY.values()}
DECIDING = {m.tool_name for m in ops.REGISTRY.values() if m.scope == "decide"}


def test_the_agent_set_is_the_registry_filtered() -> None:
    """What an agent's work needs — nothing that edits approved knowledge, lists whole
    kinds or maintains — and a method declared later in a served scope joins it."""
    needed = {
        "kb_capabilities",
        "kb_status",
        "kb_search",
        "kb_context",
        "kb_read_claim",
        "kb_read_page",
        "kb_read_entity",
        "kb_read_relation",
        "kb_read_proposal",
        "kb_list_pending",
        "kb_register_source",
        "kb_register_source_from_path",
        "kb_register_evidence",
        "kb_propose_claim",
        "kb_propose_page",
        "kb_propose_entity",
        "kb_propose_relation",
        "kb_propose_change",  # a change to approved knowledge, for a person to decide
        "kb_redact",
        "kb_delete",
        "kb_source_refresh",
        "kb_revise_proposal",
        "kb_comment_proposal",
        "kb_session_start",
        "kb_session_end",
        "kb_crystallize",
    }
    assert needed == AGENT_SET
    assert len(AGENT_SET) < len(EVERY) / 2
    for method in ops.REGISTRY.values():
        if method.scope in ("decide", "lifecycle", "maintenance"):
            assert method.tool_name not in AGENT_SET
    later = Method("kb.propose_note", "propose", "A later proposal kind.", "x:y")
    assert toolsets.serves(later, "agent")
    assert not toolsets.serves(later._replace(scope="lifecycle"), "agent")
    assert toolsets.serves(later._replace(scope="lifecycle"), "full")


def _listing(client: Client) -> Any:
    async def session() -> Any:
        listed = await client.list_tools()
        caps = payload(await client.call_tool("kb_capabilities", {}))
        try:
            await client.call_tool("kb_archive", {"id": "x", "reason": "y"})
        except MCPError as exc:
            refused: Any = exc
        else:
            refused = None
        return {t.name for t in listed.tools}, caps, refused

    return session()


def test_an_mcp_server_serves_an_agent_the_small_set_by_default(kb: KB) -> None:
    tools, caps, refused = run_client(
        kb, lambda c: _listing(c), client_name="host", env={"VOUCH_AGENT": "bot"}
    )
    assert tools == AGENT_SET
    assert caps["tools"] == "agent"
    assert {f"kb_{m['name'][3:]}" for m in caps["methods"]} == AGENT_SET
    # a tool outside the set is unknown here, saying how to get it
    assert isinstance(refused, MCPError) and refused.error.code == types.INVALID_PARAMS
    assert "not served" in refused.error.message and "--tools full" in refused.error.message


def test_tools_full_serves_every_method(kb: KB) -> None:
    tools, caps, refused = run_client(
        kb,
        lambda c: _listing(c),
        client_name="host",
        env={"VOUCH_AGENT": "bot"},
        args=("--tools", "full"),
    )
    assert tools == EVERY and caps["tools"] == "full"
    assert refused is None  # served: answered (refused by the trust model, as before)


def test_allowing_decisions_serves_them_to_the_agent(kb: KB) -> None:
    tools, _, _ = run_client(
        kb,
        lambda c: _listing(c),
        client_name="host",
        env={"VOUCH_AGENT": "bot"},
        args=("--allow-decisions",),
    )
    assert DECIDING and tools == AGENT_SET | DECIDING


def test_jsonl_serves_every_method_unless_told_otherwise(kb: KB) -> None:
    line = b'{"id": 1, "method": "kb.list_claims", "params": {}}'
    assert jsonl.handle_line(server_context("jsonl", kb_path=str(kb.dir)), line)["ok"]
    agent = server_context("jsonl", kb_path=str(kb.dir), tools="agent")
    refused = jsonl.handle_line(agent, line)
    assert refused["ok"] is False and refused["error"]["code"] == "method_not_found"
    assert "--tools full" in refused["error"]["hint"]
    search = b'{"id": 2, "method": "kb.search", "params": {"query": "x"}}'
    assert jsonl.handle_line(agent, search)["ok"]


# -- install-agent writes the vouch that ran it; doctor notices when it is gone ---------------
def _path_without_vouch() -> str:
    """A PATH with git and no vouch: what a host started outside the environment has."""
    git = shutil.which("git")
    assert git
    path = os.pathsep.join(dict.fromkeys([str(Path(git).parent), "/usr/bin", "/bin"]))
    if shutil.which("vouch", path=path):
        pytest.skip(f"a vouch is installed system-wide ({shutil.which('vouch', path=path)})")
    return path


def _venv(where: Path) -> Path:
    """A real virtual environment outside PATH, with a `vouch` console script of the
    shape pip writes (this checkout's vouch, through PYTHONPATH)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(where)],
        check=True,
        capture_output=True,
    )
    script = where / "bin" / "vouch"
    script.write_text(
        f"#!{where / 'bin' / 'python'}\nimport sys\nfrom vouch.launch import run\nsys.exit(run())\n"
    )
    script.chmod(0o755)
    return where


def _host_env(path: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOUCH_")}
    return {**env, "PATH": path, "PYTHONPATH": str(ROOT)}


def _start(kb: KB, entry: dict[str, Any], path: str) -> set[str]:
    """The host's side: start the entry's command with the host's PATH; list the tools."""
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        cwd=str(kb.root),
        env={**_host_env(path), **entry["env"]},
    )

    async def main() -> set[str]:
        info = types.Implementation(name="claude-code", version="1.0")
        async with Client(params, client_info=info) as client:
            return {t.name for t in (await client.list_tools()).tools}

    return anyio.run(main)


def _entry(kb: KB) -> dict[str, Any]:
    return json.loads((kb.root / ".mcp.json").read_text())["mcpServers"]["vouch"]


def _vouch(command: list[str], kb: KB, path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=kb.root, env=_host_env(path), capture_output=True, text=True, timeout=120
    )


def test_a_vouch_in_a_virtual_environment_off_path_starts_from_the_host(
    kb: KB, tmp_path: Path
) -> None:
    path = _path_without_vouch()
    venv = _venv(tmp_path / "venv")
    script = venv / "bin" / "vouch"
    made = _vouch([str(script), "install-agent", "claude-code"], kb, path)
    assert made.returncode == 0, made.stderr
    entry = _entry(kb)
    assert entry["command"] == str(script)
    assert entry["args"] == ["serve", "--transport", "mcp", "--tools", "agent"]
    assert _start(kb, entry, path) == AGENT_SET
    # run as `python -m vouch`: the interpreter with -P -m vouch (never the project's modules)
    python = venv / "bin" / "python"
    again = _vouch([str(python), "-m", "vouch", "install-agent", "claude-code", "--tools", "full"],
                   kb, path)  # fmt: skip
    assert again.returncode == 0, again.stderr
    entry = _entry(kb)
    assert entry["command"] == str(python)  # the environment's, not the one it links to
    assert entry["args"] == ["-P", "-m", "vouch", "serve", "--transport", "mcp", "--tools", "full"]
    assert _start(kb, entry, path) == EVERY


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_doctor_warns_when_an_installed_host_runs_a_vouch_that_is_gone(
    kb: KB, tmp_path: Path, run_cli
) -> None:
    path = _path_without_vouch()
    venv = _venv(tmp_path / "venv")
    made = _vouch([str(venv / "bin" / "vouch"), "install-agent", "claude-code"], kb, path)
    assert made.returncode == 0, made.stderr
    assert run_cli("install-agent", "codex", cwd=kb.root).code == 0
    healthy = run_cli("doctor", "--json", cwd=kb.root).json()
    assert [h["ok"] for h in healthy["checks"]["agents"]["hosts"]] == [True, True]
    assert not [i for i in healthy["issues"] if i["check"] == "agents"]
    venv.rename(tmp_path / "moved")  # the environment deleted or moved
    before = _files(kb.root)
    res = run_cli("doctor", "--json", cwd=kb.root)
    assert res.code == 0, res.err  # a warning: the knowledge base itself is fine
    report = res.json()
    [stale] = [i for i in report["issues"] if i["check"] == "agents"]
    assert stale["severity"] == "warn" and stale["kind"] == "agent-host-stale"
    assert stale["path"] == ".mcp.json" and "no longer exists" in stale["message"]
    assert "`vouch install-agent claude-code`" in stale["message"]
    assert report["checks"]["agents"]["verdict"] == "warnings"
    human = run_cli("doctor", cwd=kb.root)
    assert "vouch install-agent claude-code" in human.out
    assert _files(kb.root) == before  # doctor writes nothing
    # the fix it names: install again, with the vouch at hand
    assert run_cli("install-agent", "claude-code", cwd=kb.root).code == 0
    fixed = run_cli("doctor", "--json", cwd=kb.root).json()
    assert not [i for i in fixed["issues"] if i["check"] == "agents"]


def test_doctor_warns_of_a_bare_vouch_not_on_path(
    kb: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What install-agent wrote before: `"command": "vouch"`, found only on a PATH."""
    (kb.root / ".cursor").mkdir()
    (kb.root / ".cursor" / "mcp.json").write_text(
        '{"mcpServers": {"vouch": {"command": "vouch", "args": ["serve"]}, '
        '"other": {"command": "/no/such/other"}}}'
    )
    monkeypatch.setenv("PATH", _path_without_vouch())
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    [stale] = [i for i in report["issues"] if i["check"] == "agents"]  # not the other server
    assert stale["path"] == ".cursor/mcp.json" and "not on this PATH" in stale["message"]
    assert "`vouch install-agent cursor`" in stale["message"]
    (kb.root / ".cursor" / "mcp.json").write_text("{not json")  # not ours to judge
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    assert report["checks"]["agents"] == {"verdict": "ok", "hosts": []}
