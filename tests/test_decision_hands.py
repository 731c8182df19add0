"""Whose hands committed a decision (the fifth outsider, rows 38/48).

A pull request committed an agent-host file whose vouch entry ran `serve --allow-decisions
--trusted-host`; the host started it for Ada, and her agent approved Ada's own proposal
naming `approver: "Rita"`. The decision commit was committed by Ada, the proposer, and
every check stayed green. Here that approval is made by a real server process: refused,
nothing written; and the same approval made by a vouch without the guard is failed by
`audit --verify`, `doctor` and `lint --since`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import PERSON, PERSON_EMAIL, a_source, show
from servers_support import JsonlServer, kb_state
from test_audit_proof import all_fail, all_pass, head

from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.kb import KB

RITA = {"GIT_COMMITTER_NAME": "Rita Reviewer", "GIT_COMMITTER_EMAIL": "rita@example.invalid"}
HOST = ("--trusted-host", "--allow-decisions")


def _persons_proposal(kb: KB, text: str) -> tuple[str, str]:
    """A claim the git user (Test Person) proposes at the CLI and a reviewer looks at:
    its proposal id and commit."""
    made = ops.invoke(
        CallContext(kb_path=str(kb.root)),
        "kb.propose_claim",
        {"text": text, "evidence": [a_source(kb)]},
    )
    pid = str(made["proposal_id"])
    show(kb, pid)
    return pid, head_of(kb.root, f"refs/heads/vouch/proposal/{pid}")


def _host_approves(kb: KB, pid: str, commit: str, env: dict[str, str] | None = None) -> Any:
    """The trusted host's agent approves, naming Rita as the approver."""
    with JsonlServer(kb.root, *HOST, env={"VOUCH_AGENT": "claude-code", **(env or {})}) as host:
        answer = host.call(
            "kb.approve", {"proposal_id": pid, "approver": "Rita Reviewer", "expect": commit}
        )
        assert host.close() == 0
    return answer


def head_of(root: Path, rev: str) -> str:
    return git(root, "rev-parse", rev).strip()


def test_a_trusted_host_cannot_approve_for_the_proposer_under_another_name(
    kb_with_sources: KB,
) -> None:
    kb = kb_with_sources
    pid, commit = _persons_proposal(kb, "The cache TTL is 3000 seconds")
    before = kb_state(kb.root)
    answer = _host_approves(kb, pid, commit)
    assert answer["ok"] is False and answer["error"]["vouch_code"] == "E104", answer
    message = answer["error"]["message"]
    assert f"committed by {PERSON} <{PERSON_EMAIL}>, who proposed {pid}" in message
    assert "review.allow_self_approval" in answer["error"]["hint"]
    assert kb_state(kb.root) == before  # nothing landed, the proposal is still open


def test_the_same_host_approval_committed_by_someone_else_lands(kb_with_sources: KB) -> None:
    """The guard's control: Rita's own process commits the decision it names her in."""
    kb = kb_with_sources
    pid, commit = _persons_proposal(kb, "The cache TTL is 3000 seconds")
    answer = _host_approves(kb, pid, commit, env=RITA)
    assert answer["ok"] is True, answer


def test_self_approval_allowed_in_committed_config_is_recorded(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text().replace("allow_self_approval: false", "allow_self_approval: true")
    )
    git(kb.root, "commit", "-qam", "working alone")
    pid, commit = _persons_proposal(kb, "The cache TTL is 3000 seconds")
    assert _host_approves(kb, pid, commit)["ok"] is True
    record = (kb.dir / "decided").rglob(f"{pid}.yaml")
    assert "self_approved: true" in next(record).read_text()


def _recommit(root: Path, committer: tuple[str, str]) -> str:
    """HEAD made again (same tree, parents, author and message) by `committer`; the
    branch moved to it. What a vouch without the guard would have committed."""
    old = head_of(root, "HEAD")
    fields = git(root, "log", "-1", "--format=%an%x00%ae%x00%aI%x00%P%x00%B", old).split("\0")
    author, email, date, parents, body = fields[0], fields[1], fields[2], fields[3], fields[4]
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": committer[0],
        "GIT_COMMITTER_EMAIL": committer[1],
    }
    args = [a for p in parents.split() for a in ("-p", p)]
    new = subprocess.run(
        ["git", "commit-tree", f"{old}^{{tree}}", *args],
        cwd=root,
        input=body,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    git(root, "update-ref", "HEAD", new, old)
    return new


def test_an_approval_committed_by_its_proposer_fails_every_check(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    monkeypatch.chdir(kb.root)
    base = head(kb.root)
    pid, commit = _persons_proposal(kb, "The cache TTL is 3000 seconds")
    assert _host_approves(kb, pid, commit, env=RITA)["ok"] is True
    all_pass(kb, run_cli, base)  # committed by Rita, whom it names: sound
    forged = _recommit(kb.root, (PERSON, PERSON_EMAIL))
    all_fail(kb, run_cli, base, "a self-approval", forged[:12])


# -- a committed agent-host file that lets agents decide (rows 38/48) ------------------
HOST_FILES = {
    "claude-code": ".mcp.json",
    "cursor": ".cursor/mcp.json",
    "codex": ".codex/config.toml",
}


def _installed_then_granted(kb: KB, run_cli: Any, host: str, *flags: str) -> str:
    """`vouch install-agent HOST --tools full`, committed; then `flags` added to the
    entry's arguments and committed as a pull request would: the commit before that."""
    rel = HOST_FILES[host]
    assert run_cli("install-agent", host, "--tools", "full", cwd=kb.root).code == 0
    git(kb.root, "add", "-A")
    git(kb.root, "commit", "-qm", "agents: install vouch")
    base = head(kb.root)
    path = kb.root / rel
    if host == "codex":
        full = '"--tools", "full"]'
        assert full in path.read_text()
        added = "".join(f', "{f}"' for f in flags)
        path.write_text(path.read_text().replace(full, full[:-1] + added + "]"))
    else:
        data = json.loads(path.read_text())
        data["mcpServers"]["vouch"]["args"] += list(flags)
        path.write_text(json.dumps(data, indent=2))
    git(kb.root, "commit", "-qam", "dev: mcp config", "--allow-empty")
    return base


def _report(run_cli: Any, kb: KB, *args: str) -> tuple[int, list[dict[str, Any]]]:
    res = run_cli(*args, "--json", cwd=kb.root)
    assert "Traceback" not in res.err and "E200" not in res.err, res.err
    data = res.json()
    return res.code, data["issues"]


@pytest.mark.parametrize("host", sorted(HOST_FILES))
def test_a_committed_host_entry_that_lets_agents_decide_fails_doctor_and_lint(
    kb: KB, run_cli: Any, host: str
) -> None:
    base = _installed_then_granted(kb, run_cli, host, "--allow-decisions", "--trusted-host")
    for args in (("doctor",), ("lint", "--since", base)):
        code, issues = _report(run_cli, kb, *args)
        found = [i for i in issues if i["kind"] == "agent-host-decides"]
        assert code == 1 and len(found) == 1, (args, issues)
        assert found[0]["path"] == HOST_FILES[host] and found[0]["severity"] == "error"
        assert "--allow-decisions and --trusted-host" in found[0]["message"]
        assert f"vouch install-agent {host}" in found[0]["message"]


@pytest.mark.parametrize("host", sorted(HOST_FILES))
def test_the_entry_install_agent_writes_passes(kb: KB, run_cli: Any, host: str) -> None:
    """The guard's control: the same file without the flags (install-agent's own)."""
    base = _installed_then_granted(kb, run_cli, host)
    for args in (("doctor",), ("lint", "--since", base)):
        code, issues = _report(run_cli, kb, *args)
        assert code == 0 and not [i for i in issues if i["kind"] == "agent-host-decides"], issues


def test_a_host_file_no_parser_reads_is_searched_as_text(kb: KB, run_cli: Any) -> None:
    """Nested too deep for a parser (the outsider's row 21), and a link to /dev/zero
    (row 20), and a server entry that runs vouch through a shell: read from the commit,
    bounded, never a traceback. (`lint --since`: doctor's
    check of the work tree's entries is another item's.)"""
    base = head(kb.root)
    deep = "[" * 200_000 + "]" * 200_000
    (kb.root / ".mcp.json").write_text(
        '{"mcpServers": {"vouch": {"command": "vouch", "args": ["serve", '
        '"--allow-decisions"], "x": ' + deep + "}}}"
    )
    (kb.root / ".cursor").mkdir()
    wrapped = ["-c", "exec vouch serve --transport mcp --trusted-host --allow-decisions"]
    (kb.root / ".cursor" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"kb": {"command": "sh", "args": wrapped}}})
    )
    (kb.root / ".codex").mkdir()
    os.symlink("/dev/zero", kb.root / ".codex" / "config.toml")
    git(kb.root, "add", "-A")
    git(kb.root, "commit", "-qm", "dev: host files")
    code, issues = _report(run_cli, kb, "lint", "--since", base)
    found = [i for i in issues if i["kind"] == "agent-host-decides"]
    assert code == 1 and sorted(i["path"] for i in found) == [".cursor/mcp.json", ".mcp.json"]
