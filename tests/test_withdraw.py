"""A proposer who rejects their own proposal withdraws it (issue 36, finding 9): the same
decision as a rejection (refs/vouch/rejected/, a record in decided/), recorded as a
withdrawal — `withdrawn: true` in the record, a `Vouch-Withdrawn: true` trailer, the audit
event `proposal.withdraw` — which audit --verify, doctor and lint --since accept only from
the proposer, with trailer and record agreeing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import git
from gate_support import ALICE, BOB, a_source, call, proposed
from test_audit_proof import LOG, all_fail, all_pass, head, last_event

from vouch.gate import records
from vouch.store import audit
from vouch.store.kb import KB


def _withdrawn(kb: KB, run_cli: Any, text: str) -> str:
    """A claim the git user proposed at the CLI, then rejected: a withdrawal."""
    made = run_cli("propose-claim", "--text", text, "--evidence", a_source(kb), "--json",
                   cwd=kb.root)  # fmt: skip
    assert made.code == 0, made.err
    pid = str(made.json()["proposal_id"])
    assert run_cli("show", pid, cwd=kb.root).code == 0
    res = run_cli("reject", pid, "--reason", "cited the wrong file", cwd=kb.root)
    assert res.code == 0, res.err
    return pid


def test_a_proposer_rejecting_their_own_proposal_withdraws_it(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    base = head(kb.root)
    text = "Mine to take back."
    pid = _withdrawn(kb, run_cli, text)
    record = records.decision_of(kb, pid, head(kb.root))
    assert record is not None
    assert (record["decision"], record["withdrawn"]) == ("rejected", True)
    assert record["decided_by"] == record["proposer"] == "Test Person"
    assert git(kb.root, "rev-parse", f"refs/vouch/rejected/{pid}").strip()
    message = git(kb.root, "log", "-1", "--format=%B")
    assert message.startswith("vouch: withdraw claim ") and "Vouch-Withdrawn: true" in message
    events = [e["event"] for e in run_cli("audit", "--json", cwd=kb.root).json()]
    assert events[-2:] == ["proposal.create", "proposal.withdraw"]
    assert "proposal.reject" not in events
    all_pass(kb, run_cli, base)
    again = run_cli("reject", pid, "--reason", "twice", cwd=kb.root)
    assert again.code == 1 and "already withdrawn by Test Person" in again.err
    # no reviewer said no: the same content may be proposed again without --again
    anew = run_cli("propose-claim", "--text", text, "--evidence", a_source(kb), "--json",
                   cwd=kb.root)  # fmt: skip
    assert anew.code == 0 and anew.json()["proposal_id"], anew.out


def test_withdrawing_says_so(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    made = run_cli("propose-claim", "--text", "Said so.", "--evidence", a_source(kb), "--json",
                   cwd=kb.root)  # fmt: skip
    pid = made.json()["proposal_id"]
    run_cli("show", pid, cwd=kb.root)
    res = run_cli("reject", pid, "--reason", "no", cwd=kb.root)
    assert res.code == 0 and res.out.strip() == f"withdrew your own proposal {pid}"


def test_a_reviewers_rejection_stays_a_rejection(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    base = head(kb.root)
    made = proposed(kb, "kb.propose_claim", {"text": "Not mine.", "evidence": [a_source(kb)]})
    pid = made["proposal_id"]
    # the person runs it under a label naming the proposing agent: still not the proposer
    res = run_cli("reject", pid, "--reason", "no source says so", "--as", ALICE, "--json",
                  cwd=kb.root)  # fmt: skip
    assert res.code == 0 and res.json()["withdrawn"] is False, res.out
    events = [e["event"] for e in run_cli("audit", "--json", cwd=kb.root).json()]
    assert events[-1] == "proposal.reject"
    assert "Vouch-Withdrawn" not in git(kb.root, "log", "-1", "--format=%B")
    record = records.decision_of(kb, pid, head(kb.root))
    assert record is not None and "withdrawn" not in record
    all_pass(kb, run_cli, base)
    anew = call(kb, "kb.propose_claim", {"text": "Not mine.", "evidence": [a_source(kb)]}, BOB)
    assert anew["duplicate"] == "rejected" and anew["proposal_id"] is None


def _amend_last_decision(
    kb: KB, *, event: str | None = None, record: tuple[str, str], message: tuple[str, str]
) -> None:
    """Rewrite the last decision commit by hand: its audit event renamed (re-hashed, the
    head trailer following), a text replaced in its decision record and in its message."""
    root = kb.root
    old = last_event(root)
    changed = {**old, "event": event or old["event"]}
    changed["hash"] = audit.event_hash(changed)
    lines = (root / LOG).read_text().splitlines()
    (root / LOG).write_text("\n".join([*lines[:-1], json.dumps(changed)]) + "\n")
    path = next(p for p in (kb.dir / "decided").rglob("*.yaml") if old["object_ids"][0] in p.name)
    assert record[0] in path.read_text()
    path.write_text(path.read_text().replace(*record))
    text = git(root, "log", "-1", "--format=%B")
    assert message[0] in text
    text = text.replace(*message).replace(str(old["hash"]), str(changed["hash"]))
    git(root, "add", "-A", ".vouch")
    git(root, "commit", "-q", "--amend", "--no-gpg-sign", "-m", text)


def _snapshot(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def test_a_reviewers_rejection_passed_off_as_a_withdrawal_is_caught(
    kb_with_sources: KB, run_cli
) -> None:
    """Bob rejected Alice's proposal; the commit is rewritten to say Alice withdrew it
    (record, trailer, audit event, all consistent): only a proposer withdraws."""
    kb = kb_with_sources
    base = head(kb.root)
    made = proposed(kb, "kb.propose_claim", {"text": "Alice's claim.", "evidence": [a_source(kb)]})
    call(kb, "kb.reject", {"proposal_id": made["proposal_id"], "reason": "no"}, actor=BOB)
    all_pass(kb, run_cli, base)
    _amend_last_decision(
        kb,
        event="proposal.withdraw",
        record=("decider_email:", "withdrawn: true\ndecider_email:"),
        message=("Vouch-Audit-Head:", "Vouch-Withdrawn: true\nVouch-Audit-Head:"),
    )
    before = _snapshot(kb.root)
    all_fail(kb, run_cli, base, "only its proposer withdraws a proposal")
    assert _snapshot(kb.root) == before


def test_a_withdrawal_whose_trailer_and_record_disagree_is_caught(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    base = head(kb.root)
    _withdrawn(kb, run_cli, "Taken back, then edited.")
    all_pass(kb, run_cli, base)
    _amend_last_decision(
        kb, record=("withdrawn: true\n", ""), message=("Vouch-Withdrawn: true\n", "")
    )  # the record and trailer gone, the event still proposal.withdraw
    all_fail(kb, run_cli, base, "proposal.withdraw")
    _amend_last_decision(kb, record=("reason:", "withdrawn: true\nreason:"), message=("", ""))
    all_fail(kb, run_cli, base, "Vouch-Withdrawn: (none) but its record withdrawn: True")
