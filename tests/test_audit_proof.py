"""The audit log checked against what made it (issue 34, finding 6).

Each attack is built in a real repository with plain git (commit, --amend,
filter-branch) and real SSH signatures from a throwaway key, then shown detected by
`vouch audit --verify`, `vouch doctor` and `vouch lint --since` — the checks write
nothing. Legitimate histories (approve, reject, linked approvals, lifecycle edits, two
branches merged with git's union driver, an unrelated `git revert`) still pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import BOB, a_source, call, keypair, propose_claim, proposed, proposer_key

from vouch.core import yamlio
from vouch.kinds import claim
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store import audit
from vouch.store.kb import KB, decided_path

CAROL = "carol"
LOG = ".vouch/audit.log.jsonl"
needs_ssh = pytest.mark.skipif(
    subprocess.run(["which", "ssh-keygen"], capture_output=True).returncode != 0,
    reason="ssh-keygen is not installed",
)


# -- helpers -------------------------------------------------------------------------------------
def propose(kb: KB, text: str) -> str:
    """The agent's proposal, signed (where the clone signs) with its operator's own key:
    a proposal signed with the key that then signs the decision is a self-approval
    (tests/test_gate_identity.py), and the proposer is not the reviewer whose key this
    clone holds."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in proposer_key(kb.root).items():
            mp.setenv(key, value)
        return propose_claim(kb, text)


def approve(kb: KB, text: str, actor: str = BOB) -> dict[str, Any]:
    return call(kb, "kb.approve", {"proposal_id": propose(kb, text)}, actor=actor)


def state(root: Path) -> tuple[str, str, str]:
    """Every ref, the work tree's status and the log's bytes: what a check must not change."""
    return (
        git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
        git(root, "status", "--porcelain", "--untracked-files=all"),
        (root / LOG).read_text(),
    )


def checks(kb: KB, run_cli: Any, base: str) -> dict[str, tuple[int, str]]:
    """audit --verify, doctor and lint --since BASE: (exit status, report text) each;
    none of them changes anything."""
    before = state(kb.root)
    out = {}
    for name, args in (
        ("verify", ("audit", "--verify", "--json")),
        ("doctor", ("doctor", "--json")),
        ("lint", ("lint", "--since", base, "--json", "--stale-days", "0")),
    ):
        res = run_cli(*args, cwd=kb.root)
        assert "Traceback" not in res.err and "E200" not in res.err, res.err
        out[name] = (res.code, res.out + res.err)
    assert state(kb.root) == before
    return out


def all_pass(kb: KB, run_cli: Any, base: str) -> None:
    for name, (code, text) in checks(kb, run_cli, base).items():
        assert code == 0, (name, text)


def all_fail(kb: KB, run_cli: Any, base: str, *needles: str) -> None:
    for name, (code, text) in checks(kb, run_cli, base).items():
        assert code == 1, (name, text)
        for needle in needles:
            assert needle in text, (name, needle, text)


def last_event(root: Path) -> dict[str, Any]:
    return json.loads((root / LOG).read_text().splitlines()[-1])


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def ssh_signing(root: Path, tmp: Path, principal: str, trusted: bool = True) -> None:
    """Sign this repository's commits and tags with a fresh SSH key; trust it (or not)."""
    key = keypair(tmp, principal)
    allowed = tmp / "allowed_signers"
    allowed.touch()
    if trusted:
        with allowed.open("a") as fh:
            fh.write(f"{principal} {(tmp / f'key-{principal}.pub').read_text()}")
    git(root, "config", "gpg.format", "ssh")
    git(root, "config", "user.signingkey", str(key))
    git(root, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    git(root, "config", "commit.gpgsign", "true")


def require_signatures(kb: KB, approvers: list[str]) -> str:
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text()
        .replace("require_signed_decisions: false", "require_signed_decisions: true")
        .replace("approvers: []", f"approvers: [{', '.join(approvers)}]")
    )
    git(kb.root, "add", ".vouch/config.yaml")
    git(kb.root, "commit", "-qm", "decisions must be signed")
    return head(kb.root)


def signed_by_bob(kb: KB, tmp: Path, also: list[str] | None = None) -> str:
    """Signed decisions required (bob an approver, `also` the others), this clone signing
    as bob, and one claim approved and signed by him; the commit before that approval."""
    require_signatures(kb, ["bob@example.invalid", *(also or [])])
    ssh_signing(kb.root, tmp, "bob@example.invalid")
    base = head(kb.root)
    approve(kb, "Signed by bob", actor="bob@example.invalid")
    return base


def forge_append(root: Path, event: str, actor: str, object_ids: list[str]) -> str:
    """Append one correctly chained event to the log; its hash."""
    record = audit.make_event(event, actor, object_ids, {}, str(last_event(root)["hash"]))
    with (root / LOG).open("a") as fh:
        fh.write(audit.to_line(record))
    return str(record["hash"])


@pytest.fixture
def reviewed(kb_with_sources: KB, monkeypatch: pytest.MonkeyPatch) -> KB:
    monkeypatch.chdir(kb_with_sources.root)
    approve(kb_with_sources, "Deploys need a green CI run")
    return kb_with_sources


# -- legitimate histories ------------------------------------------------------------------------
def test_legitimate_histories_pass(reviewed: KB, run_cli: Any) -> None:
    kb = reviewed
    base = head(kb.root)
    approved = approve(kb, "Rollbacks take one command")
    rejected = propose(kb, "Rejected one")
    call(kb, "kb.reject", {"proposal_id": rejected, "reason": "no"}, actor=BOB)
    a = proposed(kb, "kb.propose_entity", {"name": "requests", "type": "project"})
    b = proposed(kb, "kb.propose_entity", {"name": "urllib3", "type": "project"})
    rel = proposed(
        kb,
        "kb.propose_relation",
        {"source": a["entity_id"], "relation": "depends_on", "target": b["entity_id"],
         "evidence": [a_source(kb)]},
    )  # fmt: skip
    call(
        kb,
        "kb.approve",
        {"proposal_id": rel["proposal_id"], "together": [a["proposal_id"], b["proposal_id"]]},
        actor=BOB,
    )
    call(kb, "kb.confirm", {"id": approved["object_id"]}, actor=BOB)
    call(kb, "kb.archive", {"id": approved["object_id"], "reason": "obsolete"}, actor=BOB)
    # two branches each approving, merged with git (the union merge of the log)
    git(kb.root, "checkout", "-qb", "side")
    approve(kb, "Side branch claim")
    git(kb.root, "checkout", "-q", "main")
    approve(kb, "Main branch claim")
    git(kb.root, "merge", "-q", "--no-edit", "side")
    # a revert of something that is not the audit log
    (kb.root / "notes.txt").write_text("notes\n")
    git(kb.root, "add", "notes.txt")
    git(kb.root, "commit", "-qm", "notes")
    git(kb.root, "revert", "--no-edit", "HEAD")
    all_pass(kb, run_cli, base)
    approve(kb, "After the merge")
    all_pass(kb, run_cli, base)
    res = run_cli("audit", "anchor", "--json", cwd=kb.root)
    assert res.code == 0, res.err
    all_pass(kb, run_cli, base)


# -- finding 1: a plain commit appends a chained event and types its own trailer -----------------
def _forged_plain_commit(kb: KB) -> str:
    pid = propose(kb, "Never reviewed")
    forged = forge_append(kb.root, "proposal.approve", BOB, [pid])
    git(kb.root, "add", LOG)
    git(kb.root, "commit", "-qm", f"tidy the log\n\nVouch-Audit-Head: {forged}")
    return head(kb.root)


def test_a_plain_commit_appending_an_event_is_caught(reviewed: KB, run_cli: Any) -> None:
    base = head(reviewed.root)
    all_pass(reviewed, run_cli, base)
    commit = _forged_plain_commit(reviewed)
    all_fail(reviewed, run_cli, base, commit[:12], "not a vouch commit", "Vouch-Audit-Head")


def test_a_plain_merge_that_adds_an_event_is_caught(reviewed: KB, run_cli: Any) -> None:
    base = head(reviewed.root)
    git(reviewed.root, "checkout", "-qb", "side")
    approve(reviewed, "Side claim")
    git(reviewed.root, "checkout", "-q", "main")
    git(reviewed.root, "merge", "-q", "--no-ff", "--no-commit", "side")
    forge_append(reviewed.root, "claim.confirm", BOB, [])
    git(reviewed.root, "add", LOG)
    git(reviewed.root, "commit", "-qm", "merge side")
    assert len(git(reviewed.root, "rev-list", "--parents", "-n1", "HEAD").split()) == 3
    merge = head(reviewed.root)
    all_fail(
        reviewed, run_cli, base, "made by no vouch commit", "claim.confirm", f"commit {merge[:12]}"
    )


@needs_ssh
def test_a_plain_commit_is_caught_with_signed_decisions_required(
    reviewed: KB, run_cli: Any, tmp_path: Path
) -> None:
    kb = reviewed
    base = signed_by_bob(kb, tmp_path, also=["carol@example.invalid"])
    all_pass(kb, run_cli, base)
    git(kb.root, "config", "commit.gpgsign", "false")
    commit = _forged_plain_commit(kb)
    all_fail(kb, run_cli, base, commit[:12], "not a vouch commit")
    # the full shape of a decision typed by hand, unsigned: the signature is missing
    git(kb.root, "reset", "-q", "--hard", "HEAD~1")
    pid = propose(kb, "Approved by hand")
    call(kb, "kb.approve", {"proposal_id": pid}, actor="carol@example.invalid")
    assert (
        "Good"
        not in subprocess.run(
            ["git", "verify-commit", "HEAD"], cwd=kb.root, capture_output=True, text=True
        ).stderr
    )
    verdicts = checks(kb, run_cli, base)
    assert verdicts["verify"][0] == 1 and "without a good signature" in verdicts["verify"][1]
    assert verdicts["doctor"][0] == 1 and "without a good signature" in verdicts["doctor"][1]
    assert verdicts["lint"][0] == 1 and "unsigned-decision" in verdicts["lint"][1]


# -- finding 2: the last decision amended to another approver ------------------------------------
def _amend_approver(kb: KB, new: str, *, stamp: bool, sign: bool = False) -> None:
    """Rewrite the last decision so that `new` approved it: record, trailer, audit line
    (re-hashed) and head trailer — and, with `stamp`, the object's approved_by."""
    root = kb.root
    old = last_event(root)
    lines = (root / LOG).read_text().splitlines()
    changed = {**old, "actor": new}
    changed["hash"] = audit.event_hash(changed)
    (root / LOG).write_text("\n".join([*lines[:-1], json.dumps(changed)]) + "\n")
    record = next(p for p in (kb.dir / "decided").rglob("*.yaml") if old["object_ids"][0] in p.name)
    who = old["actor"]
    record.write_text(record.read_text().replace(f"decided_by: {who}", f"decided_by: {new}"))
    if stamp:
        obj = next((kb.dir / "claims").rglob(f"{old['object_ids'][1]}.yaml"))
        obj.write_text(obj.read_text().replace(f"approved_by: {who}", f"approved_by: {new}"))
    message = git(root, "log", "-1", "--format=%B")
    message = message.replace(f"Vouch-Approver: {old['actor']}", f"Vouch-Approver: {new}")
    message = message.replace(str(old["hash"]), str(changed["hash"]))
    git(root, "add", "-A", ".vouch")
    git(root, "commit", "-q", "--amend", "-m", message, *(["-S"] if sign else ["--no-gpg-sign"]))


def test_an_amended_approver_is_caught(reviewed: KB, run_cli: Any) -> None:
    base = head(reviewed.root)
    approve(reviewed, "Approved by bob, then claimed by carol")
    _amend_approver(reviewed, CAROL, stamp=False)
    all_fail(reviewed, run_cli, base, "approved_by 'bob'", "decided_by 'carol'")


def test_a_complete_amend_is_caught_by_the_anchor(reviewed: KB, run_cli: Any) -> None:
    base = head(reviewed.root)
    approve(reviewed, "Approved by bob, anchored")
    assert run_cli("audit", "anchor", cwd=reviewed.root).code == 0
    _amend_approver(reviewed, CAROL, stamp=True)
    all_fail(reviewed, run_cli, base, "rewritten")


@needs_ssh
def test_an_amended_signed_decision_is_caught(reviewed: KB, run_cli: Any, tmp_path: Path) -> None:
    kb = reviewed
    base = signed_by_bob(kb, tmp_path, also=["carol@example.invalid"])
    all_pass(kb, run_cli, base)
    # mallory, whose key nobody trusts, rewrites it to carol and signs
    ssh_signing(kb.root, tmp_path, "mallory@example.invalid", trusted=False)
    _amend_approver(kb, "carol@example.invalid", stamp=True, sign=True)
    verdicts = checks(kb, run_cli, base)
    for name, (code, text) in verdicts.items():
        assert code == 1, (name, text)
        assert "signature" in text, (name, text)
    # bob himself signs a decision that names carol: the signer is who acted
    git(kb.root, "reset", "-q", "--hard", "HEAD@{1}")
    ssh_signing(kb.root, tmp_path, "bob@example.invalid", trusted=False)  # already trusted
    _amend_approver(kb, "carol@example.invalid", stamp=True, sign=True)
    verdicts = checks(kb, run_cli, base)
    assert verdicts["verify"][0] == 1 and "the signer is who acted" in verdicts["verify"][1]
    assert verdicts["doctor"][0] == 1 and "the signer is who acted" in verdicts["doctor"][1]
    assert verdicts["lint"][0] == 1 and "the signer is who acted" in verdicts["lint"][1]


# -- finding 3: the whole history rewritten, an earlier actor changed ------------------------------
_REWRITE = r"""
import hashlib, json, sys
from pathlib import Path
sys.path.insert(0, {src!r})
from vouch.store import audit
target, new = {target!r}, {new!r}
log = Path(".vouch/audit.log.jsonl")
if log.exists():
    out, remap = [], {{}}
    for line in log.read_text().splitlines():
        event = json.loads(line)
        old = event["hash"]
        if event["id"] == target:
            event["actor"] = new
        if event["prev_hash"] in remap:
            event["prev_hash"] = remap[event["prev_hash"]]
        event["hash"] = audit.event_hash(event)
        remap[old] = event["hash"]
        out.append(json.dumps(event, separators=(",", ":"), ensure_ascii=False))
    log.write_text("\n".join(out) + "\n")
def blob(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
sealed = {{}}  # the object's old blob -> its new one, for the decision record's `blobs`
for path in Path(".vouch").rglob("*.yaml"):
    text = path.read_text()
    if "approved_by: bob" in text and {oid!r} in path.name:
        edited = text.replace("approved_by: bob", "approved_by: " + new)
        sealed[blob(text.encode())] = blob(edited.encode())
        path.write_text(edited)
for path in Path(".vouch").rglob("*.yaml"):
    text = path.read_text()
    if {pid!r} in path.name:
        text = text.replace("decided_by: bob", "decided_by: " + new)
        for old, now in sealed.items():
            text = text.replace(old, now)
        path.write_text(text)
"""
_MSG = r"""
import json, sys
remap = json.loads(open({mapfile!r}).read())
text = sys.stdin.read()
for old, new in remap.items():
    text = text.replace(old, new)
sys.stdout.write(text)
"""


def _rewrite_history(kb: KB, tmp: Path, event_id: str, pid: str, oid: str, new: str) -> None:
    """`git filter-branch` over every commit: the event's actor changed, the chain
    re-hashed, the record and the object changed to match, every head trailer mapped."""
    src = str(Path(__file__).resolve().parents[1])
    mapfile = str(tmp / "remap.json")
    remap: dict[str, str] = {}  # the whole log re-hashed: each commit's log is a prefix of it
    for line in (kb.root / LOG).read_text().splitlines():
        event = json.loads(line)
        old = event["hash"]
        if event["id"] == event_id:
            event["actor"] = new
        event["prev_hash"] = remap.get(event["prev_hash"], event["prev_hash"])
        event["hash"] = audit.event_hash(event)
        remap[old] = event["hash"]
    Path(mapfile).write_text(json.dumps(remap))
    tree = tmp / "tree.py"
    tree.write_text(_REWRITE.format(src=src, target=event_id, new=new, mapfile=mapfile,
                                    pid=pid, oid=oid))  # fmt: skip
    msg = tmp / "msg.py"
    msg.write_text(_MSG.format(mapfile=mapfile))
    env = {**os.environ, "FILTER_BRANCH_SQUELCH_WARNING": "1"}
    done = subprocess.run(
        ["git", "filter-branch", "-f", "--tree-filter", f"{sys.executable} {tree}",
         "--msg-filter", f"{sys.executable} {msg}", "--", "--all"],
        cwd=kb.root, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_a_rewritten_history_is_caught_by_the_anchor(
    reviewed: KB, run_cli: Any, tmp_path: Path
) -> None:
    kb = reviewed
    first = last_event(kb.root)  # bob's approval of the first claim
    pid, oid = first["object_ids"]
    approve(kb, "A second claim")
    approve(kb, "A third claim")
    anchored = run_cli("audit", "anchor", "--json", cwd=kb.root)
    assert anchored.code == 0, anchored.err
    tag = anchored.json()["tag"]
    git(kb.root, "tag", "-l")  # the tag stays where it was: branches do not carry it
    before_tag = git(kb.root, "rev-parse", tag).strip()
    _rewrite_history(kb, tmp_path, str(first["id"]), pid, oid, CAROL)
    assert git(kb.root, "rev-parse", tag).strip() == before_tag
    assert last_event(kb.root)["hash"] != first["hash"]
    # a consistent rewrite: every local check is satisfied...
    git(kb.root, "tag", "-d", tag.removeprefix("refs/tags/"))
    git(kb.root, "checkout", "-qb", "pr")
    approve(kb, "A pull request on the rewritten main")
    all_pass(kb, run_cli, "main")
    # ...and the published anchor catches it
    git(kb.root, "update-ref", tag, before_tag)
    all_fail(kb, run_cli, "main", "rewritten")
    res = run_cli("audit", "--verify", "--anchor", tag.removeprefix("refs/tags/"), cwd=kb.root)
    assert res.code == 1 and "'bob'" in res.out and "'carol'" in res.out


# -- the anchor itself ---------------------------------------------------------------------------
def test_an_anchor_is_a_persons_write(reviewed: KB, run_cli: Any) -> None:
    kb = reviewed
    tags = git(kb.root, "tag", "-l")
    agent = CallContext(kb_path=str(kb.root), transport="jsonl")
    os.environ["VOUCH_AGENT"] = "bot"
    try:
        from vouch.errors import GateRefused

        with pytest.raises(GateRefused, match="person"):
            ops.invoke(agent, "kb.audit_anchor", {})
        assert git(kb.root, "tag", "-l") == tags
        allowed = CallContext(kb_path=str(kb.root), transport="jsonl", allow_decisions=True)
        made = ops.invoke(allowed, "kb.audit_anchor", {})
    finally:
        del os.environ["VOUCH_AGENT"]
    assert made["tag"] == "refs/tags/vouch/audit/1" and not made["signed"]
    res = run_cli("audit", "anchor", "--json", cwd=kb.root)
    assert res.code == 0 and res.json()["tag"] == "refs/tags/vouch/audit/2"
    assert git(kb.root, "cat-file", "-t", "vouch/audit/2").strip() == "tag"
    assert run_cli("audit", "nonsense", cwd=kb.root).code == 1
    assert run_cli("audit", "--verify", "--anchor", "vouch/audit/9", cwd=kb.root).code == 1


def test_a_broken_history_is_not_anchored(reviewed: KB, run_cli: Any) -> None:
    _forged_plain_commit(reviewed)
    res = run_cli("audit", "anchor", cwd=reviewed.root)
    assert res.code == 1 and "fix it first" in res.err
    assert git(reviewed.root, "tag", "-l") == ""


@needs_ssh
def test_anchors_are_signed_when_the_clone_signs(
    reviewed: KB, run_cli: Any, tmp_path: Path
) -> None:
    kb = reviewed
    base = signed_by_bob(kb, tmp_path)
    res = run_cli("audit", "anchor", "--json", "--as", "bob@example.invalid", cwd=kb.root)
    assert res.code == 0 and res.json()["signed"], res.err
    all_pass(kb, run_cli, base)
    # an unsigned anchor put in its place (same name) is refused
    git(kb.root, "tag", "-d", "vouch/audit/1")
    git(kb.root, "config", "commit.gpgsign", "false")
    assert run_cli("audit", "anchor", cwd=kb.root).code == 0
    all_fail(kb, run_cli, base, "anchor vouch/audit/1 has no good signature")


def test_an_event_slipped_in_before_a_vouch_write_is_caught(reviewed: KB, run_cli: Any) -> None:
    """The next vouch write chains onto a forged event: its head then reaches back over
    an event it did not make."""
    kb = reviewed
    base = head(kb.root)
    claim_id = last_event(kb.root)["object_ids"][1]
    for follow in ("confirm", "approve"):
        forge_append(kb.root, "claim.archive", CAROL, [claim_id])
        git(kb.root, "commit", "-qam", "slip one in")
        if follow == "confirm":
            call(kb, "kb.confirm", {"id": claim_id}, actor=BOB)
        else:
            approve(kb, "Approved after the slip")
    all_fail(
        kb,
        run_cli,
        base,
        "adds 2 audit events; a claim.confirm write adds exactly one",
        "adds the audit events [claim.archive, proposal.create, proposal.approve]",
    )


def test_dropping_anchored_events_is_caught(reviewed: KB, run_cli: Any) -> None:
    kb = reviewed
    base = head(kb.root)
    approve(kb, "Anchored then dropped")
    assert run_cli("audit", "anchor", cwd=kb.root).code == 0
    lines = (kb.root / LOG).read_text().splitlines()
    (kb.root / LOG).write_text("\n".join(lines[:-2]) + "\n")
    git(kb.root, "commit", "-qam", "shorter log")
    all_fail(kb, run_cli, base, "no longer holds event")


def test_typed_decision_trailers_with_hostile_ids_are_refused_cleanly(
    reviewed: KB, run_cli: Any
) -> None:
    """Trailers are typed text: ids that are not ids never reach git as object names."""
    base = head(reviewed.root)
    forged = forge_append(reviewed.root, "proposal.approve", BOB, ["../../x", "HEAD x"])
    git(reviewed.root, "add", LOG)
    message = (
        "vouch: approve claim x\n\nVouch-Proposal: ../../config\nVouch-Decision: approved\n"
        "Vouch-Kind: claim\nVouch-Object: HEAD --all x\n"
        f"Vouch-Audit-Head: {forged}\n"
    )
    git(reviewed.root, "commit", "-qm", message)
    all_fail(reviewed, run_cli, base, "holds no readable decision record")


@needs_ssh
def test_remembered_signatures_are_judged_again_when_the_trust_changes(
    reviewed: KB, run_cli: Any, tmp_path: Path
) -> None:
    kb = reviewed
    base = signed_by_bob(kb, tmp_path)
    all_pass(kb, run_cli, base)
    all_pass(kb, run_cli, base)  # now from what the clone remembers
    (tmp_path / "allowed_signers").write_text("")  # bob's key is no longer trusted
    res = run_cli("audit", "--verify", cwd=kb.root)
    assert res.code == 1 and "without a good signature" in res.out


# -- decision records are written only by the decision that made them ---------------------------
# An outsider's second attack: plain commits carrying vouch's trailers typed by hand but
# no audit event — an approval record for an unreviewed claim, a rejection of someone
# else's pending proposal, a hand promotion re-sealed in the decision record.
TRAILERS = (
    "Vouch-Proposal: {pid}\nVouch-Decision: {decision}\nVouch-Approver: Rita Reviewer\n"
    "Vouch-Proposer: alice\nVouch-Kind: claim\nVouch-Object: {oid}\n"
    "Vouch-Proposal-Commit: {commit}\n"
)


def _commit(root: Path, subject: str, trailers: str) -> str:
    """A plain commit of what is staged, with trailers typed by hand, no hook run."""
    git(root, "commit", "-q", "--no-verify", "-m", subject, "-m", trailers)
    return head(root)


def _record(pid: str, oid: str, decision: str, commit: str, **extra: Any) -> str:
    record = {
        "proposal_id": pid,
        "decision": decision,
        "kind": "claim",
        "object_id": oid,
        "proposer": "alice",
        "decided_by": "Rita Reviewer",
        "decided_at": "2026-11-27T00:00:00Z",
        "base": "refs/heads/main",
        "proposal_commit": commit,
        **extra,
    }
    return yamlio.dump_yaml(record)


def _smuggled(kb: KB, text: str, approver: str | None = None) -> tuple[str, str, str, str]:
    """A claim as vouch proposes it, written into the work tree by hand (stamped
    `approved_by` when `approver` is given): its proposal id, object id, proposal commit
    and the blob of the written file."""
    pid = propose_claim(kb, text, evidence=[a_source(kb)])
    ref = f"refs/heads/vouch/proposal/{pid}"
    oid = claim.KIND.make_id({"text": text})
    rel = f".vouch/{claim.path_for(oid)}"
    stamp = f"approved_by: {approver}\n" if approver else ""
    (kb.root / rel).parent.mkdir(parents=True, exist_ok=True)
    (kb.root / rel).write_text(git(kb.root, "show", f"{ref}:{rel}") + stamp)
    blob = git(kb.root, "hash-object", rel).strip()
    return pid, oid, git(kb.root, "rev-parse", ref).strip(), blob


def _forge_decision(kb: KB, pid: str, oid: str, decision: str, commit: str, **extra: Any) -> str:
    """A decision record written by hand and committed, with every trailer typed, in one
    plain commit of whatever else is in the work tree; the commit."""
    record = kb.dir / decided_path(pid)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(_record(pid, oid, decision, commit, **extra))
    git(kb.root, "add", "-A")
    verb = "approve" if decision == "approved" else "reject"
    trailers = TRAILERS.format(pid=pid, decision=decision, oid=oid, commit=commit)
    return _commit(kb.root, f"vouch: {verb} claim", trailers)


def test_a_decision_record_typed_by_hand_approves_nothing(reviewed: KB, run_cli: Any) -> None:
    """G1: the claim vouch would have written, added with a hand-written approval record
    and typed decision trailers, in one plain commit: no merge, no audit event."""
    kb = reviewed
    base = head(kb.root)
    pid, oid, commit, blob = _smuggled(kb, "Unreviewed and smuggled in", "Rita Reviewer")
    forged = _forge_decision(kb, pid, oid, "approved", commit, blobs={claim.path_for(oid): blob})
    all_fail(kb, run_cli, base, "decision record", forged[:12])


def test_a_rejection_typed_by_hand_is_caught(reviewed: KB, run_cli: Any) -> None:
    """G4: someone else's pending proposal closed by a hand-written rejection record."""
    kb = reviewed
    base = head(kb.root)
    pid = propose_claim(kb, "Someone else's open proposal")
    commit = git(kb.root, "rev-parse", f"refs/heads/vouch/proposal/{pid}").strip()
    oid = claim.KIND.make_id({"text": "Someone else's open proposal"})
    forged = _forge_decision(kb, pid, oid, "rejected", commit, reason="no")
    all_fail(kb, run_cli, base, "decision record", forged[:12])


def test_a_hand_promotion_resealed_in_the_record_is_caught(reviewed: KB, run_cli: Any) -> None:
    """G2: status and confidence raised by hand, the decision record's seal rewritten to
    the new blob, and a typed `Vouch-Event` trailer — still no event."""
    kb = reviewed
    approved = approve(kb, "Rollbacks take one command")
    base = head(kb.root)
    path = kb.dir / claim.path_for(approved["object_id"])
    old = git(kb.root, "hash-object", str(path)).strip()
    path.write_text(
        path.read_text()
        .replace("status: working", "status: stable")
        .replace("confidence: 0.7", "confidence: 1.0")
    )
    new = git(kb.root, "hash-object", str(path)).strip()
    record = kb.dir / decided_path(approved["proposal_id"])
    record.write_text(record.read_text().replace(old, new))
    git(kb.root, "add", "-A")
    forged = _commit(kb.root, "promote by hand", "Vouch-Event: anything\n")
    all_fail(kb, run_cli, base, "decision record", forged[:12])


def test_a_decision_still_passes(reviewed: KB, run_cli: Any) -> None:
    """The guard's control: the same approval made by vouch passes every check."""
    kb = reviewed
    base = head(kb.root)
    approve(kb, "Made by vouch")
    call(kb, "kb.reject", {"proposal_id": propose_claim(kb, "Rejected by vouch"), "reason": "no"})
    all_pass(kb, run_cli, base)


def test_a_decision_record_in_a_disguised_registration_is_caught(
    reviewed: KB, run_cli: Any
) -> None:
    """The second outsider's attack: one plain commit typed as a source registration,
    with a correctly chained `source.register` event and its trailers, that also adds a
    claim and a decision record approving it — no decision, no proposal events."""
    kb = reviewed
    base = head(kb.root)
    pid, oid, commit, blob = _smuggled(kb, "Smuggled in a registration")
    record = kb.dir / decided_path(pid)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(_record(pid, oid, "approved", commit, blobs={claim.path_for(oid): blob}))
    event = forge_append(kb.root, "source.register", "Test Person", [a_source(kb)])
    git(kb.root, "add", "-A")
    trailers = (
        f"Vouch-Event: source.register\nVouch-Actor: Test Person\nVouch-Audit-Head: {event}\n"
    )
    forged = _commit(kb.root, "vouch: register source", trailers)
    all_fail(kb, run_cli, base, "decision record", forged[:12])


def test_a_newer_anchor_cannot_hide_a_rewrite(reviewed: KB, run_cli: Any) -> None:
    """The second outsider's attack: after an anchored history is reset and rewritten, a
    newer anchor tag over the rewrite made the checks compare with it alone. Every
    anchor is compared, so the older one still catches the rewrite."""
    kb = reviewed
    base = head(kb.root)
    approve(kb, "Anchored once")
    assert run_cli("audit", "anchor", cwd=kb.root).code == 0
    git(kb.root, "reset", "-q", "--hard", base)
    approve(kb, "Something else in its place")
    newer = run_cli("audit", "anchor", "--json", cwd=kb.root)  # or a tag typed by hand
    if newer.code == 0:
        assert newer.json()["tag"].endswith("/2")
    all_fail(kb, run_cli, base, "vouch/audit/1")


def test_a_tag_that_is_no_anchor_is_reported(reviewed: KB, run_cli: Any) -> None:
    """The third outsider: lightweight or malformed tags under vouch/audit/ were skipped
    in silence, so whoever made them believed the chain anchored."""
    kb = reviewed
    git(kb.root, "tag", "vouch/audit/7")  # lightweight
    git(kb.root, "tag", "-a", "-m", "events: -5", "vouch/audit/x")
    res = run_cli("audit", "--verify", "--json", cwd=kb.root)
    warned = [w for w in res.json()["warnings"] if w["kind"] == "anchor-unreadable"]
    assert {w["detail"].split()[0] for w in warned} == {"vouch/audit/7", "vouch/audit/x"}, warned
