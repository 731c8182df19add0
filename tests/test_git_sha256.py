"""sha1 and sha256 repositories alike: hashing, the gate, search and crash recovery.

Every test runs in a real repository of each object format (`git init --object-format`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import git
from gate_support import (
    BOB,
    PERSON,
    a_source,
    branches,
    head,
    make_user_mess,
    propose_claim,
    proposed,
    user_state,
    vouch_forked,
)

from vouch.git import Repo
from vouch.git import index_file as gitindex
from vouch.kinds import claim
from vouch.store import audit, journal, landing
from vouch.store.kb import KB

ALGOS = ["sha1", "sha256"]
HEX = {"sha1": 40, "sha256": 64}


@pytest.fixture(params=ALGOS)
def algo_kb(request: pytest.FixtureRequest, tmp_path: Path) -> KB:
    """A knowledge base with the example sources, in a repository of each object format."""
    from vouch.methods.demo import example_files
    from vouch.store import sources
    from vouch.store.initkb import init_kb

    root = tmp_path / f"repo-{request.param}"
    root.mkdir()
    git(root, "init", "-q", f"--object-format={request.param}")
    (root / "README.md").write_text("a project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "initial")
    init_kb(root)
    kb = KB.open(root)
    sources.register_many(
        kb, [sources.intake_for_path(kb, p) for p in example_files()], "Test Person"
    )
    assert git(root, "rev-parse", "--show-object-format").strip() == request.param
    return kb


def _algo(kb: KB) -> str:
    return git(kb.root, "rev-parse", "--show-object-format").strip()


def _consistent(root: Path) -> None:
    """Index, work tree and history agree, and git finds nothing wrong."""
    assert git(root, "status", "--porcelain", "--untracked-files=all", ".vouch") == ""
    assert git(root, "diff", "--cached", "--name-only", "--", ".vouch") == ""
    git(root, "fsck", "--strict", "--no-dangling")


def test_hashing_follows_the_repository(algo_kb: KB) -> None:
    kb, root = algo_kb, algo_kb.root
    repo = Repo(root)
    algo = _algo(kb)
    assert repo.store.algo == algo
    data = b"some bytes\n"
    (root / "probe.txt").write_bytes(data)
    assert repo.blob_id(data) == git(root, "hash-object", "probe.txt").strip()
    assert repo.write_blob(data) == repo.blob_id(data)
    assert git(root, "cat-file", "-p", repo.blob_id(data)) == data.decode()
    assert repo.empty_tree == git(root, "hash-object", "-t", "tree", "/dev/null").strip()
    tip = head(root)
    tree = repo.store.peel_tree(tip)
    assert tree == git(root, "rev-parse", "HEAD^{tree}").strip() and len(tree) == HEX[algo]
    # removing everything from a tree gives git's empty tree, not another format's
    everything = {p: None for p in git(root, "ls-files").split()}
    assert repo.edit_tree(tree, everything) == repo.empty_tree
    commit = repo.write_commit(tree, [tip], "a commit\n")
    assert git(root, "cat-file", "-t", commit).strip() == "commit"
    assert repo.commit_parents(commit) == [tip]
    git(root, "fsck", "--strict", "--no-dangling", commit)


def test_the_gate_end_to_end(algo_kb: KB, run_cli, monkeypatch) -> None:
    kb, root = algo_kb, algo_kb.root
    sid = a_source(kb)
    assert run_cli("source", "add", "-", cwd=root, input="another source\n").code == 0
    monkeypatch.setenv("VOUCH_AGENT", "bot")  # an agent proposes; the git user decides
    p1 = run_cli(
        "propose-claim", "--text", "Deploys need a green CI run", "--source", sid, cwd=root
    ).out.strip()
    p2 = run_cli(
        "propose-claim", "--text", "A doubtful claim", "--source", sid, cwd=root
    ).out.strip()
    monkeypatch.delenv("VOUCH_AGENT")
    shown = run_cli("show", p1, "--json", cwd=root).json()
    assert shown["state"] == "pending" and "+text: Deploys need a green CI run" in shown["diff"]
    assert run_cli("show", p2, cwd=root).code == 0  # the reviewer reads both
    make_user_mess(root)
    before = user_state(root)
    res = run_cli("approve", p1, "--as", BOB, cwd=root)
    assert res.code == 0, res.err
    res = run_cli("reject", p2, "--reason", "not in any source", "--as", BOB, cwd=root)
    assert res.code == 0, res.err
    assert user_state(root) == before and branches(root) == []
    assert len(head(root)) == HEX[_algo(kb)]
    assert run_cli("show", p1, "--json", cwd=root).json()["state"] == "approved"
    assert run_cli("show", p2, "--json", cwd=root).json()["state"] == "rejected"
    cid = claim.KIND.make_id({"text": "Deploys need a green CI run"})
    assert kb.read(claim.KIND, cid)["approved_by"] == PERSON  # the git user; --as bob a label
    found = run_cli("search", "green CI run", "--fts-only", "--json", cwd=root).json()["results"]
    assert any(r["id"] == cid for r in found)
    assert run_cli("audit", "--verify", cwd=root).code == 0
    _consistent(root)


def test_uncommitted_work_is_refused_and_equal_content_is_not(algo_kb: KB, run_cli) -> None:
    kb, root = algo_kb, algo_kb.root
    pid = propose_claim(kb, "Clobber check")
    target = kb.path_of(claim.KIND, claim.KIND.make_id({"text": "Clobber check"}))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("mine\n")
    res = run_cli("approve", pid, "--as", BOB, cwd=root)
    assert res.code == 1 and target.name in res.err
    # the very bytes the approval will write are not in the way (the repository's hash
    # of the file equals the blob)
    blob = git(root, "rev-parse", f"vouch/proposal/{pid}:{target.relative_to(root)}").strip()
    target.write_bytes(Repo(root).read_blob(blob))
    landing.refuse_clobber(
        kb, {str(target.relative_to(root)): None}, {str(target.relative_to(root)): blob}
    )
    target.unlink()
    assert run_cli("approve", pid, "--as", BOB, cwd=root).code == 0
    _consistent(root)


@pytest.mark.parametrize("step", ["index", "worktree", "staged", "refs"])
def test_an_approve_killed_midway_is_finished_by_the_next_write(
    algo_kb: KB, step: str, run_cli
) -> None:
    kb, root = algo_kb, algo_kb.root
    pid = propose_claim(kb, f"Crash claim {step}")
    make_user_mess(root)
    before = user_state(root)
    proc = vouch_forked(root, "approve", pid, "--as", BOB, env={landing.FAULT_ENV: step})
    assert isinstance(proc, subprocess.CompletedProcess)
    assert proc.returncode == 86, proc.stderr  # died on the spot
    # the next write, of anything, finishes the landing first (it used to fail with
    # E105 in a sha256 repository: the work tree was hashed with sha1)
    later = proposed(kb, "kb.propose_claim", {"text": "A later claim", "evidence": [a_source(kb)]})
    assert later["valid"], later
    assert f"refs/heads/vouch/proposal/{pid}" not in branches(root)
    cid = claim.KIND.make_id({"text": f"Crash claim {step}"})
    assert kb.read(claim.KIND, cid)["approved_by"] == PERSON  # the git user; --as bob a label
    assert len(git(root, "log", "--merges", "--format=%H").split()) == 1
    assert user_state(root) == before
    assert not journal.exists(kb)
    assert audit.verify(kb.dir)["ok"]
    _consistent(root)


def test_a_reject_killed_at_staged_is_finished(algo_kb: KB) -> None:
    kb, root = algo_kb, algo_kb.root
    pid = propose_claim(kb, "Rejected in a crash")
    proc = vouch_forked(
        root, "reject", pid, "--reason", "no", "--as", BOB, env={landing.FAULT_ENV: "staged"}
    )
    assert isinstance(proc, subprocess.CompletedProcess) and proc.returncode == 86
    proposed(kb, "kb.propose_claim", {"text": "a later write", "evidence": [a_source(kb)]})
    assert git(root, "for-each-ref", f"refs/vouch/rejected/{pid}").strip()
    assert git(root, "status", "--porcelain") == ""
    _consistent(root)


def test_the_index_is_patched_in_process_in_both_formats(algo_kb: KB) -> None:
    """The fast path is taken (no fallback) and leaves what git would."""
    kb, root = algo_kb, algo_kb.root
    repo = Repo(root)
    index = gitindex.read(repo.store.index, repo.store.algo)
    assert index is not None and index.width == HEX[_algo(kb)] // 2
    (root / ".vouch" / "probe.yaml").write_text("x: 1\n")
    blob = repo.write_blob(b"x: 1\n")
    assert repo._stage_fast({".vouch/probe.yaml": blob})
    assert git(root, "ls-files", "-s", ".vouch/probe.yaml").split()[1] == blob
    assert git(root, "diff", "--name-only") == ""
    git(root, "fsck", "--strict", "--no-dangling")


def test_the_reads_the_rest_of_vouch_uses(algo_kb: KB) -> None:
    """`Repo` offers what freshness, records, provenance, kb and demo ask git for."""
    root = algo_kb.root
    repo = Repo(root)
    assert repo.common_dir.resolve() == (root / ".git").resolve()
    rows = repo.log_records("HEAD", ["%H", "%s", "%B"], max_count=2)
    assert [r[0] for r in rows] == git(root, "log", "-2", "--format=%H").split()
    assert rows[0][2].startswith(rows[0][1])
    assert repo.log_records("HEAD", ["%H"], grep="initialise knowledge base")
    before = git(root, "rev-parse", "HEAD~1").strip()
    assert (
        repo.changed_names(before, "HEAD")
        == git(root, "diff-tree", "-r", "--name-only", before, "HEAD").split()
    )
    listing = repo.tree_blobs("HEAD", [".vouch/config.yaml"])
    assert listing == {".vouch/config.yaml": repo.blob_at("HEAD", ".vouch/config.yaml")}
    (root / ".vouch" / "config.yaml").write_text("edited: true\n")
    (root / ".vouch" / "scratch.txt").write_text("new\n")
    assert repo.index_changes("HEAD", ".vouch") == [".vouch/config.yaml"]
    assert ".vouch/config.yaml" in repo.tracked(".vouch")
    assert repo.untracked([".vouch"]) == [".vouch/scratch.txt"]
    assert repo.untracked([".vouch/scratch.txt", ".vouch/none"], literal=True) == [
        ".vouch/scratch.txt"
    ]
    ids = repo.hash_files([".vouch/scratch.txt"], write=False)
    assert ids == [repo.blob_id(b"new\n")] and repo.store.info(ids[0]) is None
    tip = head(root)
    repo.update_ref("refs/vouch/test", tip, None)
    repo.update_ref("refs/vouch/test", before, "0" * len(tip), force=True)
    assert head(root, "refs/vouch/test") == before
    repo.set_config("vouch.test", "yes")
    assert git(root, "config", "vouch.test").strip() == "yes"
