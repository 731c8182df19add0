"""A proposal's comment ref is anyone's to point (fourth outsider, rows 16 and 17): one
20 MB comment was printed whole on the review screen, and a ref whose comment has
`master` for a parent made `why` list every master commit as "comment by ?". The
thread now reads the first 16 KiB of a comment (saying how to read the rest) and only
the commits that are comments on this proposal."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import git
from gate_support import BOB, call, retry_claim, show

from vouch.gate.comments import MAX_COMMENT_BYTES
from vouch.store.kb import KB


def _proposal(kb: KB) -> tuple[str, str]:
    made = retry_claim(kb)
    return str(made["proposal_id"]), str(made["claim_id"])


def _comment_commit(root: Path, message: str, parent: str | None) -> str:
    empty = git(root, "hash-object", "-t", "tree", "-w", "/dev/null").strip()
    args = ["git", "commit-tree", empty, "-F", "-"] + (["-p", parent] if parent else [])
    return subprocess.run(
        args, cwd=root, input=message, capture_output=True, text=True, check=True
    ).stdout.strip()


def _refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def test_a_huge_comment_is_shown_cut_with_how_to_read_the_rest(kb: KB, run_cli) -> None:
    pid, cid = _proposal(kb)
    assert run_cli("comment", pid, "please cite the runbook too", cwd=kb.root).code == 0
    ref = f"refs/vouch/comments/{pid}"
    first = git(kb.root, "rev-parse", ref).strip()
    tip = git(kb.root, "rev-parse", f"refs/heads/vouch/proposal/{pid}").strip()
    body = "".join(f"line {n} \x1b[2J padding padding padding\n" for n in range(100_000))
    message = (
        f"vouch: comment on {pid}\n\n{body}\n"
        f"Vouch-Proposal: {pid}\nVouch-Commenter: Rita\nVouch-Revision-Commit: {tip}\n"
    )
    huge = _comment_commit(kb.root, message, first)
    git(kb.root, "update-ref", ref, huge, first)
    shown = run_cli("show", pid, cwd=kb.root)
    assert shown.code == 0, shown.err
    assert len(shown.out) < 3 * MAX_COMMENT_BYTES  # 3.5 MB printed whole before
    assert "comment by test" in shown.out or "please cite the runbook too" in shown.out
    marker = f"more bytes of this comment: git show -s --format=%B {huge}"
    # its author is the commit's git identity; the typed trailer only beside it
    assert "its trailer claims 'Rita'" in shown.out and ": line 0" in shown.out
    assert marker in shown.out
    [_, cut] = run_cli("show", pid, "--json", cwd=kb.root).json()["comments"]
    assert cut["comment"] == huge and len(cut["text"]) <= MAX_COMMENT_BYTES
    rest = git(kb.root, "show", "-s", "--format=%B", huge)  # the command named reads it all
    assert len(rest) > cut["cut"]["more_bytes"] > len(body) - MAX_COMMENT_BYTES
    call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)
    before = _refs(kb.root)
    why = run_cli("why", cid, cwd=kb.root)
    assert why.code == 0, why.err
    assert len(why.out) < 3 * MAX_COMMENT_BYTES and marker in why.out
    assert _refs(kb.root) == before


def test_a_comment_ref_parented_on_master_lists_only_comments(kb: KB, run_cli) -> None:
    pid, cid = _proposal(kb)
    show(kb, pid)
    master = git(kb.root, "rev-parse", "HEAD").strip()
    forged = _comment_commit(
        kb.root,
        f"vouch: comment on {pid}\n\nlooks right\n\nVouch-Proposal: {pid}\nVouch-Commenter: Rita\n",
        master,
    )
    git(kb.root, "update-ref", f"refs/vouch/comments/{pid}", forged)
    read = run_cli("show", pid, "--json", cwd=kb.root).json()
    assert [c["comment"] for c in read["comments"]] == [forged]
    call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)
    before = _refs(kb.root)
    why = run_cli("why", cid, cwd=kb.root)
    assert why.code == 0, why.err
    assert "comment by ?" not in why.out and why.out.count("comment by ") == 1
    assert [
        c["comment"] for c in run_cli("why", cid, "--json", cwd=kb.root).json()["comments"]
    ] == [forged]
    assert _refs(kb.root) == before
