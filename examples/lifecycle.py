#!/usr/bin/env python3
"""Approved knowledge changes without being deleted: a work session, then supersede,
promote and archive, each one audited commit on the checked-out branch.

Ada proposes four claims in one session; Rita approves them together, replaces one by
a fuller one (supersede), raises one a rung (promote) and retires one (archive). Search
hides what was superseded or archived unless asked for it.
"""

from __future__ import annotations

from _helpers import REVIEWER, Scratch, check, run, say


def main(s: Scratch) -> None:
    kb = s.knowledge_base("billing", "deploy-runbook.md", "incident-2026-03.txt")
    added = s.vouch_json("source", "add", "docs", "--recursive", cwd=kb)["items"]
    src = {item["locator"].removeprefix("docs/"): item["id"] for item in added}
    runbook, incident = src["deploy-runbook.md"], src["incident-2026-03.txt"]
    say("vouch init; vouch source add docs/ --recursive → the runbook and an incident review")

    session = s.vouch_json("session", "start", "--task", "read the deploy docs", cwd=kb)[
        "session_id"
    ]
    say(f"vouch session start → {session}")
    claims = {
        "short": ("Rollbacks of the billing service do not need a review.", f"{runbook}:L8"),
        "full": (
            "Rollbacks of the billing service need neither a review nor a migration rollback.",
            f"{runbook}:L8-L10",
        ),
        "idempotent": (
            "Every consumer of payments.events must be idempotent by event id.",
            f"{incident}:L8",
        ),
        "freeze": ("No billing deploys happen after 15:00 UTC on Fridays.", f"{runbook}:L14"),
    }
    made = {
        key: s.vouch_json(
            "propose-claim", "--text", text, "--evidence", cited, "--session", session, cwd=kb
        )
        for key, (text, cited) in claims.items()
    }
    ended = s.vouch_json("session", "end", session, cwd=kb)
    check(ended["proposals"] == 4, f"session end: {ended}")
    say(f"four vouch propose-claim --session {session}; vouch session end → 4 proposals")

    ids = {key: m["claim_id"] for key, m in made.items()}
    s.review(*(m["proposal_id"] for m in made.values()), cwd=kb)
    s.as_reviewer("approve", *(m["proposal_id"] for m in made.values()), cwd=kb)
    say(f"vouch approve (four ids), as {REVIEWER} → four claims, status working")

    why = "the fuller statement of the same section"
    s.as_reviewer("supersede", ids["short"], ids["full"], "--reason", why, cwd=kb)
    say(f"vouch supersede {ids['short']} {ids['full']}")
    s.as_reviewer("promote", ids["idempotent"], "--reason", "incident fix", cwd=kb)
    say(f"vouch promote {ids['idempotent']} → actionable")
    s.as_reviewer("archive", ids["freeze"], cwd=kb)
    say(f"vouch archive {ids['freeze']}")

    listed = {claim["id"]: claim for claim in s.vouch_json("list", "claims", cwd=kb)["items"]}
    status = {id: claim["status"] for id, claim in listed.items()}
    expected = {
        ids["short"]: "superseded",
        ids["full"]: "working",
        ids["idempotent"]: "actionable",
        ids["freeze"]: "archived",
    }
    check(status == expected, f"statuses: {status}")
    old = listed[ids["short"]]
    check(old["superseded_by"] == ids["full"], f"superseded_by: {old['superseded_by']}")
    say("vouch list claims → superseded, working, actionable, archived; nothing deleted")

    def search(*args: str) -> list[str]:
        response = s.vouch_json("search", "billing deploys rollbacks", *args, cwd=kb)
        return [hit["id"] for hit in response["results"] if hit["kind"] == "claim"]

    live, retired = search("--kind", "claim"), search("--status", "superseded,archived")
    check(ids["short"] not in live and ids["freeze"] not in live, f"search: {live}")
    check({ids["short"], ids["freeze"]} <= set(retired), f"--status: {retired}")
    say("vouch search hides them; --status superseded,archived finds them")


if __name__ == "__main__":
    run(main)
