#!/usr/bin/env python3
"""Knowledge from one repository to another as a bundle: `vouch export` on one side,
`vouch import-check` and `vouch import-apply` on the other.

A bundle holds the approved knowledge committed on a branch (sources, evidence, claims,
decision records, the audit log), never config or pending proposals. The receiving side
checks it first (new, conflicting, identical), then a person imports it in one audited
commit, choosing what wins when an object differs.
"""

from __future__ import annotations

from _helpers import REVIEWER, Scratch, check, run, say


def main(s: Scratch) -> None:
    team = s.knowledge_base("billing", "deploy-runbook.md")
    src = s.vouch_json("source", "add", "docs/deploy-runbook.md", cwd=team)["id"]
    made = s.vouch_json(
        "propose-claim",
        "--text", "Every deploy of the billing service needs a green CI run.",
        "--evidence", f"{src}:L4",
        cwd=team,
    )  # fmt: skip
    claim = made["claim_id"]
    s.review(made["proposal_id"], cwd=team)
    s.as_reviewer("approve", made["proposal_id"], cwd=team)
    say(f"billing/: a source and an approved claim, {claim}")

    bundle = s.root / "billing.tar.gz"
    exported = s.vouch_json("export", "--out", str(bundle), cwd=team)
    say(f"vouch export --out billing.tar.gz → {exported['files']} files, {exported['bytes']} bytes")

    other = s.knowledge_base("platform")
    plan = s.vouch_json("import-check", str(bundle), cwd=other)
    check(claim in plan["new"] and src in plan["new"], f"import-check: {plan}")
    check(plan["conflict"] == [], f"conflicts: {plan['conflict']}")
    say(f"platform/: vouch import-check → {len(plan['new'])} new, 0 conflicting, 0 identical")

    applied = s.vouch_json("import-apply", str(bundle), cwd=other)
    check(applied["imported"] == len(plan["new"]), f"import-apply: {applied}")
    subject = s.git("log", "-1", "--format=%s", cwd=other).strip()
    check(subject.startswith("vouch: import bundle"), f"last commit: {subject}")
    imported = s.vouch_json("read", "claim", claim, cwd=other)
    check(imported["approved_by"] == REVIEWER, f"imported claim: {imported}")
    say(f"vouch import-apply → one commit ({subject!r}), approved_by still {REVIEWER}")

    s.as_reviewer("archive", claim, cwd=team)
    s.vouch("export", "--out", str(bundle), cwd=team)
    plan = s.vouch_json("import-check", str(bundle), cwd=other)
    check(plan["conflict"] == [claim], f"after the archive: {plan}")
    say(f"billing/ archives the claim and exports again; import-check → conflict: {claim}")

    s.vouch("import-apply", str(bundle), "--on-conflict", "overwrite", cwd=other)
    status = s.vouch_json("read", "claim", claim, cwd=other)["status"]
    check(status == "archived", f"after --on-conflict overwrite: {status}")
    say("vouch import-apply --on-conflict overwrite → archived here too (skip keeps ours)")


if __name__ == "__main__":
    run(main)
