"""Review on a host: a proposal branch pushed to a remote is approved in another clone."""

from __future__ import annotations

from pathlib import Path

from conftest import git
from gate_support import BOB, PERSON, call, propose_claim

from vouch.kinds import claim
from vouch.store.kb import KB


def test_pushed_proposal_is_approved_in_another_clone(
    kb_with_sources: KB, run_cli, tmp_path: Path
) -> None:
    author = kb_with_sources
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(author.root, "remote", "add", "origin", str(remote))
    git(author.root, "push", "-q", "origin", "main")
    pid = propose_claim(author, "Reviewed on the host")
    git(author.root, "push", "-q", "origin", f"vouch/proposal/{pid}")

    reviewer_root = tmp_path / "reviewer"
    git(tmp_path, "clone", "-q", str(remote), str(reviewer_root))
    reviewer = KB.open(reviewer_root)
    rows = run_cli("pending", "--json", cwd=reviewer_root).json()
    assert [(r["proposal_id"], r["ref"]) for r in rows] == [
        (pid, f"refs/remotes/origin/vouch/proposal/{pid}")
    ]
    assert run_cli("show", pid, cwd=reviewer_root).code == 0  # reviewed in this clone
    res = run_cli("approve", pid, "--as", BOB, cwd=reviewer_root)
    assert res.code == 0, res.err
    cid = claim.KIND.make_id({"text": "Reviewed on the host"})
    assert reviewer.read(claim.KIND, cid)["approved_by"] == PERSON
    # the remote branch outlives the approval until deleted, but it is no longer pending
    assert run_cli("pending", "--json", cwd=reviewer_root).json() == []
    res = run_cli("approve", pid, "--as", BOB, cwd=reviewer_root)
    assert res.code == 1 and "already approved" in res.err
    git(reviewer_root, "push", "-q", "origin", "main", f":vouch/proposal/{pid}")

    # the author pulls the approval; their local proposal branch is now decided
    git(author.root, "pull", "-q", "--no-rebase", "origin", "main")
    assert author.read(claim.KIND, cid)["approved_by"] == PERSON
    res = run_cli("approve", pid, "--as", BOB, cwd=author.root)
    assert res.code == 1 and "already approved" in res.err
    assert call(author, "kb.audit_verify")["ok"]


def test_a_pulled_decision_closes_the_local_branch(
    kb_with_sources: KB, run_cli, tmp_path: Path
) -> None:
    author = kb_with_sources
    pid = propose_claim(author, "Decided elsewhere")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(author.root), str(other))
    git(other, "fetch", "-q", "origin", f"vouch/proposal/{pid}:vouch/proposal/{pid}")
    assert run_cli("show", pid, cwd=other).code == 0  # reviewed in that clone
    assert run_cli("reject", pid, "--reason", "no", "--as", BOB, cwd=other).code == 0
    assert run_cli("status", "--json", cwd=author.root).json()["pending"] == 1
    git(author.root, "pull", "-q", "--no-rebase", str(other), "main")
    assert run_cli("pending", "--json", cwd=author.root).json() == []
    assert run_cli("status", "--json", cwd=author.root).json()["pending"] == 0
    res = run_cli("approve", pid, "--as", BOB, cwd=author.root)
    assert res.code == 1 and "already rejected" in res.err


def test_the_same_claim_approved_in_two_clones(
    kb_with_sources: KB, run_cli, tmp_path: Path
) -> None:
    author = kb_with_sources
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(author.root), str(other))
    mine = propose_claim(author, "Proposed twice")
    theirs = propose_claim(KB.open(other), "Proposed twice")
    assert run_cli("approve", theirs, "--as", BOB, cwd=other).code == 0
    git(author.root, "pull", "-q", "--no-rebase", str(other), "main")
    res = run_cli("approve", mine, "--as", BOB, cwd=author.root)
    assert res.code == 1 and "already approved on main" in res.err
    assert run_cli("reject", mine, "--reason", "duplicate", "--as", BOB, cwd=author.root).code == 0
    assert call(author, "kb.audit_verify")["ok"]


def test_the_gate_works_in_a_sha256_repository(tmp_path: Path, run_cli, monkeypatch) -> None:
    root = tmp_path / "s256"
    root.mkdir()
    git(root, "init", "-q", "--object-format=sha256")
    (root / "f").write_text("x\n")
    git(root, "add", "f")
    git(root, "commit", "-qm", "init")
    assert run_cli("init", cwd=root).code == 0
    sid = run_cli("source", "add", "-", cwd=root, input="hello world\n").out.split()[0]
    monkeypatch.setenv("VOUCH_AGENT", "bot")  # an agent proposes; the git user decides
    p1 = run_cli("propose-claim", "--text", "Hello", "--source", sid, cwd=root).out.strip()
    p2 = run_cli("propose-claim", "--text", "Bye", "--evidence", f"{sid}:L1", cwd=root).out.strip()
    monkeypatch.delenv("VOUCH_AGENT")
    for pid in (p1, p2):  # the reviewer reads each: 64-hex commits pinned whole
        assert f"--expect {git(root, 'rev-parse', 'vouch/proposal/' + pid).strip()}" in (
            run_cli("show", pid, cwd=root).out
        )
    assert run_cli("approve", p1, "--as", BOB, cwd=root).code == 0
    assert run_cli("reject", p2, "--reason", "no", "--as", BOB, cwd=root).code == 0
    assert git(root, "status", "--porcelain") == ""
    git(root, "fsck", "--no-dangling")
    assert run_cli("audit", "--verify", cwd=root).code == 0
