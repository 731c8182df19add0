"""Whatever a commit can carry is input, never state (issue 34, finding 1).

A branch commits `.vouch/locks/landing.json` — where vouch used to keep its landing
journal — holding a journal that moves main to an unreviewed commit, smuggles an extra
`update refs/heads/main` through a newline in a ref name, and deletes a file outside
the repository. After a plain `git merge` the next vouch write must execute none of it:
the journal lives in the git directory now (`vouch.store.state`), and even there every
field is checked and the journal is bound to its clone (`vouch.store.journal`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import git
from gate_support import BOB, head, propose_claim, vouch_forked, vouch_proc

from vouch.kinds import claim
from vouch.store import journal, state
from vouch.store.kb import KB


def _refs(root: Path) -> dict[str, str]:
    out = git(root, "for-each-ref", "--format=%(refname) %(objectname)")
    return dict(line.split() for line in out.splitlines())


def _unreviewed_commit(kb: KB, parent: str | None) -> tuple[str, str, str]:
    """A commit on `parent` that adds a claim no one reviewed: (commit, path, blob)."""
    root = kb.root
    text = "text: Unreviewed claim slipped in\nstatus: stable\nconfidence: 1.0\n"
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=root,
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    path = f".vouch/{claim.path_for(claim.KIND.make_id({'text': 'Unreviewed claim'}))}"
    env = {**os.environ, "GIT_INDEX_FILE": str(root / ".git" / "attack-index")}
    steps = [["read-tree", parent or "--empty"]]
    steps.append(["update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"])
    for args in steps:
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    tree = subprocess.run(
        ["git", "write-tree"], cwd=root, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    (root / ".git" / "attack-index").unlink()
    parents = ["-p", parent] if parent else []
    commit = git(root, "commit-tree", tree, *parents, "-m", "unreviewed").strip()
    return commit, path, blob


def _victim(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    victim = outside / "victim.txt"
    victim.write_text("keep me\n")
    return victim


def _main(root: Path) -> str:
    return git(root, "symbolic-ref", "HEAD").strip()


def _snapshot(kb: KB) -> tuple[dict[str, str], str]:
    return _refs(kb.root), git(kb.root, "status", "--porcelain", "--untracked-files=all")


def _only_the_write_landed(kb: KB, before: dict[str, str], pid: str, tip: str) -> None:
    """The approval moved main by exactly its own merge commit on `tip`, and removed
    the proposal's branch; no other ref changed, nothing else entered the tree."""
    after = _refs(kb.root)
    main = _main(kb.root)
    landed = after[main]
    assert git(kb.root, "rev-parse", f"{landed}^1").strip() == tip
    assert (
        git(kb.root, "rev-parse", f"{landed}^2").strip()
        == before[f"refs/heads/vouch/proposal/{pid}"]
    )
    dropped = {f"refs/heads/vouch/proposal/{pid}", f"refs/vouch/reviewed/{pid}"}  # its pin
    expected = {k: v for k, v in before.items() if k not in dropped}
    expected[main] = landed
    assert after == expected
    changed = sorted(git(kb.root, "diff", "--name-only", tip, landed).split())
    decided = [p for p in changed if p.startswith(".vouch/decided/")]
    cid = claim.KIND.make_id({"text": "A reviewed claim"})
    assert len(decided) == 1 and pid in decided[0], changed
    assert changed == sorted(
        [f".vouch/{claim.path_for(cid)}", decided[0], ".vouch/audit.log.jsonl"]
    )


def test_a_committed_old_journal_is_never_executed(
    kb_with_sources: KB, run_cli, tmp_path: Path
) -> None:
    """The attack of finding 1 as it was reproduced: the journal committed on a branch
    at the old place, merged with plain git, then the next vouch write."""
    kb = kb_with_sources
    root = kb.root
    victim = _victim(tmp_path)
    main = _main(root)
    base = head(root)
    unreviewed, upath, _ = _unreviewed_commit(kb, base)
    rel_victim = os.path.relpath(victim, root)
    attack = {
        "branch": main,
        "old": base,
        "commit": unreviewed,
        "others": [[f"refs/vouch/reviewed/x\nupdate {main} {unreviewed}", None, base]],
        "changes": {rel_victim: None, str(victim): None},
        "before": {},
    }
    git(root, "checkout", "-q", "-b", "evil")
    (kb.dir / "locks").mkdir(exist_ok=True)
    (kb.dir / "locks" / "landing.json").write_text(json.dumps(attack))
    git(root, "add", "-f", ".vouch/locks/landing.json")
    git(root, "commit", "-qm", "harmless-looking change")
    git(root, "checkout", "-q", main.removeprefix("refs/heads/"))
    git(root, "merge", "-q", "--no-ff", "-m", "merge evil", "evil")
    merged = head(root)
    assert (kb.dir / "locks" / "landing.json").exists()
    pid = propose_claim(kb, "A reviewed claim")
    before, _ = _snapshot(kb)
    res = run_cli("approve", pid, "--as", BOB, cwd=root)
    assert res.code == 0, res.err
    assert victim.read_text() == "keep me\n"
    assert not git(root, "ls-tree", "-r", "--name-only", "HEAD", "--", upath).strip()
    _only_the_write_landed(kb, before, pid, merged)
    assert (
        subprocess.run(
            ["git", "merge-base", "--is-ancestor", unreviewed, "HEAD"], cwd=root
        ).returncode
        == 1
    )
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    # every check names the committed file as an error
    for args in (["lint"], ["doctor"], ["lint", "--since", base]):
        report = run_cli(*args, "--json", cwd=root)
        assert report.code == 1, (args, report.out)
        found = [i for i in report.json()["issues"] if i["kind"] == "tracked-local-state"]
        assert [i["path"] for i in found] == [".vouch/locks/landing.json"], args
        assert "git rm -r --cached -- .vouch/locks" in found[0]["message"]


def _valid_journal(kb: KB, unreviewed: str, upath: str, blob: str, base: str) -> dict:
    """A journal that would move main to `unreviewed` and is valid in every field."""
    return {
        "version": journal.VERSION,
        "clone": state.clone_id(kb),
        "state": os.path.realpath(state.local_path(kb)),
        "branch": _main(kb.root),
        "old": base,
        "commit": unreviewed,
        "others": [],
        "changes": {upath: blob},
        "before": {upath: None},
    }


FORGERIES = {  # each: (the valid journal, the test's own values) -> a forged journal
    "another clone's id": lambda j, x: {**j, "clone": "0" * 32},
    "another clone's folder": lambda j, x: {**j, "state": str(x["victim"].parent)},
    "a newline in a ref": lambda j, x: {
        **j,
        "others": [
            [
                f"refs/vouch/reviewed/20260101-000000-aaaaaaaa\nupdate {j['branch']} {j['commit']}",
                None,
                j["old"],
            ]
        ],
    },
    "a ref vouch does not write": lambda j, x: {
        **j,
        "others": [["refs/heads/release", j["commit"], None]],
    },
    "a tag as the branch": lambda j, x: {**j, "branch": "refs/tags/v1"},
    "a path outside the repository": lambda j, x: {
        **j,
        "changes": {**j["changes"], "../outside/victim.txt": None},
    },
    "an absolute path": lambda j, x: {**j, "changes": {**j["changes"], str(x["victim"]): None}},
    "a path into .git": lambda j, x: {
        **j,
        "changes": {**j["changes"], ".vouch/../.git/config": None},
    },
    "a path outside the knowledge folder": lambda j, x: {
        **j,
        "changes": {**j["changes"], "README.md": None},
    },
    "a control character": lambda j, x: {
        **j,
        "changes": {**j["changes"], ".vouch/claims/a\u200bb": None},
    },
    "a short commit id": lambda j, x: {**j, "commit": j["commit"][:7]},
    "a commit that does not exist": lambda j, x: {**j, "commit": "1" * len(j["commit"])},
    "a commit not on the old tip": lambda j, x: {**j, "commit": x["unrelated"]},
    "blobs the commit does not hold": lambda j, x: {
        **j,
        "changes": dict.fromkeys(j["changes"], x["other_blob"]),
    },
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_forged_journal_in_the_state_folder_is_set_aside(
    kb_with_sources: KB, run_cli, tmp_path: Path, forgery: str
) -> None:
    """A journal placed where vouch keeps it now, valid but for one field: the next
    write sets it aside without acting on it and goes on; doctor reports it. (The
    unmodified journal moves main — see the last test: the checks are what hold.)"""
    kb = kb_with_sources
    root = kb.root
    victim = _victim(tmp_path)
    pid = propose_claim(kb, "A reviewed claim")
    base = head(root)
    unreviewed, upath, blob = _unreviewed_commit(kb, base)
    extra = {
        "victim": victim,
        "unrelated": _unreviewed_commit(kb, None)[0],  # holds the same file, on no parent
        "other_blob": git(root, "rev-parse", f"{base}:README.md").strip(),
    }
    forged = FORGERIES[forgery](_valid_journal(kb, unreviewed, upath, blob, base), extra)
    target = state.local(kb) / journal.NAME
    target.write_text(json.dumps(forged))
    before, _ = _snapshot(kb)
    res = run_cli("approve", pid, "--as", BOB, cwd=root)
    assert res.code == 0, res.err
    assert victim.read_text() == "keep me\n"
    assert not (root / upath).exists()
    _only_the_write_landed(kb, before, pid, base)
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not target.exists()
    [(aside, _reason)] = journal.rejected(kb)
    assert json.loads(aside.read_text()) == forged
    report = run_cli("doctor", "--json", cwd=root).json()
    found = [i for i in report["issues"] if i["kind"] == "invalid-journal"]
    assert len(found) == 1 and str(aside) in found[0]["message"] and "rm -f" in found[0]["message"]
    assert report["ok"] is False


def test_the_unforged_journal_would_move_main(kb_with_sources: KB, run_cli, tmp_path: Path) -> None:
    """The control for the forgeries above: the same journal with every field valid is
    executed (it is indistinguishable from vouch's own), so each refusal above comes
    from the one field that was changed."""
    kb = kb_with_sources
    root = kb.root
    base = head(root)
    unreviewed, upath, blob = _unreviewed_commit(kb, base)
    (state.local(kb) / journal.NAME).write_text(
        json.dumps(_valid_journal(kb, unreviewed, upath, blob, base))
    )
    (root / "doc.md").write_text("a document\n")
    assert run_cli("source", "add", "doc.md", cwd=root).code == 0
    assert git(root, "rev-parse", "HEAD^").strip() == unreviewed
    assert journal.rejected(kb) == []


@pytest.mark.parametrize("copied", ["the journal", "the whole state folder"])
def test_a_journal_from_another_clone_is_not_executed(
    kb_with_sources: KB, run_cli, tmp_path: Path, copied: str
) -> None:
    """A genuine journal of clone A (an approval killed before its refs moved) copied
    into clone B, which shares A's objects (`git clone --shared`): B's next write does
    not execute it; A's own next write still finishes A's landing."""
    a = kb_with_sources
    pid = propose_claim(a, "Approved in clone A")
    killed = vouch_forked(a.root, "approve", pid, "--as", BOB, env={"VOUCH_FAULT": "staged"})
    assert killed.returncode == 86, killed.stderr
    b_root = tmp_path / "b"
    git(tmp_path, "clone", "-q", "--shared", str(a.root), str(b_root))
    b = KB.open(b_root)
    (b_root / "doc.md").write_text("b's document\n")
    git(b_root, "add", "doc.md")
    git(b_root, "commit", "-qm", "b's work")
    state.clone_id(b)  # B has used vouch before
    if copied == "the journal":
        shutil.copy(state.local_path(a) / journal.NAME, state.local(b) / journal.NAME)
    else:
        shutil.rmtree(b.state_dir)
        shutil.copytree(a.state_dir, b.state_dir)
    before, _ = _snapshot(b)
    res = run_cli("source", "add", "doc.md", cwd=b_root)
    assert res.code == 0, res.err
    after = _refs(b_root)
    main = _main(b_root)
    assert git(b_root, "rev-parse", f"{after[main]}^").strip() == before[main]
    assert {k: v for k, v in after.items() if k != main} == {
        k: v for k, v in before.items() if k != main
    }
    cid = claim.KIND.make_id({"text": "Approved in clone A"})
    assert not (b.dir / claim.path_for(cid)).exists()
    assert git(b_root, "status", "--porcelain", "--untracked-files=all") == ""
    [(_, reason)] = journal.rejected(b)
    assert "clone" in reason
    # clone A's journal was its own: A's next write finishes the approval
    again = vouch_proc(a.root, "approve", pid, "--as", BOB)
    assert again.returncode == 1 and "already approved" in again.stderr
    assert (a.dir / claim.path_for(cid)).exists()


def test_the_state_folder_is_refused_when_it_is_not_ours(kb: KB, run_cli, tmp_path: Path) -> None:
    """`.git/vouch` planted as a link (or a file): every write refuses, following nothing."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(kb.state_dir)  # made by `vouch init`
    kb.state_dir.symlink_to(elsewhere)
    (kb.root / "doc.md").write_text("a document\n")
    before = head(kb.root)
    res = run_cli("source", "add", "doc.md", cwd=kb.root)
    assert res.code == 1 and "E105" in res.err and "symbolic link" in res.err, res.err
    assert "Traceback" not in res.err
    assert list(elsewhere.iterdir()) == [] and head(kb.root) == before
    kb.state_dir.unlink()
    kb.state_dir.write_text("not a folder")
    res = run_cli("source", "add", "doc.md", cwd=kb.root)
    assert res.code == 1 and "not a folder" in res.err
    kb.state_dir.unlink()
    assert run_cli("source", "add", "doc.md", cwd=kb.root).code == 0
    assert os.stat(kb.state_dir).st_mode & 0o777 == 0o700


def test_worktrees_share_the_write_lock_and_keep_their_own_journal(
    kb_with_sources: KB, run_cli, tmp_path: Path
) -> None:
    """A linked worktree (`git worktree add`) shares the refs, so it shares the clone's
    write lock; its landing journal is its own (it writes that work tree), so a write in
    one worktree never executes the other's."""
    kb = kb_with_sources
    other = tmp_path / "other"
    git(kb.root, "worktree", "add", "-q", "-b", "side", str(other))
    side = KB.open(other)
    assert state.local_path(side) != state.local_path(kb)
    assert side.state_dir == kb.state_dir
    cfg = side.dir / "config.yaml"
    cfg.write_text(cfg.read_text().replace("timeout_seconds: 30", "timeout_seconds: 0.2"))
    (other / "doc.md").write_text("the side's document\n")
    with state.write_lock(kb):  # a writer of the main work tree holds it
        res = run_cli("source", "add", "doc.md", cwd=other)
    assert res.code == 1 and "E106" in res.err and "write.lock" in res.err, res.err
    # an approval in the main work tree killed before its refs moved: its journal waits
    pid = propose_claim(kb, "Approved in the main work tree")
    killed = vouch_forked(kb.root, "approve", pid, "--as", BOB, env={"VOUCH_FAULT": "staged"})
    assert killed.returncode == 86, killed.stderr
    assert journal.exists(kb) and not journal.exists(side)
    res = run_cli("source", "add", "doc.md", cwd=other)
    assert res.code == 0, res.err
    assert journal.exists(kb) and journal.rejected(side) == [] and journal.rejected(kb) == []
    cid = claim.KIND.make_id({"text": "Approved in the main work tree"})
    assert not (side.dir / claim.path_for(cid)).exists()
    assert git(other, "status", "--porcelain", "--untracked-files=all") == (
        " M .vouch/config.yaml\n?? doc.md\n"  # the side's own changes, nothing landed
    )
    # the main work tree's next write finishes its own landing
    again = vouch_proc(kb.root, "approve", pid, "--as", BOB)
    assert again.returncode == 1 and "already approved" in again.stderr
    assert not journal.exists(kb) and (kb.dir / claim.path_for(cid)).exists()
    assert git(kb.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_an_old_untracked_journal_is_reported_never_read(kb_with_sources: KB, run_cli) -> None:
    """A journal left at the old place (an older vouch killed mid-write, or planted,
    untracked): the next write ignores it, doctor warns with the command that removes it."""
    kb = kb_with_sources
    old = kb.dir / "locks" / "landing.json"
    old.parent.mkdir(exist_ok=True)
    old.write_text(json.dumps({"branch": "refs/heads/x", "commit": "0" * 40}))
    (kb.root / "doc.md").write_text("a document\n")
    before = head(kb.root)
    assert run_cli("source", "add", "doc.md", cwd=kb.root).code == 0
    assert git(kb.root, "rev-parse", "HEAD^").strip() == before and old.exists()
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    [found] = [i for i in report["issues"] if i["kind"] == "old-journal"]
    assert found["severity"] == "warn" and f"rm '{old}'" in found["message"]
