#!/usr/bin/env python3
"""The review gate: a proposal is a branch, and someone other than its proposer decides.

Ada registers the deploy runbook and proposes two claims citing lines of it. She cannot
approve her own proposal; Rita (another git identity) reads both, approves one and
rejects the other with a reason.
"""

from __future__ import annotations

from _helpers import AUTHOR, REVIEWER, Scratch, check, run, say


def main(s: Scratch) -> None:
    kb = s.knowledge_base("billing", "deploy-runbook.md")
    say(f"vouch init, in a new git repository ({kb.name}/)")

    src = s.vouch_json("source", "add", "docs/deploy-runbook.md", cwd=kb)["id"]
    say(f"vouch source add docs/deploy-runbook.md → source {src[:12]}")

    ci = s.vouch_json(
        "propose-claim",
        "--text", "Every deploy of the billing service needs a green CI run.",
        "--evidence", f"{src}:L4",  # line 4 of the runbook says so
        "--type", "fact", "--tags", "deploy",
        "--rationale", "the runbook's first section",
        cwd=kb,
    )  # fmt: skip
    fridays = s.vouch_json(
        "propose-claim",
        "--text", "Deploys of the billing service may happen on Fridays.",
        "--evidence", f"{src}:L14",
        cwd=kb,
    )  # fmt: skip
    say(f"{AUTHOR} proposes two claims: {ci['proposal_id']}, {fridays['proposal_id']}")
    branch = f"vouch/proposal/{ci['proposal_id']}"
    check(branch in s.git("branch", "--list", "vouch/proposal/*", cwd=kb), f"no branch {branch}")
    pending = {p["proposal_id"] for p in s.vouch_json("pending", cwd=kb)}
    check(pending == {ci["proposal_id"], fridays["proposal_id"]}, f"pending: {pending}")
    say(f"vouch pending → 2 open proposals, each a branch ({branch})")

    refused = s.vouch("approve", ci["proposal_id"], cwd=kb, expect=1)
    check("E104" in refused and "cannot also approve" in refused, f"self-approval: {refused}")
    say(f"vouch approve, as {AUTHOR} → refused [E104]: nobody approves their own proposal")

    s.review(ci["proposal_id"], fridays["proposal_id"], cwd=kb)
    say(f"vouch show, as {REVIEWER} → each proposal with its cited lines; showing pins it")
    s.as_reviewer("approve", ci["proposal_id"], "--reason", "line 4", cwd=kb)
    subject = s.git("log", "-1", "--format=%s", cwd=kb)
    check(subject.startswith("vouch: approve claim"), f"main's last commit: {subject}")
    say(f"vouch approve, as {REVIEWER} → merged into main: {ci['claim_id']}")

    reason = "the runbook forbids deploys on Friday afternoons"
    s.as_reviewer("reject", fridays["proposal_id"], "--reason", reason, cwd=kb)
    shown = s.vouch_json("show", fridays["proposal_id"], cwd=kb)
    check(shown["state"] == "rejected", f"state: {shown['state']}")
    check(shown["decision"]["reason"] == reason, f"decision: {shown['decision']}")
    check(shown["ref"].startswith("refs/vouch/rejected/"), f"ref: {shown['ref']}")
    say(f"vouch reject --reason '{reason}' → decided, its commit kept under {shown['ref']}")

    why = s.vouch_json("why", ci["claim_id"], cwd=kb)
    check(why["proposed"]["proposer"] == AUTHOR, f"proposer: {why['proposed']}")
    check(why["approved"]["approver"] == REVIEWER, f"approver: {why['approved']}")
    check(why["approved"]["reason"] == "line 4", f"reason: {why['approved']}")
    say(f"vouch why {ci['claim_id']} → proposed by {AUTHOR}, approved by {REVIEWER}")


if __name__ == "__main__":
    run(main)
