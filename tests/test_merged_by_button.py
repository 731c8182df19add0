"""A proposal merged with a host's merge button (a plain `git merge --no-ff` of its branch,
pushed): every hint on the way leads to a recorded decision about exactly the commit a
reviewer looked at (issue 36, the first hour: `audit --verify` → approve → show → approve
looped, since `vouch show` pinned nothing for a merged proposal)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import git
from gate_support import PERSON, a_source, propose_claim

from vouch.core import yamlio
from vouch.kinds import claim
from vouch.store.kb import KB, decided_path

TEXT = "Merged with the host's button"


def merged_by_button(kb: KB, tmp_path: Path, pid: str | None = None) -> tuple[str, str, Path]:
    """(proposal id, its commit, the reviewer's clone): a proposal (an agent's, unless
    `pid` is given) pushed to a bare host, merged there by git alone, and fetched into a
    reviewer's clone."""
    remote = tmp_path / "host.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(kb.root, "remote", "add", "origin", str(remote))
    git(kb.root, "push", "-q", "origin", "main")
    pid = pid or propose_claim(kb, TEXT, shown=False)
    git(kb.root, "push", "-q", "origin", f"vouch/proposal/{pid}")
    button = tmp_path / "button"  # what the host does: merge, push
    git(tmp_path, "clone", "-q", str(remote), str(button))
    git(
        button,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge pull request #1",
        f"origin/vouch/proposal/{pid}",
    )
    git(button, "push", "-q", "origin", "main")
    reviewer = tmp_path / "reviewer"
    git(tmp_path, "clone", "-q", str(remote), str(reviewer))
    commit = git(reviewer, "rev-parse", f"origin/vouch/proposal/{pid}").strip()
    return pid, commit, reviewer


def hinted(said: str) -> list[list[str]]:
    """The `vouch ...` commands a message names, in order (words after `vouch`)."""
    return [span.split()[1:] for span in re.findall(r"`(vouch [^`]+)`", said)]


def refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def test_the_hints_lead_to_a_recorded_approval(kb_with_sources: KB, run_cli, tmp_path) -> None:
    pid, commit, reviewer = merged_by_button(kb_with_sources, tmp_path)
    res = run_cli("audit", "--verify", "--json", cwd=reviewer)
    assert res.code == 1
    said = " ".join(i["detail"] for i in res.json()["issues"])
    steps = hinted(said)
    assert steps == [["show", pid], ["approve", pid]], said
    for step in steps:  # exactly as the hint says, nothing more
        done = run_cli(*step, cwd=reviewer)
        assert done.code == 0, done.out + done.err
    decided = yamlio.load_yaml((reviewer / ".vouch" / decided_path(pid)).read_text())
    assert decided["decision"] == "approved" and decided["decided_by"] == PERSON
    assert decided["proposal_commit"] == commit  # the commit `vouch show` displayed
    cid = claim.KIND.make_id({"text": TEXT})
    assert KB.open(reviewer).read(claim.KIND, cid)["approved_by"] == PERSON
    assert run_cli("audit", "--verify", "--json", cwd=reviewer).json()["ok"]
    assert git(reviewer, "status", "--porcelain") == ""


def test_the_screen_names_the_full_commit_to_record(kb_with_sources: KB, run_cli, tmp_path) -> None:
    pid, commit, reviewer = merged_by_button(kb_with_sources, tmp_path)
    screen = run_cli("show", pid, cwd=reviewer).out
    assert "merged-without-decision" in screen
    assert f"vouch approve {pid} --expect {commit}" in screen
    # reject's refusal names the same way forward
    res = run_cli("reject", pid, "--reason", "no", cwd=reviewer)
    assert res.code == 1 and f"`vouch show {pid}` then `vouch approve {pid}`" in res.err


def test_the_proposer_cannot_record_it_after_showing_it(
    kb_with_sources: KB, run_cli, tmp_path
) -> None:
    """A person's own proposal, merged by the button: showing it in another clone of
    theirs pins it, and approve still refuses them — nothing written."""
    kb = kb_with_sources
    source = a_source(kb)
    res = run_cli("propose-claim", "--text", TEXT, "--source", source, "--json", cwd=kb.root)
    pid, _, reviewer = merged_by_button(kb, tmp_path, res.json()["proposal_id"])
    assert run_cli("show", pid, cwd=reviewer).code == 0
    assert git(reviewer, "for-each-ref", f"refs/vouch/reviewed/{pid}")  # pinned
    before = refs(reviewer)
    res = run_cli("approve", pid, "--reason", "mine", cwd=reviewer)
    assert res.code == 1 and "E104" in res.err and "the same person" in res.err, res.err
    assert refs(reviewer) == before
    assert not (reviewer / ".vouch" / decided_path(pid)).exists()
    assert git(reviewer, "status", "--porcelain") == ""
    assert run_cli("audit", "--verify", "--json", cwd=reviewer).code == 1  # still undecided


def test_an_object_edited_after_the_merge_is_not_pinned(
    kb_with_sources: KB, run_cli, tmp_path
) -> None:
    """The screen shows the proposal's commit; what approve would stamp is HEAD's file.
    When the two differ, show pins nothing and says why: no decision about unseen text."""
    pid, commit, reviewer = merged_by_button(kb_with_sources, tmp_path)
    cid = claim.KIND.make_id({"text": TEXT})
    path = reviewer / ".vouch" / claim.KIND.path_for(cid)
    path.write_text(path.read_text().replace(TEXT, "Something nobody reviewed"))
    git(reviewer, "commit", "-qam", "edit after the merge", "--no-verify")
    data = run_cli("show", pid, "--json", cwd=reviewer).json()
    assert data["state"] == "merged-without-decision"
    assert any("not what proposal" in p for p in data["problems"]), data["problems"]
    assert git(reviewer, "for-each-ref", f"refs/vouch/reviewed/{pid}") == ""
    before = refs(reviewer)
    res = run_cli("approve", pid, cwd=reviewer)
    assert res.code == 1 and "nobody reviewed" in res.err
    assert refs(reviewer) == before
    assert f"--expect {commit}" not in run_cli("show", pid, cwd=reviewer).out


def test_a_merged_proposal_whose_branch_is_gone_is_recorded_too(
    kb_with_sources: KB, run_cli, tmp_path
) -> None:
    pid, commit, reviewer = merged_by_button(kb_with_sources, tmp_path)
    git(reviewer, "update-ref", "-d", f"refs/remotes/origin/vouch/proposal/{pid}")
    assert run_cli("show", pid, cwd=reviewer).code == 0
    assert git(reviewer, "rev-parse", f"refs/vouch/reviewed/{pid}").strip() == commit
    assert run_cli("approve", pid, "--reason", "seen", cwd=reviewer).code == 0
    assert run_cli("audit", "--verify", "--json", cwd=reviewer).json()["ok"]


def test_an_edit_after_the_review_is_not_recorded(kb_with_sources: KB, run_cli, tmp_path) -> None:
    """Shown (pinned) while the object was as proposed, edited on the branch before the
    approval: approve refuses — by the pin or by --expect — and writes nothing."""
    pid, commit, reviewer = merged_by_button(kb_with_sources, tmp_path)
    assert run_cli("show", pid, cwd=reviewer).code == 0
    cid = claim.KIND.make_id({"text": TEXT})
    path = reviewer / ".vouch" / claim.KIND.path_for(cid)
    path.write_text(path.read_text().replace(TEXT, "Something nobody reviewed"))
    git(reviewer, "commit", "-qam", "edit after the review", "--no-verify")
    before = refs(reviewer)
    for extra in ((), ("--expect", commit)):
        res = run_cli("approve", pid, *extra, cwd=reviewer)
        assert res.code == 1 and "E104" in res.err and "changed after the merge" in res.err
        assert refs(reviewer) == before
    assert not (reviewer / ".vouch" / decided_path(pid)).exists()
    assert git(reviewer, "status", "--porcelain") == ""
