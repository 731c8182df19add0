"""`vouch lint --since BASE`: the audit events of the range against the commits that
made them (`vouch.gate.auditproof`), and the chain against the last anchor tag.

The range's signatures are judged by `review` (decisions and knowledge changes, by the
base's configuration); here a signed commit must also be signed by the actor its audit
events name.
"""

from __future__ import annotations

from typing import Any

from vouch.core.config import Config
from vouch.health.issues import Issue, issue
from vouch.store.kb import KB


def since(kb: KB, info: dict[str, Any], settings: Config) -> list[Issue]:
    from vouch.gate import anchor, auditproof, signers

    repo = kb.repo
    head, start = info["head"], info["merge_base"]
    commits = {row[0] for row in repo.log_records(f"{start}..{head}", ["%H"]) if row}
    fixed = signers.fixed_policy(settings)
    findings, _ = auditproof.check(kb, head, policy=lambda _: fixed, report=commits)
    findings = [f for f in findings if f.kind != "audit-unsigned"]  # `review` says it
    for one in anchor.anchors(kb):  # every anchor: a newer tag cannot hide an older one
        findings += anchor.compare(kb, one, head, base=info["base"])
    findings = anchor.unique(findings)
    return [issue(f.kind, f.severity, f.detail, id=f.commit) for f in findings]
