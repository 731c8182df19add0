"""`vouch lint`: each rule triggered by a crafted repository, in the three scopes
(every file, the staged changes, a range of history)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import (
    ALICE,
    BOB,
    a_source,
    call,
    propose_claim,
    proposed,
    proposer_key,
    vouch_forked,
    vouch_proc,
)

from vouch.kinds import claim as claim_kind
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import page as page_kind
from vouch.kinds import relation as relation_kind
from vouch.kinds import source as source_kind
from vouch.store.kb import KB


# -- crafting ----------------------------------------------------------------------------------
def approve(kb: KB, text: str = "Deploys need a green CI run", **extra: Any) -> str:
    """A claim proposed by alice and approved by bob; its id."""
    pid = propose_claim(kb, text, **extra)
    return str(call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)["object_id"])


def write(kb: KB, rel: str, text: str) -> Path:
    path = kb.dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def hand_claim(kb: KB, text: str, **fields: Any) -> str:
    """A valid claim file written by hand (not proposed, not approved); its id."""
    obj = claim_kind.new(text=text, evidence=fields.pop("evidence", [a_source(kb)]), **fields)
    write(kb, claim_kind.path_for(obj["id"]), claim_kind.dump(obj))
    return str(obj["id"])


def edit(kb: KB, kind: Any, object_id: str, **changes: Any) -> None:
    """Change fields of an object file in place, keeping its id (no validation)."""
    path = kb.dir / kind.path_for(object_id)
    text = path.read_text(encoding="utf-8")
    from vouch.core import yamlio

    if kind.body_field is not None:
        path.write_text(yamlio.edit_markdown(text, changes), encoding="utf-8")
    else:
        path.write_text(yamlio.edit_yaml(text, changes), encoding="utf-8")


def commit(root: Path, message: str = "by hand") -> str:
    git(root, "add", "-A", ".vouch")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD").strip()


def lint(run_cli: Any, *args: str) -> tuple[int, dict[str, Any]]:
    res = run_cli("lint", "--json", "--stale-days", "0", *args)
    return res.code, json.loads(res.out)


def kinds(report: dict[str, Any], severity: str | None = None) -> set[str]:
    return {i["kind"] for i in report["issues"] if severity in (None, i["severity"])}


def issues_of(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [i for i in report["issues"] if i["kind"] == kind]


@pytest.fixture
def reviewed(kb_with_sources: KB, monkeypatch: pytest.MonkeyPatch) -> KB:
    """A knowledge base whose knowledge all went through the gate."""
    monkeypatch.chdir(kb_with_sources.root)
    approve(kb_with_sources)
    return kb_with_sources


# -- every file -----------------------------------------------------------------------------------
def test_a_reviewed_knowledge_base_is_clean(reviewed: KB, run_cli: Any) -> None:
    eid = call(
        reviewed, "kb.register_evidence", {"source_id": a_source(reviewed), "locator": "L1-L2"}
    )["id"]
    approve(reviewed, "Rollbacks take one command", evidence=[eid])
    code, report = lint(run_cli)
    assert code == 0, report["issues"]
    assert report["issues"] == [] and report["verdict"] == "ok"
    assert report["checked"]["objects"] >= 6
    human = run_cli("lint")
    assert human.code == 0 and "0 errors, 0 warnings — ok" in human.out


def test_an_unparseable_file_is_reported_and_other_commands_keep_working(
    reviewed: KB, run_cli: Any
) -> None:
    write(reviewed, "claims/00/broken-00000000.yaml", "id: [not closed\ntext: x\n")
    commit(reviewed.root)
    code, report = lint(run_cli)
    assert code == 1
    [found] = issues_of(report, "unparseable")
    assert found["path"] == ".vouch/claims/00/broken-00000000.yaml"
    assert found["severity"] == "error" and "cannot parse" in found["message"]
    assert "\n" not in found["message"]
    assert run_cli("status").code == 0
    assert run_cli("search", "green CI", "--json").code == 0
    doctor = run_cli("doctor", "--json")
    assert doctor.code == 1
    assert any(
        i["kind"] == "unparseable" and i["path"] == found["path"]
        for i in json.loads(doctor.out)["issues"]
    )


def test_list_claims_works_around_a_broken_file(
    reviewed: KB, run_cli: Any, caplog: pytest.LogCaptureFixture
) -> None:
    write(reviewed, "claims/00/broken-00000000.yaml", "id: [not closed\n")
    commit(reviewed.root)
    res = run_cli("list", "claims", "--json")
    assert res.code == 0, res.err
    assert "broken-00000000" not in res.out
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "broken-00000000" in warned and "vouch lint" in warned  # named, not hidden


def test_schema_violations_name_every_problem(reviewed: KB, run_cli: Any) -> None:
    cid = hand_claim(reviewed, "Confidence out of range")
    edit(reviewed, claim_kind.KIND, cid, confidence=7, colour="blue")
    write(reviewed, "decided/00/20260101-000000-00000000.yaml", "decision: maybe\n")
    code, report = lint(run_cli)
    assert code == 1
    by_id = {i["id"]: i for i in issues_of(report, "schema")}
    assert "out of range" in by_id[cid]["message"] and "colour" in by_id[cid]["message"]
    assert "proposal_id is missing" in by_id["20260101-000000-00000000"]["message"]


def test_an_uncited_claim_is_an_error(reviewed: KB, run_cli: Any) -> None:
    cid = hand_claim(reviewed, "Nobody says so")
    edit(reviewed, claim_kind.KIND, cid, evidence=[])
    code, report = lint(run_cli)
    assert code == 1
    [found] = issues_of(report, "uncited")
    assert found["id"] == cid and found["path"] == f".vouch/{claim_kind.path_for(cid)}"


def test_dangling_references_of_every_kind(reviewed: KB, run_cli: Any) -> None:
    ghost_claim, ghost_entity = "ghost-claim-12345678", "ghost-entity-12345678"
    ghost_source = "0" * 64
    cid = hand_claim(reviewed, "Cites what is not there")
    edit(
        reviewed,
        claim_kind.KIND,
        cid,
        evidence=["ghost-evidence-12345678"],
        entities=[ghost_entity],
    )
    rel = relation_kind.new(source=cid, relation="depends_on", target=ghost_claim)
    write(reviewed, relation_kind.path_for(rel["id"]), relation_kind.dump(rel))
    page = page_kind.new(title="A page", claims=[ghost_claim], sources=[ghost_source])
    write(reviewed, page_kind.path_for(page["id"]), page_kind.dump(page))
    ev = evidence_kind.new(source_id=ghost_source, locator="L1")
    write(reviewed, evidence_kind.path_for(ev["id"]), evidence_kind.dump(ev))
    code, report = lint(run_cli)
    assert code == 1
    dangling = {(i["id"], i["message"].split(" names ")[0]) for i in issues_of(report, "dangling")}
    assert dangling == {
        (cid, "evidence"),
        (cid, "entities"),
        (rel["id"], "target"),
        (page["id"], "claims"),
        (page["id"], "sources"),
        (ev["id"], "source_id"),
    }


def test_a_supersede_cycle_and_one_sided_links(reviewed: KB, run_cli: Any) -> None:
    a = hand_claim(reviewed, "Claim A")
    b = hand_claim(reviewed, "Claim B")
    c = hand_claim(reviewed, "Claim C")
    edit(reviewed, claim_kind.KIND, a, status="superseded", superseded_by=b, supersedes=[b])
    edit(reviewed, claim_kind.KIND, b, status="superseded", superseded_by=a, supersedes=[a])
    edit(reviewed, claim_kind.KIND, c, contradicts=[a])
    code, report = lint(run_cli)
    assert code == 1
    [cycle] = issues_of(report, "supersede-cycle")
    assert cycle["id"] == min(a, b) and a in cycle["message"] and b in cycle["message"]
    [contra] = issues_of(report, "asymmetric-contradiction")
    assert contra["id"] == c and a in contra["message"]


def test_ids_that_are_not_their_content_address(reviewed: KB, run_cli: Any) -> None:
    cid = hand_claim(reviewed, "Original text")
    edit(reviewed, claim_kind.KIND, cid, text="Text changed by hand")
    other = hand_claim(reviewed, "Another claim")
    edit(reviewed, claim_kind.KIND, other, id="someone-else-12345678")
    code, report = lint(run_cli)
    assert code == 1
    [moved] = issues_of(report, "content-address")
    assert moved["id"] == cid and "edited by hand" in moved["message"]
    [renamed] = issues_of(report, "id-mismatch")
    assert renamed["id"] == other and "someone-else-12345678" in renamed["message"]


def test_a_misplaced_file_is_an_error(reviewed: KB, run_cli: Any) -> None:
    obj = claim_kind.new(text="In the wrong shard", evidence=[a_source(reviewed)])
    write(reviewed, f"claims/zz/{obj['id']}.yaml", claim_kind.dump(obj))
    write(reviewed, "claims/ab/notes.txt", "scratch\n")
    code, report = lint(run_cli)
    assert code == 1
    assert issues_of(report, "misplaced")[0]["id"] == obj["id"]
    assert issues_of(report, "stray")[0]["severity"] == "warn"


def test_knowledge_that_skipped_the_gate_has_no_decision(reviewed: KB, run_cli: Any) -> None:
    by_hand = hand_claim(reviewed, "Written by hand")
    commit(reviewed.root)
    pid = propose_claim(reviewed, "Merged with plain git")
    git(reviewed.root, "merge", "-q", "--no-edit", f"vouch/proposal/{pid}")
    merged = call(reviewed, "kb.list_claims", {"filter": {"text": "Merged with plain git"}})
    code, report = lint(run_cli)
    assert code == 1
    assert {i["id"] for i in issues_of(report, "no-decision")} == {by_hand, merged[0]["id"]}


def test_sources_and_evidence_registered_by_hand(reviewed: KB, run_cli: Any) -> None:
    content = b"written without vouch\n"
    meta = source_kind.new(content, locator="by-hand.txt")
    write(reviewed, source_kind.path_for(meta["id"]), source_kind.dump(meta))
    (reviewed.dir / source_kind.content_path_for(meta["id"])).write_bytes(content)
    ev = evidence_kind.new(source_id=meta["id"], locator="L1")
    write(reviewed, evidence_kind.path_for(ev["id"]), evidence_kind.dump(ev))
    commit(reviewed.root)
    code, report = lint(run_cli)
    assert code == 1
    found = {i["id"]: i["message"] for i in issues_of(report, "not-registered")}
    assert set(found) == {meta["id"], ev["id"]}
    assert "vouch did not make" in found[meta["id"]]


def test_an_approver_who_is_the_proposer(reviewed: KB, run_cli: Any) -> None:
    [record] = list((reviewed.dir / "decided").rglob("*.yaml"))
    record.write_text(record.read_text().replace(f"decided_by: {BOB}", f"decided_by: {ALICE}"))
    code, report = lint(run_cli)
    assert code == 1
    [found] = issues_of(report, "self-approved")
    assert found["id"] == record.stem and ALICE in found["message"]


def test_stale_claims_are_warnings(
    reviewed: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # approved in 2020 (the clock set back while vouch writes it): an old claim that
    # went through the gate, not a hand edit of its dates (lint reports those)
    from vouch.core import ids

    with monkeypatch.context() as clock:
        clock.setattr(ids, "now_iso", lambda: "2020-01-01T00:00:00Z")
        cid = approve(reviewed, "Backups are restored monthly")
    res = run_cli("lint", "--json", "--stale-days", "30")
    report = json.loads(res.out)
    assert res.code == 0 and report["verdict"] == "warnings", report["issues"]
    [found] = issues_of(report, "stale")
    assert found["id"] == cid and found["severity"] == "warn"
    call(reviewed, "kb.confirm", {"id": cid}, actor=BOB)
    assert lint(run_cli, "--stale-days", "30")[1]["issues"] == []
    assert lint(run_cli)[1]["issues"] == []  # --stale-days 0: off


def test_lint_is_a_method_on_every_transport(reviewed: KB) -> None:
    report = call(reviewed, "kb.lint", {"stale_days": 0})
    assert report["ok"] and set(report) >= {"issues", "ok", "verdict", "errors", "warnings"}


# -- the staged changes (the pre-commit hook) -----------------------------------------------------
def test_staged_checks_what_a_commit_adds(reviewed: KB, run_cli: Any) -> None:
    (reviewed.root / "notes.txt").write_text("unrelated\n")
    git(reviewed.root, "add", "notes.txt")
    code, report = lint(run_cli, "--staged")
    assert code == 0 and report["issues"] == [] and report["checked"]["objects"] == 0
    assert report["changed"] == 0 and report["verdict"] == "ok"
    cid = hand_claim(reviewed, "Nobody says so")
    edit(reviewed, claim_kind.KIND, cid, evidence=[])
    hand_claim(reviewed, "Not staged, not checked")
    git(reviewed.root, "add", str(reviewed.dir / claim_kind.path_for(cid)))
    code, report = lint(run_cli, "--staged")
    assert code == 1 and report["mode"] == "staged"
    assert {(i["kind"], i["id"]) for i in report["issues"]} == {
        ("uncited", cid),
        ("no-decision", cid),
    }


def test_staged_deletion_checks_what_referred_to_it(reviewed: KB, run_cli: Any) -> None:
    [cid] = [c["id"] for c in call(reviewed, "kb.list_claims")]
    pid = proposed(reviewed, "kb.propose_page", {"title": "Deploys", "claims": [cid]})[
        "proposal_id"
    ]
    page_id = call(reviewed, "kb.approve", {"proposal_id": pid}, actor=BOB)["object_id"]
    git(reviewed.root, "rm", "-q", str(reviewed.dir / claim_kind.path_for(cid)))
    code, report = lint(run_cli, "--staged")
    assert code == 1
    assert ("dangling", page_id) in {(i["kind"], i["id"]) for i in report["issues"]}
    assert ("hand-edit", cid) in {(i["kind"], i["id"]) for i in report["issues"]}


def test_staged_edit_that_breaks_a_contradiction_checks_the_other_side(
    reviewed: KB, run_cli: Any
) -> None:
    a = hand_claim(reviewed, "Claim A")
    b = hand_claim(reviewed, "Claim B")
    edit(reviewed, claim_kind.KIND, a, contradicts=[b])
    edit(reviewed, claim_kind.KIND, b, contradicts=[a])
    commit(reviewed.root)
    edit(reviewed, claim_kind.KIND, a, contradicts=[])
    git(reviewed.root, "add", "-A", ".vouch")
    code, report = lint(run_cli, "--staged")
    assert code == 1
    assert ("asymmetric-contradiction", b) in {(i["kind"], i["id"]) for i in report["issues"]}


def test_a_vouch_write_cut_short_then_committed_passes_the_hook(reviewed: KB) -> None:
    pid = propose_claim(reviewed, "Committed by the user after a crash")
    killed = vouch_forked(reviewed.root, "approve", pid, "--as", BOB, env={"VOUCH_FAULT": "staged"})
    assert isinstance(killed, subprocess.CompletedProcess) and killed.returncode == 86
    checked = vouch_proc(reviewed.root, "lint", "--staged", "--json", "--stale-days", "0")
    assert isinstance(checked, subprocess.CompletedProcess)
    report = json.loads(checked.stdout)
    assert checked.returncode == 0, report["issues"]
    assert report["checked"]["objects"] >= 1


def test_staged_and_since_exclude_each_other(reviewed: KB, run_cli: Any) -> None:
    res = run_cli("lint", "--staged", "--since", "HEAD")
    assert res.code == 1 and "exclude each other" in res.err


# -- a range of history (CI) ---------------------------------------------------------------------
def test_since_accepts_decisions_and_registrations(reviewed: KB, run_cli: Any) -> None:
    base = git(reviewed.root, "rev-parse", "HEAD").strip()
    eid = call(
        reviewed, "kb.register_evidence", {"source_id": a_source(reviewed), "locator": "L1-L2"}
    )["id"]
    approve(reviewed, "Rollbacks take one command", evidence=[eid])
    pid = propose_claim(reviewed, "Rejected one")
    call(reviewed, "kb.reject", {"proposal_id": pid, "reason": "no"}, actor=BOB)
    code, report = lint(run_cli, "--since", base)
    assert code == 0, report["issues"]
    assert report["range"]["decisions"] == 2 and report["range"]["commits"] >= 4


def test_since_catches_knowledge_that_skipped_the_gate(reviewed: KB, run_cli: Any) -> None:
    base = git(reviewed.root, "rev-parse", "HEAD").strip()
    cid = hand_claim(reviewed, "Committed by hand")
    commit(reviewed.root, "add a claim")
    pid = propose_claim(reviewed, "Merged with git")
    git(reviewed.root, "merge", "-q", "--no-ff", "--no-edit", f"vouch/proposal/{pid}")
    code, report = lint(run_cli, "--since", base)
    assert code == 1
    found = {(i["kind"], i["id"]) for i in report["issues"]}
    assert ("outside-vouch", cid) in found
    assert ("merged-without-decision", pid) in found


def test_since_checks_approvers_from_the_base_configuration(reviewed: KB, run_cli: Any) -> None:
    config = reviewed.dir / "config.yaml"
    config.write_text(config.read_text().replace("approvers: []", "approvers: [carol]"))
    base = commit(reviewed.root, "only carol approves")
    approve(reviewed, "Approved by bob")
    code, report = lint(run_cli, "--since", base)
    assert code == 1
    [found] = issues_of(report, "approver-not-allowed")
    assert BOB in found["message"]
    # a pull request cannot relax the list it is checked against
    config.write_text(config.read_text().replace("approvers: [carol]", "approvers: [bob]"))
    commit(reviewed.root, "let bob approve")
    code, report = lint(run_cli, "--since", base)
    assert code == 1 and issues_of(report, "approver-not-allowed")
    assert issues_of(report, "review-settings")[0]["severity"] == "warn"


def test_since_a_pending_proposal_at_head_is_checked_not_failed(reviewed: KB, run_cli: Any) -> None:
    base = git(reviewed.root, "rev-parse", "HEAD").strip()
    pid = propose_claim(reviewed, "Awaiting review")
    git(reviewed.root, "checkout", "-q", f"vouch/proposal/{pid}")
    code, report = lint(run_cli, "--since", base)
    assert code == 0, report["issues"]
    [pending] = issues_of(report, "pending")
    assert pending["id"] == pid and pending["severity"] == "warn"
    full = json.loads(run_cli("lint", "--json", "--stale-days", "0").out)
    assert full["ok"] and issues_of(full, "pending")
    doctor = run_cli("doctor", "--json")  # CI runs doctor on the pull request too
    assert doctor.code == 0, doctor.out
    # the same commit fast-forwarded onto main was merged without a decision
    git(reviewed.root, "checkout", "-q", "main")
    git(reviewed.root, "merge", "-q", "--ff-only", f"vouch/proposal/{pid}")
    assert lint(run_cli, "--since", base)[0] == 1
    assert issues_of(lint(run_cli)[1], "no-decision")
    git(reviewed.root, "reset", "-q", "--hard", base)
    git(reviewed.root, "checkout", "-q", f"vouch/proposal/{pid}")
    # the same branch rewritten by hand is refused as approve would refuse it
    obj_path = next((reviewed.dir / "claims").rglob("awaiting-review-*.yaml"))
    obj_path.write_text(obj_path.read_text().replace("confidence: 0.7", "confidence: 0.9"))
    git(reviewed.root, "commit", "-qam", "tweak", "--amend", "--no-edit")
    code, report = lint(run_cli, "--since", base)
    assert code == 1
    assert issues_of(report, "malformed-proposal") or issues_of(report, "outside-vouch")


def _ssh_signing(root: Path, tmp: Path, principal: str, trusted: bool = True) -> None:
    """Sign this repository's commits with a fresh SSH key; trust it (or not)."""
    key = tmp / f"key-{principal}"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", str(key)],
        check=True,
        capture_output=True,
    )
    allowed = tmp / "allowed_signers"
    if trusted:
        with allowed.open("a") as fh:
            fh.write(f"{principal} {(tmp / f'key-{principal}.pub').read_text()}")
    else:
        allowed.touch()
    git(root, "config", "gpg.format", "ssh")
    git(root, "config", "user.signingkey", str(key))
    git(root, "config", "gpg.ssh.allowedSignersFile", str(allowed))


@pytest.mark.skipif(
    subprocess.run(["which", "ssh-keygen"], capture_output=True).returncode,
    reason="ssh-keygen is not installed",
)
def test_since_requires_signed_decisions_when_configured(
    reviewed: KB, run_cli: Any, tmp_path: Path
) -> None:
    config = reviewed.dir / "config.yaml"
    config.write_text(
        config.read_text()
        .replace("require_signed_decisions: false", "require_signed_decisions: true")
        .replace("approvers: []", "approvers: [bob@example.invalid]")
    )
    base = commit(reviewed.root, "decisions must be signed")
    approve(reviewed, "Approved without a signature")
    code, report = lint(run_cli, "--since", base)
    assert code == 1
    assert "no signature" in issues_of(report, "unsigned-decision")[0]["message"]

    # a decision signed by bob's key, which CI trusts: with commit.gpgSign set, vouch's
    # own decision commits are signed, as `git commit` would sign them
    base = git(reviewed.root, "rev-parse", "HEAD").strip()  # the unsigned one stays before
    _ssh_signing(reviewed.root, tmp_path, "bob@example.invalid")
    git(reviewed.root, "config", "commit.gpgsign", "true")
    # signed by its proposer's own key: a proposal signed with bob's key would make his
    # approval a self-approval, an unsigned one is refused (tests/test_gate_identity.py)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in proposer_key(reviewed.root).items():
            mp.setenv(key, value)
        pid = propose_claim(reviewed, "Approved and signed by vouch")
    # the signer is who acted: the decision names the identity that signed it
    call(reviewed, "kb.approve", {"proposal_id": pid}, actor="bob@example.invalid")
    assert (
        "Good"
        in subprocess.run(
            ["git", "verify-commit", "HEAD"], cwd=reviewed.root, capture_output=True, text=True
        ).stderr
    )
    code, report = lint(run_cli, "--since", base)
    assert code == 0, report["issues"]

    # signed by a key nobody listed in the allowed signers file
    with pytest.MonkeyPatch.context() as mp:  # proposed with the proposer's own key
        for key, value in proposer_key(reviewed.root).items():
            mp.setenv(key, value)
        pid = propose_claim(reviewed, "Signed by a stranger")
    _ssh_signing(reviewed.root, tmp_path / "..", "mallory@example.invalid", trusted=False)
    git(reviewed.root, "config", "gpg.ssh.allowedSignersFile", str(tmp_path / "allowed_signers"))
    call(reviewed, "kb.approve", {"proposal_id": pid}, actor=BOB)
    code, report = lint(run_cli, "--since", base)
    assert code == 1 and issues_of(report, "unsigned-decision")


@pytest.mark.skipif(
    subprocess.run(["which", "ssh-keygen"], capture_output=True).returncode,
    reason="ssh-keygen is not installed",
)
def test_since_fails_a_plain_commit_that_weakens_signed_settings(
    reviewed: KB, run_cli: Any, tmp_path: Path
) -> None:
    """The outsider's attack: with signed decisions required on the base, a plain
    unsigned commit turns them off (or allows self-approval); the next range would be
    judged by the weakened settings. Such a change must be signed by an allowed approver."""
    config = reviewed.dir / "config.yaml"
    strict = (
        config.read_text()
        .replace("require_signed_decisions: false", "require_signed_decisions: true")
        .replace("approvers: []", "approvers: [bob@example.invalid]")
    )
    config.write_text(strict)
    base = commit(reviewed.root, "decisions must be signed")
    config.write_text(
        strict.replace("require_signed_decisions: true", "require_signed_decisions: false")
    )
    weakened = commit(reviewed.root, "relax the gate")
    code, report = lint(run_cli, "--since", base)
    [issue] = issues_of(report, "review-settings")
    assert code == 1 and issue["severity"] == "error" and weakened[:12] in issue["message"]
    # the same change signed by bob, whom the base lists: a warning, as without signing
    git(reviewed.root, "reset", "-q", "--hard", base)
    _ssh_signing(reviewed.root, tmp_path, "bob@example.invalid")
    git(reviewed.root, "config", "commit.gpgsign", "true")
    config.write_text(
        strict.replace("require_signed_decisions: true", "require_signed_decisions: false")
    )
    commit(reviewed.root, "relax the gate, signed by bob")
    code, report = lint(run_cli, "--since", base)
    [issue] = issues_of(report, "review-settings")
    assert code == 0 and issue["severity"] == "warn", report["issues"]


def test_since_needs_a_commit(reviewed: KB, run_cli: Any) -> None:
    res = run_cli("lint", "--since", "no-such-branch")
    assert res.code == 1 and "fetch-depth" in res.err
