"""Hostile proposal branches, built with git plumbing as an attacker would.

Each test takes a proposal vouch made, rewrites its commit by hand (same parent, same
trailers) and shows that `vouch approve` refuses it with nothing written: no ref moved,
no file in the work tree or outside it, the index and the audit log as they were.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git
from gate_support import ALICE, BOB, branches, call, head, propose_claim

from vouch.kinds import claim
from vouch.store import audit
from vouch.store.kb import KB, PROPOSAL_PREFIX


def git_in(
    root: Path, *args: str, data: bytes | None = None, env: dict[str, str] | None = None
) -> str:
    return (
        subprocess.run(
            ["git", *args],
            cwd=root,
            input=data,
            check=True,
            capture_output=True,
            env={**os.environ, **(env or {})},
        )
        .stdout.decode()
        .strip()
    )


def raw_tree(root: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree object written literally — git's own checks never see it."""
    body = b"".join(
        f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha) for mode, name, sha in entries
    )
    return git_in(root, "hash-object", "-t", "tree", "-w", "--literally", "--stdin", data=body)


def tree_entries(root: Path, tree: str) -> list[tuple[str, str, str]]:
    rows = git_in(root, "ls-tree", tree).splitlines()
    return [(r.split()[0], r.split("\t", 1)[1], r.split()[2]) for r in rows]


def blob(root: Path, data: bytes) -> str:
    return git_in(root, "hash-object", "-w", "--stdin", data=data)


def author_of(root: Path, rev: str) -> dict[str, str]:
    """GIT_AUTHOR_* of `rev`'s author: a commit built by hand in the proposer's name."""
    name, email = git_in(root, "log", "-1", "--format=%an%n%ae", rev).split("\n")
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email}


def rewrite(kb: KB, pid: str, tree: str, parent: str | None = None) -> str:
    """Point the proposal branch at a new commit: `tree`, same parent, message and
    author (the proposer rewrites their own proposal)."""
    ref = PROPOSAL_PREFIX + pid
    old = git_in(kb.root, "rev-parse", ref)
    message = git_in(kb.root, "log", "-1", "--format=%B", ref)
    parent = parent or git_in(kb.root, "rev-parse", f"{ref}^")
    new = git_in(
        kb.root, "commit-tree", tree, "-p", parent, "-m", message, env=author_of(kb.root, ref)
    )
    git_in(kb.root, "update-ref", ref, new, old)
    return new


def edited_tree(kb: KB, pid: str, files: dict[str, bytes | None]) -> str:
    """The proposal's tree with ordinary paths set (or removed), via a temporary index."""
    env = {"GIT_INDEX_FILE": str(kb.root / ".git" / "forge.index")}
    git_in(kb.root, "read-tree", PROPOSAL_PREFIX + pid, env=env)
    for path, data in files.items():
        if data is None:
            git_in(kb.root, "update-index", "--force-remove", path, env=env)
        else:
            git_in(
                kb.root,
                "update-index",
                "--add",
                "--cacheinfo",
                f"100644,{blob(kb.root, data)},{path}",
                env=env,
            )
    tree = git_in(kb.root, "write-tree", env=env)
    (kb.root / ".git" / "forge.index").unlink()
    return tree


def snapshot(kb: KB) -> tuple[str, ...]:
    """Everything approve could change: refs, index, work tree, files beside the repo."""
    outside = sorted(p.name for p in kb.root.parent.iterdir())
    hooks = sorted(p.name for p in (kb.root / ".git" / "hooks").iterdir())
    return (
        git_in(kb.root, "for-each-ref", "--format=%(refname) %(objectname)"),
        git_in(kb.root, "ls-files", "-s"),
        git_in(kb.root, "status", "--porcelain", "--untracked-files=all"),
        (kb.dir / audit.LOG_NAME).read_text(),
        " ".join(outside),
        " ".join(hooks),
    )


def refused(
    kb: KB, run_cli: Callable[..., object], pid: str, *needles: str, pinned: bool = False
) -> str:
    """Approve is refused with nothing written. Unless `pinned` (the reviewed pin is the
    point), the reviewer pins the branch's current commit by its full id, so what
    refuses is the check of the commit itself."""
    before = snapshot(kb)
    tip = git_in(kb.root, "rev-parse", PROPOSAL_PREFIX + pid)
    expect = () if pinned else ("--expect", tip)
    res = run_cli("approve", pid, *expect, cwd=kb.root)
    assert res.code == 1, (res.out, res.err)  # type: ignore[attr-defined]
    err: str = res.err  # type: ignore[attr-defined]
    assert "E104" in err and "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    assert snapshot(kb) == before
    return err


def _proposal(kb: KB, text: str = "Hostile proposals are refused") -> tuple[str, str]:
    pid = propose_claim(kb, text, shown=False)
    return pid, git_in(kb.root, "rev-parse", f"{PROPOSAL_PREFIX}{pid}^{{tree}}")


@pytest.mark.parametrize("name", ["..", ".git", ".GIT", "git~1", ".git. "])
def test_escaping_tree_entries_are_refused(kb_with_sources: KB, run_cli, name: str) -> None:
    kb = kb_with_sources
    pid, tree = _proposal(kb)
    payload = blob(kb.root, b"import os; os.system('touch PWNED')\n")
    inner = raw_tree(
        kb.root, [("100644", "ESCAPED_FILE", payload), ("100755", "post-merge", payload)]
    )
    hostile = raw_tree(
        kb.root, sorted([*tree_entries(kb.root, tree), ("40000", name, inner)], key=lambda e: e[1])
    )
    rewrite(kb, pid, hostile)
    refused(kb, run_cli, pid, "git refuses", name)
    assert not (kb.root.parent / "ESCAPED_FILE").exists()
    assert not (kb.root / ".git" / "hooks" / "post-merge").exists()


def test_a_pth_file_beside_the_repository_is_refused(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid, tree = _proposal(kb)
    pth = raw_tree(kb.root, [("100644", "x.pth", blob(kb.root, b"import os\n"))])
    site = raw_tree(kb.root, [("40000", "site-packages", pth)])
    up = raw_tree(kb.root, [("40000", "venv", site)])
    hostile = raw_tree(
        kb.root, sorted([*tree_entries(kb.root, tree), ("40000", "..", up)], key=lambda e: e[1])
    )
    rewrite(kb, pid, hostile)
    refused(kb, run_cli, pid)
    assert not (kb.root.parent / "venv").exists()


def test_a_name_with_a_slash_inside_is_refused(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid, tree = _proposal(kb)
    hostile = raw_tree(
        kb.root,
        sorted(
            [*tree_entries(kb.root, tree), ("100644", "../../ESCAPED", blob(kb.root, b"x"))],
            key=lambda e: e[1],
        ),
    )
    rewrite(kb, pid, hostile)
    refused(kb, run_cli, pid)


@pytest.mark.parametrize("mode", ["120000", "160000", "100755"])
def test_the_object_file_must_be_a_regular_file(kb_with_sources: KB, run_cli, mode: str) -> None:
    kb = kb_with_sources
    text = f"Mode {mode} is refused"
    pid, _ = _proposal(kb, text)
    path = f".vouch/{claim.path_for(claim.KIND.make_id({'text': text}))}"
    env = {"GIT_INDEX_FILE": str(kb.root / ".git" / "forge.index")}
    git_in(kb.root, "read-tree", PROPOSAL_PREFIX + pid, env=env)
    target = head(kb.root) if mode == "160000" else blob(kb.root, b"/etc/passwd")
    git_in(kb.root, "update-index", "--cacheinfo", f"{mode},{target},{path}", env=env)
    rewrite(kb, pid, git_in(kb.root, "write-tree", env=env))
    refused(kb, run_cli, pid, path)


def test_a_proposal_can_only_add_its_own_object(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    approved = propose_claim(kb, "An approved claim")
    call(kb, "kb.approve", {"proposal_id": approved}, actor=BOB)
    approved_path = f".vouch/{claim.path_for(claim.KIND.make_id({'text': 'An approved claim'}))}"
    pid, _ = _proposal(kb)
    forged_text = "A forged second claim"
    forged_id = claim.KIND.make_id({"text": forged_text})
    forged = claim.dump(
        claim.new(text=forged_text, evidence=[], approved_by="bob", proposed_by=ALICE)
    ).encode()
    log = (kb.dir / audit.LOG_NAME).read_bytes()
    fake_event = audit.to_line(audit.make_event("proposal.approve", "bob", [], {}, "")).encode()
    hostile = edited_tree(
        kb,
        pid,
        {
            approved_path: b"text: rollback is never needed\n",
            f".vouch/{claim.path_for(forged_id)}": forged,
            ".vouch/config.yaml": b"review:\n  approver_role: trusted-agent\n",
            "README.md": b"rewritten by a proposal\n",
            ".vouch/audit.log.jsonl": log + fake_event,
            ".vouch/audit/000009-0000000000000000.jsonl": fake_event,
        },
    )
    rewrite(kb, pid, hostile)
    err = refused(
        kb,
        run_cli,
        pid,
        approved_path,
        ".vouch/config.yaml",
        "README.md",
        ".vouch/audit.log.jsonl",
        forged_id,
    )
    assert "changes" in err and "outside what a claim proposal may add" in err
    assert run_cli("audit", "--verify", cwd=kb.root).code == 0  # the log is untouched


def test_a_hand_made_object_must_be_what_vouch_writes(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    text = "Hand-made claims are refused"
    pid, _ = _proposal(kb, text)
    cid = claim.KIND.make_id({"text": text})
    path = f".vouch/{claim.path_for(cid)}"
    original = git_in(kb.root, "show", f"{PROPOSAL_PREFIX}{pid}:{path}") + "\n"
    for forged, needle in [
        (original + "approved_by: bob\n", "approved_by"),
        (original.replace("status: working", "status: stable"), "status"),
        (original.replace("proposed_by: alice", "proposed_by: bob"), "proposed_by"),
        (original + "# a comment\n", "not written the way vouch writes"),
        (original.replace(text, "Rollback is never needed"), "does not hash"),
    ]:
        rewrite(kb, pid, edited_tree(kb, pid, {path: forged.encode()}))
        refused(kb, run_cli, pid, needle)


def test_more_commits_or_another_parent_are_refused(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid, tree = _proposal(kb)
    tip = git_in(kb.root, "rev-parse", PROPOSAL_PREFIX + pid)
    rewrite(kb, pid, tree, parent=tip)  # a second commit on top, same trailers
    refused(kb, run_cli, pid, "not a line of vouch revisions on its recorded base")


def test_approve_pins_what_was_reviewed(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    text = "Reviewed content is what lands"
    pid, _ = _proposal(kb, text)
    path = f".vouch/{claim.path_for(claim.KIND.make_id({'text': text}))}"
    shown = run_cli("show", pid, cwd=kb.root)
    assert shown.code == 0 and f"--expect {head(kb.root, PROPOSAL_PREFIX + pid)}" in shown.out
    reviewed = head(kb.root, PROPOSAL_PREFIX + pid)
    # rewritten after review: same id (the text is unchanged), another confidence
    original = git_in(kb.root, "show", f"{PROPOSAL_PREFIX}{pid}:{path}") + "\n"
    rewrite(
        kb,
        pid,
        edited_tree(
            kb, pid, {path: original.replace("confidence: 0.7", "confidence: 1.0").encode()}
        ),
    )
    refused(kb, run_cli, pid, "changed after review", reviewed, pinned=True)
    before = snapshot(kb)
    res = run_cli("approve", pid, "--as", BOB, "--expect", reviewed, cwd=kb.root)
    assert res.code == 1 and "changed after review" in res.err and snapshot(kb) == before
    # shown again, the new content can be approved — and only that commit
    run_cli("show", pid, cwd=kb.root)
    now = head(kb.root, PROPOSAL_PREFIX + pid)
    res = run_cli("approve", pid, "--as", BOB, "--expect", now, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    assert res.json()["proposal_commit"] == now
    assert kb.read(claim.KIND, claim.KIND.make_id({"text": text}))["confidence"] == 1.0
    assert not git_in(kb.root, "for-each-ref", "refs/vouch/reviewed/")


def test_show_names_what_approve_would_refuse(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid, _ = _proposal(kb)
    rewrite(kb, pid, edited_tree(kb, pid, {".vouch/config.yaml": b"agent: x\n"}))
    data = run_cli("show", pid, "--json", cwd=kb.root).json()
    assert data["problems"] and ".vouch/config.yaml" in data["problems"][0]
    assert ".vouch/config.yaml" in data["diff"]  # every path the commit touches is shown
    assert not git_in(kb.root, "for-each-ref", "refs/vouch/reviewed/")  # nothing to pin


def test_gate_settings_come_from_the_committed_config(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Self approval needs committed consent")
    config = kb.dir / "config.yaml"
    original = config.read_text()
    config.write_text(original.replace("approver_role: human", "approver_role: trusted-agent"))
    assert "trusted-agent" in config.read_text()
    res = run_cli("approve", pid, "--as", ALICE, cwd=kb.root)
    assert res.code == 1 and "cannot also approve" in res.err
    git(kb.root, "commit", "-qam", "let agents approve their own proposals")
    res = run_cli("approve", pid, "--as", ALICE, cwd=kb.root)
    assert res.code == 0, res.err


def test_the_decision_writes_the_audit_events(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Events come from the decision")
    call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)
    events = [e for e in audit.query(kb.dir) if pid in e["object_ids"]]
    assert [(e["event"], e["actor"]) for e in events] == [
        ("proposal.create", ALICE),
        ("proposal.approve", BOB),
    ]
    message = git_in(kb.root, "log", "-1", "--format=%B")
    assert f"Vouch-Audit-Head: {events[-1]['hash']}" in message
    assert branches(kb.root) == []


@pytest.mark.parametrize("committed", [False, True])
def test_a_link_inside_vouch_is_never_written_through(
    kb: KB, run_cli, tmp_path: Path, committed: bool
) -> None:
    """A symbolic link where vouch keeps a folder (`.vouch/sources/<hh>` pointing out of
    the repository), left in the work tree or committed: `source add` and a bundle
    import are refused with nothing written, inside or outside."""
    import hashlib

    outside = tmp_path / "outside"
    outside.mkdir()
    content = b"a document behind a link\n"
    (kb.root / "doc.md").write_bytes(content)
    git(kb.root, "add", "doc.md")
    git(kb.root, "commit", "-qm", "a document")
    shard = kb.dir / "sources" / hashlib.sha256(content).hexdigest()[:2]
    shard.parent.mkdir(parents=True, exist_ok=True)
    shard.symlink_to(outside)
    if committed:
        git(kb.root, "add", "-A")
        git(kb.root, "commit", "-qm", "a link")
    before = (head(kb.root), git(kb.root, "status", "--porcelain"), audit.query(kb.dir))
    res = run_cli("source", "add", "doc.md", cwd=kb.root)
    assert res.code == 1 and "E105" in res.err and "Traceback" not in res.err, res.err
    assert "sources/" + shard.name in res.err
    assert list(outside.iterdir()) == []
    assert (head(kb.root), git(kb.root, "status", "--porcelain"), audit.query(kb.dir)) == before


def _commit_link(kb: KB, where: Path, target: Path) -> None:
    """`where` (inside `.vouch`) made a symbolic link to `target` and committed, as a
    hostile repository would ship it (`git add -f`: vouch's .gitignore lists it)."""
    import shutil

    if where.is_dir() and not where.is_symlink():
        shutil.rmtree(where)
    elif where.exists():
        where.unlink()
    where.symlink_to(target)
    git(kb.root, "add", "-f", str(where.relative_to(kb.root)))
    git(kb.root, "commit", "-qm", "a link")


def test_a_committed_index_link_is_never_followed(kb: KB, run_cli, tmp_path: Path) -> None:
    """`.vouch/index` committed as a link out of the repository: search works, its index
    goes to the per-user cache, and nothing is written, replaced or removed where the
    link points (a rebuild there would swap in search.db and remove `.build-*`)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".build-keep").mkdir()
    (outside / "search.db").write_bytes(b"not an index")
    _commit_link(kb, kb.dir / "index", outside)
    (kb.root / "doc.md").write_text("Deploys roll back with the release script.\n")
    assert run_cli("source", "add", "doc.md", cwd=kb.root).code == 0
    res = run_cli("search", "roll back deploys", "--json", cwd=kb.root)
    assert res.code == 0 and res.json()["results"], res.err
    assert sorted(p.name for p in outside.iterdir()) == [".build-keep", "search.db"]
    assert (outside / "search.db").read_bytes() == b"not an index"
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "vouch"
    assert list(cache.glob("*/index/search.db"))
    assert run_cli("index", "rebuild", cwd=kb.root).code == 0
    assert sorted(p.name for p in outside.iterdir()) == [".build-keep", "search.db"]


@pytest.mark.parametrize("link", [".vouch", ".vouch/searches.log.jsonl"])
def test_a_search_never_logs_through_a_committed_link(
    kb: KB, run_cli, tmp_path: Path, link: str
) -> None:
    """The search log is local state: `.vouch` (or the log itself) committed as a link
    out of the repository gets no line appended where it points; the search works."""
    import shutil

    (kb.root / "doc.md").write_text("Deploys roll back with the release script.\n")
    assert run_cli("source", "add", "doc.md", cwd=kb.root).code == 0
    outside = tmp_path / "outside"
    if link == ".vouch":
        shutil.copytree(kb.dir, outside)
        git(kb.root, "rm", "-rq", "--cached", ".vouch")
        shutil.rmtree(kb.dir)
        kb.dir.symlink_to(outside)
        git(kb.root, "add", ".vouch")
        git(kb.root, "commit", "-qm", "a linked .vouch")
        victim = outside / "searches.log.jsonl"
        victim.unlink(missing_ok=True)
    else:
        outside.mkdir()
        victim = outside / "log"
        victim.write_text("mine\n")
        _commit_link(kb, kb.dir / "searches.log.jsonl", victim)
    res = run_cli("search", "roll back deploys", "--json", cwd=kb.root)
    assert res.code == 0 and res.json()["results"], res.err
    assert (victim.read_text() if victim.exists() else None) == (
        None if link == ".vouch" else "mine\n"
    )


@pytest.mark.parametrize("link", ["locks", "locks/write.lock"])
def test_a_committed_lock_link_is_never_followed(
    kb: KB, run_cli, tmp_path: Path, link: str
) -> None:
    """`.vouch/locks` (or its lock file) committed as a link out of the repository: the
    write lock and recovery's temp files live in the git directory now, so the link is
    never followed — nothing is created, removed or written where it points — the write
    goes through, and lint reports the committed file."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".victim.tmp").write_text("mine")
    (outside / "write.lock").write_text("not a lock")
    (kb.dir / "locks").mkdir(exist_ok=True)
    target = outside if link == "locks" else outside / "write.lock"
    _commit_link(kb, kb.dir / link, target)
    (kb.root / "doc.md").write_text("A document.\n")
    res = run_cli("source", "add", "doc.md", cwd=kb.root)
    assert res.code == 0, res.err
    assert sorted(p.name for p in outside.iterdir()) == [".victim.tmp", "write.lock"]
    assert (outside / "write.lock").read_text() == "not a lock"
    assert (outside / ".victim.tmp").read_text() == "mine"
    lint = run_cli("lint", "--json", cwd=kb.root)
    assert lint.code == 1
    [found] = [i for i in lint.json()["issues"] if i["kind"] == "tracked-local-state"]
    assert found["path"] == f".vouch/{link}"
    assert "git rm -r --cached -- .vouch/locks`" in found["message"]  # never all of .vouch
