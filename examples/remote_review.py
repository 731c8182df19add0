#!/usr/bin/env python3
"""A proposal reviewed in another clone, through a shared remote: the pull-request flow
without a hosting service (README, "On a git host (pull requests)").

Ada proposes in her clone and pushes the proposal branch. Rita, in her own clone,
fetches it, reads the review screen, approves it and pushes main. Ada pulls and has the
approved claim; the proposal is no longer pending anywhere.
"""

from __future__ import annotations

from _helpers import REVIEWER, REVIEWER_EMAIL, SOURCES, Scratch, check, run, say


def main(s: Scratch) -> None:
    s.git("init", "-q", "--bare", "origin.git", cwd=s.root)
    s.git("clone", "-q", "origin.git", "ada", cwd=s.root)
    ada = s.root / "ada"
    s.vouch("init", cwd=ada)
    (ada / "runbook.md").write_text((SOURCES / "deploy-runbook.md").read_text())
    src = s.vouch_json("source", "add", "runbook.md", cwd=ada)["id"]
    s.git("push", "-q", "origin", "main", cwd=ada)
    say("origin.git (bare); Ada's clone: vouch init, source add runbook.md, git push")

    s.git("clone", "-q", "origin.git", "rita", cwd=s.root)
    rita = s.root / "rita"
    s.git("config", "user.name", REVIEWER, cwd=rita)  # Rita's clone, Rita's identity
    s.git("config", "user.email", REVIEWER_EMAIL, cwd=rita)
    say("Rita's clone: git clone origin.git")

    made = s.vouch_json(
        "propose-claim",
        "--text", "Every deploy of the billing service needs one approving review.",
        "--evidence", f"{src}:L4",
        "--rationale", "the runbook's first section",
        cwd=ada,
    )  # fmt: skip
    branch = f"vouch/proposal/{made['proposal_id']}"
    s.git("push", "-q", "origin", branch, cwd=ada)
    say(f"Ada: vouch propose-claim → {made['proposal_id']}; git push origin {branch}")

    s.git("fetch", "-q", "origin", cwd=rita)
    pending = s.vouch_json("pending", cwd=rita)
    check([p["proposal_id"] for p in pending] == [made["proposal_id"]], f"pending: {pending}")
    screen = s.vouch("show", made["proposal_id"], "--format", "human", cwd=rita)
    check("one approving review" in screen, f"review screen:\n{screen}")
    say("Rita: git fetch; vouch pending → Ada's proposal; vouch show → the claim, the cited lines")

    s.vouch("approve", made["proposal_id"], "--reason", "runbook line 4", cwd=rita)
    s.git("push", "-q", "origin", "main", f":{branch}", cwd=rita)
    check(not s.git("ls-remote", "origin", branch, cwd=rita), f"{branch} still on origin")
    say(f"Rita: vouch approve; git push origin main :{branch}")

    s.git("pull", "-q", "--ff-only", "origin", "main", cwd=ada)
    claim = s.vouch_json("read", "claim", made["claim_id"], cwd=ada)
    check(claim["approved_by"] == REVIEWER, f"Ada's copy of the claim: {claim}")
    check(s.vouch_json("pending", cwd=ada) == [], "still pending in Ada's clone")
    say(f"Ada: git pull → {made['claim_id']}, approved by {REVIEWER}; nothing pending")


if __name__ == "__main__":
    run(main)
