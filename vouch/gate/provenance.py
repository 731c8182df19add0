"""What git history proves about the audit log and the decisions.

Every vouch commit names the audit chain's head it left (`Vouch-Audit-Head`), so the
log in the work tree is checked against history: a dropped, rewritten, re-chained or
inserted event no longer matches what the commits recorded. History also shows
proposals that git itself merged (`git merge`, a host's merge button) without a
decision record — knowledge that entered unreviewed as far as vouch can tell.
"""

from __future__ import annotations

from typing import Any

from vouch.gate import records
from vouch.store import audit, writer
from vouch.store.kb import KB

_FIELDS = (
    "%H",
    f"%(trailers:key={writer.AUDIT_HEAD},valueonly,separator=%x2C)",
    "%(trailers:key=Vouch-Proposal,valueonly,separator=%x2C)",
    "%(trailers:key=Vouch-Decision,valueonly,separator=%x2C)",
)


def history(kb: KB) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """(anchors newest first as (commit, head hash), proposal id -> proposal commit) for
    every commit in HEAD's history, read in one `git log`."""
    if kb.repo.peek("HEAD") is None:
        return [], {}
    from vouch.gate.rollbacks import erased

    anchors: list[tuple[str, str]] = []
    proposals: dict[str, str] = {}
    reverted = erased(kb, "HEAD")  # a migration whose event a `git revert` took out
    for parts in kb.repo.log_records("HEAD", _FIELDS):
        if len(parts) != 4:
            continue
        commit, head, proposal, decision = (p.strip() for p in parts)
        if head and commit not in reverted:
            anchors.append((commit, head))
        if proposal and not decision:
            proposals.setdefault(proposal, commit)
    return anchors, proposals


def verify(kb: KB, anchor: str | None = None) -> dict[str, Any]:
    """`vouch audit --verify`: the chain, its anchors in git, undecided merges, each
    event against the commit that made it (`auditproof`) and the chain against the
    last anchor tag (or `anchor`)."""
    anchors, proposals = history(kb)
    report = audit.verify(kb.dir, anchors)
    head = kb.repo.peek("HEAD")
    merged = []
    for pid, commit in sorted(proposals.items()):
        decision = records.decision_of(kb, pid, head) if records.is_proposal_id(pid) else None
        if not decision or decision.get("decision") != "approved":
            merged.append({"proposal_id": pid, "commit": commit})
            report["issues"].append(
                {
                    "file": None,
                    "line": None,
                    "detail": f"proposal {pid} (commit {commit[:12]}) was merged without a "
                    f"decision record: a reviewer records it with `vouch show {pid}` then "
                    f"`vouch approve {pid}`, or reverts the merge",
                }
            )
    report["merged_without_decision"] = merged
    if head is not None:
        from vouch.gate.anchor import verify_history

        found = verify_history(kb, head, anchor)
        report["issues"] += [f.to_verify() for f in found if f.severity == "error"]
        report["warnings"] = [f.to_verify() for f in found if f.severity != "error"]
    report["ok"] = not report["issues"]
    return report
