"""The demo: a realistic knowledge base in a new git repository, built from the bundled
examples, narrated step by step (issue 16.5).

An agent registers the example documents and proposes claims, two entities, a relation
and a page; it may not approve its own work; a person approves most of it in one call,
rejects one claim with a reason and replaces another by a fuller one; then a search, a
context pack, `vouch why` and `vouch doctor`. Offline, on the embedded model.

Yields narration lines (the core never prints); `vouch demo` echoes them.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from vouch import git
from vouch.errors import VouchError
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.initkb import init_kb

AUTHOR = "demo-agent"
REVIEWER = "Demo Reviewer"


def example_files() -> list[Path]:
    root = resources.files("vouch").joinpath("examples", "sources")
    return sorted(Path(str(p)) for p in root.iterdir() if p.is_file())


def run_demo(repo: Path) -> Iterator[str]:
    number = itertools.count(1)
    repo.mkdir(parents=True, exist_ok=True)
    git.init_repo(repo)
    plumbing = git.Repo(repo)
    plumbing.set_config("user.name", REVIEWER)
    plumbing.set_config("user.email", "reviewer@example.invalid")
    result = init_kb(repo, AUTHOR)
    yield f"{next(number)}. vouch init → {result.root} (committed: {', '.join(result.files)})"

    # the agent is a declared agent (its own principal: it authors its proposals); the
    # reviewer is the person running the demo, as git knows them (its operator)
    agent = CallContext(kb_path=str(repo), agent=AUTHOR)
    reviewer = CallContext(kb_path=str(repo))
    yield f"{next(number)}. vouch source add — the agent registers the example documents:"
    docs: dict[str, str] = {}
    for path in example_files():
        reg = ops.invoke(
            agent,
            "kb.register_source",
            {
                "content": path.read_text(encoding="utf-8"),
                "locator": f"examples/{path.name}",
                "title": path.name,
            },
        )
        docs[path.name] = reg["id"]
        yield f"   {reg['id'][:12]}  {path.name}"
    status = ops.invoke(agent, "kb.status")
    counts = ", ".join(f"{v} {k}" for k, v in status["counts"].items() if v)
    yield f"{next(number)}. vouch status → {counts}; {status['pending']} pending"

    proposed = yield from _agent_proposes(agent, docs, number)
    yield from _person_decides(reviewer, agent, proposed, docs, number)
    yield from _reading(reviewer, proposed, number)


def _agent_proposes(
    agent: CallContext, docs: dict[str, str], number: Iterator[int]
) -> Generator[str, None, dict[str, dict[str, Any]]]:
    """Narrates the proposals; returns them by name, each with its `object_id`."""
    runbook, notes, incident = (
        docs["deploy-runbook.md"],
        docs["architecture-notes.md"],
        docs["incident-2026-03.txt"],
    )
    out: dict[str, dict[str, Any]] = {}

    def propose(key: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if any(p.name == "rationale" for p in ops.get(method).params):
            params = {"rationale": _WHY[key], **params}
        made = ops.invoke(agent, method, params)
        kind = method.removeprefix("kb.propose_")
        out[key] = {**made, "object_id": made[f"{kind}_id"]}
        return out[key]

    yield f"{next(number)}. The agent ({AUTHOR}) proposes, each proposal a branch:"
    claims = {
        "rollback": ("Rollbacks of the billing service do not need a review.", f"{runbook}:L8"),
        "storage": ("The billing service stores invoices in PostgreSQL 15.", f"{notes}:L5"),
        "idempotent": (
            "Every consumer of payments.events must be idempotent by event id.",
            f"{incident}:L8",
        ),
        "fridays": ("Deploys of the billing service may happen on Fridays.", f"{runbook}:L14"),
    }
    for key, (text, evidence) in claims.items():
        params = {"text": text, "evidence": [evidence], "type": "fact"}
        made = propose(key, "kb.propose_claim", params)
        yield f"   claim     {made['object_id']}  (cites {evidence[:12]}…{evidence[64:]})"
    billing = propose(
        "billing",
        "kb.propose_entity",
        {"name": "Billing service", "type": "system", "aliases": ["billing"]},
    )
    postgres = propose("postgres", "kb.propose_entity", {"name": "PostgreSQL", "type": "tool"})
    for made in (billing, postgres):
        yield f"   entity    {made['object_id']}"
    rel = propose(
        "depends",
        "kb.propose_relation",
        {
            "source": billing["object_id"],
            "relation": "depends_on",
            "target": postgres["object_id"],
            "evidence": [f"{notes}:L5"],
        },
    )
    yield f"   relation  Billing service depends_on PostgreSQL  ({rel['object_id']})"
    page = propose(
        "page",
        "kb.propose_page",
        {
            "title": "Billing service",
            "type": "entity",
            "body": _PAGE,
            "claims": [out[k]["object_id"] for k in ("rollback", "storage", "idempotent")],
            "entities": [billing["object_id"]],
            "sources": [runbook, notes],
        },
    )
    yield f"   page      {page['object_id']}  (waits for the claims and the entity it names)"
    pending = ops.invoke(agent, "kb.list_pending")
    yield f"{next(number)}. vouch pending → {len(pending)} open proposals"
    try:
        ops.invoke(agent, "kb.approve", {"proposal_id": out["rollback"]["proposal_id"]})
        refused = "approved (!)"
    except VouchError as exc:
        refused = f"refused [{exc.code}]: no one approves their own proposal"
    yield f"{next(number)}. vouch approve (as {AUTHOR}) → {refused}"
    return out


def _person_decides(
    reviewer: CallContext,
    agent: CallContext,
    proposed: dict[str, dict[str, Any]],
    docs: dict[str, str],
    number: Iterator[int],
) -> Iterator[str]:
    for made in proposed.values():  # `vouch show`: the reviewer reads each, pinning it
        ops.invoke(reviewer, "kb.read_proposal", {"id": made["proposal_id"]})
    yield (
        f"{next(number)}. vouch show … (as {REVIEWER}) → each proposal read with its cited "
        "lines; showing pins the commit an approval may land"
    )
    wanted = [proposed[k]["proposal_id"] for k in proposed if k != "fridays"]
    approved = ops.invoke(
        reviewer,
        "kb.approve",
        {"proposal_id": wanted[0], "together": wanted[1:], "reason": "checked the sources"},
    )
    landed = approved.get("approved") or [approved]
    yield (
        f"{next(number)}. vouch approve … (as {REVIEWER}) → {len(landed)} proposals merged "
        "together, dependencies first (entities and claims before the relation and page)"
    )
    fridays = proposed["fridays"]["proposal_id"]
    ops.invoke(
        reviewer,
        "kb.reject",
        {"proposal_id": fridays, "reason": "the runbook says no deploys on Friday afternoons"},
    )
    yield f"{next(number)}. vouch reject {fridays} → rejected, with the reason on record"

    old = proposed["rollback"]["object_id"]
    fuller_made = ops.invoke(
        agent,
        "kb.propose_claim",
        {
            "text": "Rollbacks of the billing service need neither a review nor a migration "
            "rollback.",
            "evidence": [f"{docs['deploy-runbook.md']}:L8-L10"],
            "type": "fact",
            "rationale": "the runbook's whole rollback section",
        },
    )
    fuller = {**fuller_made, "object_id": fuller_made["claim_id"]}
    ops.invoke(reviewer, "kb.read_proposal", {"id": fuller["proposal_id"]})
    ops.invoke(reviewer, "kb.approve", {"proposal_id": fuller["proposal_id"]})
    ops.invoke(
        reviewer,
        "kb.supersede",
        {"old_id": old, "new_id": fuller["object_id"], "reason": "a fuller statement"},
    )
    proposed["fuller"] = fuller
    yield (
        f"{next(number)}. vouch supersede {old} {fuller['object_id']} → the old claim is "
        "kept, marked superseded and hidden from search"
    )
    report = ops.invoke(reviewer, "kb.audit_verify")
    yield (
        f"{next(number)}. vouch audit --verify → {'OK' if report['ok'] else 'BROKEN'}, "
        f"{report['events']} events, each chained to the one before"
    )


def _reading(
    reviewer: CallContext, proposed: dict[str, dict[str, Any]], number: Iterator[int]
) -> Iterator[str]:
    question = "how do I roll back a bad release"
    hits = ops.invoke(reviewer, "kb.search", {"query": question, "limit": 3})
    yield f'{next(number)}. vouch search "{question}" → best first:'
    for hit in hits:
        title = hit["source"]["title"] + (
            f" §{hit['source']['section']}" if hit["source"]["section"] else ""
        )
        yield f"   [{hit['score']:.3f}] {hit['kind']:<6} {title}"
    task = "fix the billing rollback script"
    pack = ops.invoke(reviewer, "kb.context", {"task": task, "max_chars": 1500})
    kinds = ", ".join(sorted({i["kind"] for i in pack["items"]}))
    yield (
        f'{next(number)}. vouch context "{task}" → {len(pack["items"])} items ({kinds}) '
        "with their citations, ready for a prompt"
    )
    claim = proposed["fuller"]["object_id"]
    why = ops.invoke(reviewer, "kb.why", {"id": claim})
    yield (
        f"{next(number)}. vouch why {claim} → proposed by {why['proposed']['proposer']}, "
        f"approved by {why['approved']['approver']}, "
        f"{len(why['evidence'])} evidence span(s), supersedes {len(why['supersedes'])}"
    )
    doctor = ops.invoke(reviewer, "kb.doctor")
    yield (
        f"{next(number)}. vouch doctor → {doctor['verdict']}: "
        f"{doctor['errors']} errors, {doctor['warnings']} warnings"
    )


_WHY = {
    "rollback": "stated in the runbook's rollback section",
    "storage": "the architecture notes' storage section",
    "idempotent": "the incident review's follow-up",
    "fridays": "deploys seem to happen any day",
    "billing": "the system the documents are about",
    "postgres": "where invoices live",
    "depends": "the architecture notes: invoices are stored in PostgreSQL",
    "page": "one page that gathers what we know about billing",
}

_PAGE = """# Billing service

Owned by the billing team. Deployed with `ship` from main; rollbacks need no review.

## Storage

Invoices live in PostgreSQL 15.

## Payments events

Consumers of `payments.events` must be idempotent by event id (incident, March 2026).
"""
