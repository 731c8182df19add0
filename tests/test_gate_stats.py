"""Whether review keeps up (`vouch stats --gate`, `kb.gate_stats`; issue 38 item 5),
counted from a real repository's proposals, decision records and claims."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from gate_support import BOB, call, propose_claim

from vouch.core import ids
from vouch.health.gate_stats import gate_stats, markdown
from vouch.store.kb import KB, decided_path


def _history(kb: KB) -> dict[str, str]:
    approved = propose_claim(kb, "Deploys need a green CI run")
    call(kb, "kb.approve", {"proposal_id": approved}, actor=BOB)
    rejected = propose_claim(kb, "Deploys never need CI")
    call(
        kb,
        "kb.reject",
        {"proposal_id": rejected, "reason": "the runbook says otherwise"},
        actor=BOB,
    )
    also = propose_claim(kb, "Deploys happen on Fridays")
    call(
        kb, "kb.reject", {"proposal_id": also, "reason": "The runbook   says otherwise"}, actor=BOB
    )
    pending = propose_claim(kb, "Rollbacks use the script")
    return {"approved": approved, "rejected": rejected, "pending": pending}


def test_counts_what_the_repository_holds(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    made = _history(kb)
    d: dict[str, Any] = call(kb, "kb.gate_stats", {})
    assert d["pending"]["count"] == 1 and d["pending"]["oldest"] == made["pending"]
    assert d["pending"]["oldest_age_days"] is not None and d["pending"]["oldest_age_days"] < 1
    dec = d["decisions"]
    assert (dec["total"], dec["approved"], dec["rejected"], dec["unreadable"]) == (3, 1, 2, 0)
    assert sum(w["approved"] + w["rejected"] for w in dec["per_week"]) == 3
    assert len(dec["per_week"]) == 8 and dec["median_days_to_decision"] < 1
    # the same reason, spaced differently, counts once; case is kept as written
    reasons = {r["reason"]: r["count"] for r in d["rejection_reasons"]}
    assert reasons == {"the runbook says otherwise": 1, "The runbook says otherwise": 1}
    claims = d["claims"]
    assert (claims["live"], claims["cited"], claims["citation_coverage"]) == (1, 1, 1.0)
    assert (claims["unconfirmed"], claims["drifted"]) == (0, 0)


def test_claims_nobody_confirmed_and_old_proposals(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    _history(kb)
    later = datetime.now(UTC) + timedelta(days=40)
    d = gate_stats(kb, stale_days=30, now=later)
    assert d["claims"]["unconfirmed"] == 1 and d["claims"]["unconfirmed_days"] == 30
    assert 39.9 < d["pending"]["oldest_age_days"] < 40.1
    assert gate_stats(kb, stale_days=0, now=later)["claims"]["unconfirmed"] == 0  # off


def test_a_record_that_is_not_one_is_counted_as_unreadable(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    _history(kb)
    junk = kb.dir / decided_path(ids.proposal_id("junk"))
    junk.parent.mkdir(parents=True, exist_ok=True)
    junk.write_text("- not: a record\n")
    (junk.parent / "link.yaml").symlink_to("/etc/hostname")
    d = gate_stats(kb)
    assert d["decisions"]["unreadable"] == 1 and d["decisions"]["total"] == 3


def test_the_weekly_note(kb_with_sources: KB, run_cli: Any) -> None:
    kb = kb_with_sources
    _history(kb)
    text = markdown(call(kb, "kb.gate_stats", {}))
    assert "- **1 pending**" in text and "- **3 decisions**: 1 approved, 2 rejected" in text
    assert "| week | approved | rejected |" in text and "1 × `the runbook says otherwise`" in text
    shown = run_cli("stats", "--gate", "--format", "markdown", cwd=kb.root)
    assert shown.code == 0 and shown.out == text
    as_json = run_cli("gate-stats", "--json", cwd=kb.root)
    assert as_json.code == 0 and as_json.json()["decisions"]["total"] == 3


def test_a_huge_stale_days_is_never_not_a_crash(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    _history(kb)
    d = call(kb, "kb.gate_stats", {"stale_days": 10**12})
    assert d["claims"]["unconfirmed"] == 0 and d["claims"]["unconfirmed_days"] == 36500
    assert call(kb, "kb.lint", {"stale_days": 10**12})["errors"] == 0


def test_a_proposal_dated_in_the_future_is_counted_not_aged(kb_with_sources: KB) -> None:
    """A hand-built branch picks its own commit date: counted as pending, never aged
    (no negative median, no age of centuries)."""
    from conftest import git

    kb = kb_with_sources
    _history(kb)
    pid = propose_claim(kb, "A proposal from the future")
    ref = f"refs/heads/vouch/proposal/{pid}"
    tree = git(kb.root, "rev-parse", f"{ref}^{{tree}}").strip()
    parent = git(kb.root, "rev-parse", f"{ref}^").strip()
    message = git(kb.root, "log", "-1", "--format=%B", ref)
    env_date = "2099-01-01T00:00:00Z"
    import os
    import subprocess

    forged = subprocess.run(
        ["git", "commit-tree", tree, "-p", parent, "-m", message],
        cwd=kb.root,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GIT_COMMITTER_DATE": env_date, "GIT_AUTHOR_DATE": env_date},
    ).stdout.strip()
    git(kb.root, "update-ref", ref, forged)
    d = call(kb, "kb.gate_stats", {})
    assert d["pending"]["count"] == 2
    assert 0 <= d["pending"]["median_age_days"] < 1 and d["pending"]["oldest_age_days"] < 1
