"""Hand edits of approved knowledge (issue 34, finding 10): refused by the installed
pre-commit hook, reported by lint and doctor against the blobs vouch's own writes
recorded (`vouch.gate.seals`), and judged by their net change in `lint --since`.

Everything here runs in real repositories with real commits: the hook is the one
`vouch hooks install` writes, run by a real `git commit`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import BOB, a_source, call, propose_claim, proposed, vouch_forked

from vouch.core import yamlio
from vouch.gate import seals
from vouch.kinds import claim as claim_kind
from vouch.store import audit
from vouch.store.kb import KB, decided_path


def approve(kb: KB, text: str) -> str:
    pid = propose_claim(kb, text)
    return str(call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)["object_id"])


def rel_of(kb: KB, cid: str) -> str:
    return kb.rel(claim_kind.path_for(cid))


def hand_promote(kb: KB, cid: str) -> Path:
    """The finding: status working -> stable and confidence 1.0, typed into the file."""
    path = kb.dir / claim_kind.path_for(cid)
    text = path.read_text(encoding="utf-8")
    assert "status: working" in text
    path.write_text(yamlio.edit_yaml(text, {"status": "stable", "confidence": 1.0}))
    return path


def state(root: Path) -> tuple[str, str, str]:
    """HEAD, the refs, and the index: what a refused commit must leave as it was."""
    return (
        git(root, "rev-parse", "HEAD"),
        git(root, "for-each-ref"),
        git(root, "ls-files", "-s"),
    )


def commit(
    root: Path, *args: str, message: str = "promote by hand"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "commit", *args, "-m", message], cwd=root, capture_output=True, text=True
    )


def lint(run_cli: Any, *args: str) -> tuple[int, dict[str, Any]]:
    res = run_cli("lint", "--json", "--stale-days", "0", *args)
    return res.code, json.loads(res.out)


def found(report: dict[str, Any], kind: str = "hand-edit") -> list[dict[str, Any]]:
    return [i for i in report["issues"] if i["kind"] == kind]


@pytest.fixture
def hooked(kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch) -> KB:
    """A knowledge base with one approved claim and vouch's own pre-commit hook."""
    monkeypatch.chdir(kb_with_sources.root)
    approve(kb_with_sources, "Deploys need a green CI run")
    assert run_cli("hooks", "install").code == 0
    return kb_with_sources


def the_claim(kb: KB) -> str:
    [cid] = [c["id"] for c in call(kb, "kb.list_claims")]
    return str(cid)


# -- the finding ------------------------------------------------------------------------------
def test_the_hook_refuses_a_hand_promotion_and_lint_and_doctor_report_it(
    hooked: KB, run_cli: Any
) -> None:
    root, cid = hooked.root, the_claim(hooked)
    path = hand_promote(hooked, cid)
    edited = path.read_bytes()
    git(root, "add", str(path))
    before = state(root)
    refused = commit(root)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "error[hand-edit]" in out and rel_of(hooked, cid) in out
    assert "lifecycle commands" in out and "git commit --no-verify" in out
    assert state(root) == before  # nothing committed, the staged edit still staged
    assert path.read_bytes() == edited  # and nothing of the user's lost

    # the person means it: the commit lands, and every check names it afterwards
    assert commit(root, "--no-verify").returncode == 0
    code, report = lint(run_cli)
    [issue] = found(report)
    assert code == 1 and issue["id"] == cid and issue["path"] == rel_of(hooked, cid)
    assert "decision record" in issue["message"] and "git cat-file blob" in issue["message"]
    assert "lifecycle commands" in issue["message"]
    doctor = run_cli("doctor", "--json")
    assert doctor.code == 1
    assert [i["id"] for i in json.loads(doctor.out)["issues"] if i["kind"] == "hand-edit"] == [cid]
    # the fix the message gives: restore what vouch wrote, commit it; all clean again
    blob = issue["message"].split("git cat-file blob ")[1].split()[0]
    path.write_bytes(
        subprocess.run(
            ["git", "cat-file", "blob", blob], cwd=root, capture_output=True, check=True
        ).stdout
    )
    git(root, "add", str(path))
    assert commit(root, message="restore").returncode == 0
    assert lint(run_cli)[0] == 0


def test_the_hook_refuses_a_hand_deletion(hooked: KB) -> None:
    root, cid = hooked.root, the_claim(hooked)
    git(root, "rm", "-q", rel_of(hooked, cid))
    before = state(root)
    refused = commit(root, message="drop a claim")
    assert refused.returncode != 0 and "deleted by hand" in refused.stdout + refused.stderr
    assert state(root) == before


def test_an_uncommitted_hand_edit_is_reported_by_lint(hooked: KB, run_cli: Any) -> None:
    cid = the_claim(hooked)
    hand_promote(hooked, cid)
    code, report = lint(run_cli)
    assert code == 1 and [i["id"] for i in found(report)] == [cid]
    git(hooked.root, "checkout", "--", rel_of(hooked, cid))
    code, report = lint(run_cli)
    assert code == 0 and found(report) == []


def test_a_typed_lifecycle_trailer_does_not_make_a_hand_edit_vouchs(
    hooked: KB, run_cli: Any
) -> None:
    """A hand commit dressed as vouch's promote: trailers anyone can type. No sealed
    audit event records its bytes, so lint and `lint --since` still name it."""
    root, cid = hooked.root, the_claim(hooked)
    base = git(root, "rev-parse", "HEAD").strip()
    git(root, "add", str(hand_promote(hooked, cid)))
    message = f"vouch: promote claim {cid}\n\nVouch-Event: claim.promote\nVouch-Actor: {BOB}"
    assert commit(root, "--no-verify", message=message).returncode == 0
    assert [i["id"] for i in found(lint(run_cli)[1])] == [cid]
    code, report = lint(run_cli, "--since", base)
    assert code == 1 and [i["id"] for i in found(report)] == [cid]


# -- vouch's own writes ---------------------------------------------------------------------
def test_vouchs_own_writes_pass_the_installed_hook_and_every_check(
    hooked: KB, run_cli: Any
) -> None:
    root, first = hooked.root, the_claim(hooked)
    base = git(root, "rev-parse", "HEAD").strip()
    second = approve(hooked, "Rollbacks take one command")
    third = approve(hooked, "Rollbacks take two commands")
    fourth = approve(hooked, "Deploys on Fridays are frozen")
    call(hooked, "kb.promote", {"id": first, "status": "stable"}, actor=BOB)
    call(hooked, "kb.confirm", {"id": first}, actor=BOB)
    call(hooked, "kb.contradict", {"a_id": second, "b_id": third}, actor=BOB)
    call(hooked, "kb.supersede", {"old_id": third, "new_id": second}, actor=BOB)
    call(hooked, "kb.cite", {"id": second, "evidence": f"{a_source(hooked)}:L1-L2"}, actor=BOB)
    call(hooked, "kb.archive", {"id": fourth}, actor=BOB)
    # a person's own commit beside them (code, not knowledge) passes the hook too
    (root / "notes.txt").write_text("code\n")
    git(root, "add", "notes.txt")
    assert commit(root, message="code").returncode == 0
    assert git(root, "status", "--porcelain") == ""
    code, report = lint(run_cli)
    assert code == 0, report["issues"]
    code, report = lint(run_cli, "--since", base)
    assert code == 0, report["issues"]
    assert run_cli("doctor", "--json").code == 0


def test_a_vouch_write_cut_short_then_committed_passes_the_installed_hook(
    hooked: KB, run_cli: Any
) -> None:
    """A promote killed after it staged its files: the user's `git commit` runs the hook,
    whose check sees the promote's own audit event beside the claim and lets it through."""
    root, cid = hooked.root, the_claim(hooked)
    killed = vouch_forked(root, "promote", cid, "--as", BOB, env={"VOUCH_FAULT": "staged"})
    assert isinstance(killed, subprocess.CompletedProcess) and killed.returncode == 86
    done = commit(root, message="commit what vouch left")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "status: actionable" in (hooked.dir / claim_kind.path_for(cid)).read_text()
    assert found(lint(run_cli)[1]) == []


# -- the records ------------------------------------------------------------------------------
def test_the_decision_record_and_lifecycle_events_name_the_blobs_they_landed(
    hooked: KB,
) -> None:
    root, cid = hooked.root, the_claim(hooked)
    rel = claim_kind.path_for(cid)
    [record_path] = (hooked.dir / "decided").rglob("*.yaml")
    record = yamlio.load_yaml(record_path.read_text())
    approved = git(root, "rev-parse", f"HEAD:{hooked.rel(rel)}").strip()
    assert record[seals.FIELD] == {rel: approved}
    assert decided_path(record["proposal_id"]) == str(record_path.relative_to(hooked.dir))
    call(hooked, "kb.promote", {"id": cid}, actor=BOB)
    promoted = git(root, "rev-parse", f"HEAD:{hooked.rel(rel)}").strip()
    last = audit.last_event(hooked.dir)
    assert last is not None and last["event"] == "claim.promote"
    assert last["data"][seals.FIELD] == {rel: [approved, promoted]}


# -- a range of history ---------------------------------------------------------------------
def test_since_passes_an_edit_followed_by_its_revert_and_fails_one_left_in_place(
    hooked: KB, run_cli: Any
) -> None:
    root, cid = hooked.root, the_claim(hooked)
    base = git(root, "rev-parse", "HEAD").strip()
    git(root, "add", str(hand_promote(hooked, cid)))
    assert commit(root, "--no-verify").returncode == 0
    code, report = lint(run_cli, "--since", base)
    assert code == 1
    assert {(i["kind"], i["id"]) for i in report["issues"]} >= {
        ("hand-edit", cid),
        ("outside-vouch", cid),
    }
    git(root, "revert", "--no-edit", "HEAD")
    code, report = lint(run_cli, "--since", base)
    assert code == 0, report["issues"]
    assert report["range"]["commits"] == 2
    # once more, left in place on top of the revert: the range fails again
    git(root, "add", str(hand_promote(hooked, cid)))
    assert commit(root, "--no-verify").returncode == 0
    assert lint(run_cli, "--since", base)[0] == 1


# -- objects approved before seals ------------------------------------------------------------
def _unseal(kb: KB) -> None:
    """Remove `blobs` from every decision record, as vouch wrote them before seals, in a
    commit made like vouch's decision commits (what an older vouch's approval left)."""
    for path in (kb.dir / "decided").rglob("*.yaml"):
        record = yamlio.load_yaml(path.read_text())
        record.pop(seals.FIELD, None)
        path.write_text(yamlio.dump_yaml(record))
    git(kb.root, "add", "-A", ".vouch")
    git(kb.root, "commit", "-q", "--no-verify", "-m", "older vouch\n\nVouch-Decision: approved")


def test_objects_approved_before_seals_are_judged_by_the_commit_that_last_wrote_them(
    hooked: KB, run_cli: Any
) -> None:
    root, cid = hooked.root, the_claim(hooked)
    other = approve(hooked, "Rollbacks take one command")
    _unseal(hooked)
    assert lint(run_cli)[0] == 0  # last written by vouch's approvals: fine
    call(hooked, "kb.promote", {"id": other}, actor=BOB)  # sealed from its old bytes on
    assert lint(run_cli)[0] == 0
    git(root, "add", str(hand_promote(hooked, cid)))
    assert commit(root, "--no-verify").returncode == 0
    code, report = lint(run_cli)
    [issue] = found(report)
    hand = git(root, "rev-parse", "--short=12", "HEAD").strip()
    assert code == 1 and issue["id"] == cid
    assert f"commit {hand}" in issue["message"] and f"git revert {hand}" in issue["message"]
    # a hand edit of the one promoted since: measured against the promote's seal
    path = hooked.dir / claim_kind.path_for(other)
    path.write_text(yamlio.edit_yaml(path.read_text(), {"confidence": 1.0}))
    assert {i["id"] for i in found(lint(run_cli)[1])} == {cid, other}


# -- bundles ----------------------------------------------------------------------------------
def test_an_imported_object_changed_by_lifecycle_writes_over_there_stays_sealed(
    hooked: KB, fresh: KB, tmp_path: Path, run_cli: Any
) -> None:
    """A bundle carries decision records (with their seals) but not the audit log: the
    import's own event links the approval's seal to the bytes it lands, so the object,
    confirmed in the exporting clone and promoted here afterwards, is still vouch's."""
    cid = the_claim(hooked)
    call(hooked, "kb.confirm", {"id": cid}, actor=BOB)  # over there, after approval
    bundle = tmp_path / "kb.tar.gz"
    assert run_cli("export", "--out", str(bundle), "--kb", str(hooked.dir)).code == 0
    assert run_cli("import-apply", str(bundle), "--kb", str(fresh.dir)).code == 0
    event = audit.last_event(fresh.dir)
    assert event is not None and event["event"] == "bundle.import"
    assert list(event["data"][seals.FIELD]) == [claim_kind.path_for(cid)]
    assert lint(run_cli, "--kb", str(fresh.dir))[0] == 0
    call(fresh, "kb.promote", {"id": cid}, actor=BOB)
    assert lint(run_cli, "--kb", str(fresh.dir))[0] == 0
    path = fresh.dir / claim_kind.path_for(cid)
    path.write_text(yamlio.edit_yaml(path.read_text(), {"confidence": 1.0}))
    code, report = lint(run_cli, "--kb", str(fresh.dir))
    assert code == 1 and [i["id"] for i in found(report)] == [cid]


def test_an_audit_line_that_is_not_an_event_seals_nothing(hooked: KB, run_cli: Any) -> None:
    """A seal counts only in an audit event that hashes to itself: a line typed beside a
    hand edit, claiming a promote wrote its bytes, is not one. (A forger who also
    computes the hash and chains it forges the audit log: `audit --verify` and doctor's
    audit check answer that, not this one.)"""
    root, cid = hooked.root, the_claim(hooked)
    rel = claim_kind.path_for(cid)
    before = git(root, "rev-parse", f"HEAD:{hooked.rel(rel)}").strip()
    path = hand_promote(hooked, cid)
    after = git(root, "hash-object", str(path)).strip()
    line = {
        "id": "20260101T000000Z-00000000",
        "event": "claim.promote",
        "actor": BOB,
        "created_at": "2026-01-01T00:00:00Z",
        "object_ids": [cid],
        "data": {seals.FIELD: {rel: [before, after]}},
        "prev_hash": "",
        "hash": "0" * 64,
    }
    with open(hooked.dir / audit.LOG_NAME, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
    code, report = lint(run_cli)
    assert code == 1 and [i["id"] for i in found(report)] == [cid]


def test_an_approval_recorded_after_a_plain_merge_seals_the_stamped_object(
    hooked: KB, run_cli: Any
) -> None:
    root = hooked.root
    pid = propose_claim(hooked, "Merged with plain git")
    git(root, "merge", "-q", "--no-edit", f"vouch/proposal/{pid}")
    res = run_cli("approve", pid, "--as", BOB, "--json")
    assert res.code == 0 and res.json()["recorded_after_merge"] is True
    cid = res.json()["object_id"]
    rel = claim_kind.path_for(cid)
    record = yamlio.load_yaml((hooked.dir / decided_path(pid)).read_text())
    assert record[seals.FIELD] == {rel: git(root, "rev-parse", f"HEAD:{hooked.rel(rel)}").strip()}
    assert found(lint(run_cli)[1]) == []


def test_a_hand_deletion_that_got_through_is_reported(hooked: KB, run_cli: Any) -> None:
    root, cid = hooked.root, the_claim(hooked)
    rel = claim_kind.path_for(cid)
    approved = git(root, "rev-parse", f"HEAD:{hooked.rel(rel)}").strip()
    git(root, "rm", "-q", hooked.rel(rel))
    assert commit(root, "--no-verify", message="drop a claim").returncode == 0
    code, report = lint(run_cli)
    [issue] = found(report)
    assert code == 1 and issue["id"] == cid and "deleted outside vouch" in issue["message"]
    assert f"git cat-file blob {approved}" in issue["message"]
    doctor = run_cli("doctor", "--json")
    assert doctor.code == 1 and cid in {i["id"] for i in doctor.json()["issues"]}


def test_a_page_edited_by_hand_is_refused_and_reported_like_a_claim(
    hooked: KB, run_cli: Any
) -> None:
    from vouch.kinds import page as page_kind

    cid = the_claim(hooked)
    pid = proposed(hooked, "kb.propose_page", {"title": "Deploys", "claims": [cid]})["proposal_id"]
    page_id = call(hooked, "kb.approve", {"proposal_id": pid}, actor=BOB)["object_id"]
    path = hooked.dir / page_kind.path_for(page_id)
    path.write_text(path.read_text() + "\nOne more line nobody reviewed.\n")
    git(hooked.root, "add", str(path))
    refused = commit(hooked.root, message="edit a page")
    assert refused.returncode != 0 and "error[hand-edit]" in refused.stdout + refused.stderr
    assert commit(hooked.root, "--no-verify", message="edit a page").returncode == 0
    code, report = lint(run_cli)
    assert code == 1 and [(i["id"], i["path"]) for i in found(report)] == [
        (page_id, hooked.rel(page_kind.path_for(page_id)))
    ]


def test_the_hook_refuses_deleting_a_decision_record(hooked: KB) -> None:
    """Left for doctor and lint --since before: the hook let it through."""
    root = hooked.root
    record = next(p for p in (hooked.dir / "decided").rglob("*.yaml"))
    git(root, "rm", "-q", str(record.relative_to(root)))
    before = state(root)
    refused = commit(root, message="tidy decided/")
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "decision-record-edited" in out, out
    assert state(root) == before


def test_the_hook_refuses_truncating_the_audit_log(hooked: KB) -> None:
    root = hooked.root
    log = hooked.dir / "audit.log.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]))
    git(root, "add", str(log.relative_to(root)))
    before = state(root)
    refused = commit(root, message="shorter log")
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "audit-shrunk" in out, out
    assert state(root) == before
