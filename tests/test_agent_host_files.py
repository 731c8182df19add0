"""An agent host's file is a repository's to choose (fourth outsider, rows 20-22): a
committed `.mcp.json` linked to /dev/zero, a FIFO, 200,000 nested brackets or a huge
`command` made `doctor` read 23 GB, crash with E200 (RecursionError) or print a 100 MB
report, and `install-agent` crash the same way. Both read these files bounded now: a
warning from doctor, E100 from install-agent, nothing written."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import git

from vouch.install import hostfiles
from vouch.store.kb import KB

DEEP_JSON = "[" * 100_000 + "]" * 100_000  # within the 256 KiB a host file may hold
DEEP_TOML = {
    "array": "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "inline table": "a = " + "{b = " * 40_000 + "}" * 40_000 + "\n",
    "dotted key": "[" + ".".join(["k"] * 100_000) + "]\n",
}


def _tree(root: Path) -> dict[str, bytes | str]:
    """Every file under `root` but .git's: its bytes, or where a link points."""
    found: dict[str, bytes | str] = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if ".git" in path.relative_to(root).parts:
            continue
        if path.is_symlink():
            found[rel] = os.readlink(path)
        elif path.is_file():
            found[rel] = path.read_bytes()
    return found


def _agents(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in report["issues"] if i["check"] == "agents"]


def _limited(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `python -m vouch` with 1 GB of address space and a minute: an unbounded
    read of /dev/zero fails the test instead of the machine."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    return subprocess.run(
        [sys.executable, "-m", "vouch", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit,
    )


def test_doctor_reads_no_committed_link_to_a_device(kb: KB) -> None:
    (kb.root / ".mcp.json").symlink_to("/dev/zero")
    git(kb.root, "add", ".mcp.json")
    git(kb.root, "commit", "-qm", "add mcp config")
    head, before = git(kb.root, "rev-parse", "HEAD"), _tree(kb.root)
    res = _limited(kb.root, "doctor", "--json")
    assert res.returncode == 0, res.stderr  # a warning; E200 and exit 2 before
    [issue] = _agents(json.loads(res.stdout))
    assert issue["severity"] == "warn" and issue["kind"] == "agent-host-unreadable"
    assert issue["path"] == ".mcp.json" and "is a link" in issue["message"]
    assert git(kb.root, "rev-parse", "HEAD") == head and _tree(kb.root) == before


def test_doctor_and_install_agent_refuse_a_fifo_without_blocking(kb: KB, run_cli) -> None:
    (kb.root / ".cursor").mkdir()
    os.mkfifo(kb.root / ".cursor" / "mcp.json")  # opening it to read would wait for a writer
    res = run_cli("doctor", "--json", cwd=kb.root)
    assert res.code == 0, res.err
    [issue] = _agents(res.json())
    assert issue["kind"] == "agent-host-unreadable" and "not a regular file" in issue["message"]
    res = run_cli("install-agent", "cursor", cwd=kb.root)
    assert res.code == 1 and "E100" in res.err and "not a regular file" in res.err
    assert not (kb.root / ".cursor" / "rules").exists()


@pytest.mark.parametrize("shape", ["json", *DEEP_TOML])
def test_nesting_100k_deep_is_refused_not_a_crash(kb: KB, run_cli, shape: str) -> None:
    host, rel, text = (
        ("claude-code", ".mcp.json", DEEP_JSON)
        if shape == "json"
        else ("codex", ".codex/config.toml", DEEP_TOML[shape])
    )
    (kb.root / rel).parent.mkdir(exist_ok=True)
    (kb.root / rel).write_text(text)
    before, started = _tree(kb.root), time.monotonic()
    res = run_cli("install-agent", host, cwd=kb.root)
    assert res.code == 1, res.err  # E200, RecursionError, exit 2 before
    assert time.monotonic() - started < 15  # tomllib took 96 s over the dotted key
    assert "E100" in res.err and "nests values more than 64 deep" in res.err
    assert _tree(kb.root) == before
    res = run_cli("doctor", "--json", cwd=kb.root)
    assert res.code == 0, res.err
    [issue] = _agents(res.json())
    assert issue["kind"] == "agent-host-unreadable" and issue["path"] == rel
    assert "more than 64 deep" in issue["message"]
    assert _tree(kb.root) == before


def test_a_value_nested_past_the_bound_is_refused_though_python_parses_it(kb: KB, run_cli) -> None:
    (kb.root / ".mcp.json").write_text("[" * 100 + "]" * 100)  # json.loads: fine
    res = run_cli("install-agent", "claude-code", cwd=kb.root)
    assert res.code == 1 and "more than 64 deep" in res.err
    assert (kb.root / ".mcp.json").read_text() == "[" * 100 + "]" * 100


def test_a_huge_file_is_refused_and_a_long_command_is_quoted_short(kb: KB, run_cli) -> None:
    big = '{"mcpServers": {"vouch": {"command": "/' + "x" * (2 << 20) + '"}}}'
    (kb.root / ".mcp.json").write_text(big)
    res = run_cli("doctor", "--json", cwd=kb.root)
    assert res.code == 0 and len(res.out) < 20_000  # a 100 MB report before
    [issue] = _agents(res.json())
    assert issue["kind"] == "agent-host-unreadable" and "larger than" in issue["message"]
    res = run_cli("install-agent", "claude-code", cwd=kb.root)
    assert res.code == 1 and "E100" in res.err and "larger than" in res.err
    assert (kb.root / ".mcp.json").read_text() == big
    # under the bound: read, judged, and the command cut short wherever it is quoted
    command = "/" + "x" * 200_000
    (kb.root / ".mcp.json").write_text(json.dumps({"mcpServers": {"vouch": {"command": command}}}))
    for fmt in ("--json", "--format=human"):
        res = run_cli("doctor", fmt, cwd=kb.root)
        assert res.code == 0 and len(res.out) < 20_000, (fmt, len(res.out))
    [stale] = _agents(run_cli("doctor", "--json", cwd=kb.root).json())
    assert stale["kind"] == "agent-host-stale" and "199801 more characters" in stale["message"]


def test_a_host_file_that_is_not_json_stays_the_hosts_to_judge(kb: KB, run_cli) -> None:
    (kb.root / ".mcp.json").write_bytes(b"\xff{not json")
    assert not _agents(run_cli("doctor", "--json", cwd=kb.root).json())
    assert hostfiles.cut("abc", 2) == "ab… (1 more characters)"
